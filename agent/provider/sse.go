package provider

import (
	"bufio"
	"bytes"
	"io"
	"unsafe"
)

// The SDKs' own stream decoders cost ~18 µs and ~45 allocations per event
// (reflective union decoding), which alone would eat most of the CPU budget
// of a 120-delta answer. So we read the SSE body ourselves with a reused
// buffer and gjson lookups (~1 µs per event); conformance_stream_test.go
// checks that we extract what the SDKs' decoders do.

// sseReader reads server-sent events. The slices it returns are valid until
// the next call.
type sseReader struct {
	r     *bufio.Reader
	event []byte
	data  []byte
	long  []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 16<<10), data: make([]byte, 0, 1024)}
}

// next returns the next event's name and data; io.EOF after the last one.
func (s *sseReader) next() (event, data []byte, err error) {
	s.event, s.data = s.event[:0], s.data[:0]
	has := false
	for {
		line, err := s.line()
		if err != nil {
			if err == io.EOF && has {
				return s.event, s.data, nil
			}
			return nil, nil, err
		}
		if len(line) == 0 {
			if has {
				return s.event, s.data, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte{':'})
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "event":
			s.event = append(s.event[:0], value...)
			has = true
		case "data":
			if len(s.data) > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			has = true
		}
	}
}

// line returns the next line without its line ending.
func (s *sseReader) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}

// str views b as a string without copying. Only for lookups done before b
// is reused; keep results with strings.Clone or textBuf.
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// textBuf accumulates streamed text and hands out strings that alias its
// bytes, so a delta costs no allocation of its own. It only ever appends:
// bytes once written are never modified, so every string handed out stays
// valid when the buffer grows into a new array.
type textBuf struct{ b []byte }

func (t *textBuf) add(s string) string {
	if s == "" {
		return ""
	}
	start := len(t.b)
	t.b = append(t.b, s...)
	return unsafe.String(&t.b[start], len(s))
}

func (t *textBuf) String() string { return str(t.b) }

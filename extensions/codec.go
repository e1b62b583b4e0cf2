package extensions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/zot-editors/zot/extensions/wire"
)

// MaxLineBytes is the longest frame line the host accepts (16 MiB). Longer
// lines are logged and dropped; the extension keeps running.
const MaxLineBytes = 16 << 20

// ErrLineTooLong is returned by the line reader for a line past its limit;
// the rest of that line has been consumed and the next read starts clean.
var ErrLineTooLong = errors.New("frame line longer than the limit")

// DecodeFrame parses one protocol line. It accepts surrounding whitespace
// (a trailing \r from Windows-built extensions included), requires a JSON
// object with a non-empty string "type", and ignores unknown fields.
func DecodeFrame(line []byte) (wire.Frame, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return wire.Frame{}, errors.New("empty line")
	}
	if line[0] != '{' {
		return wire.Frame{}, fmt.Errorf("not a JSON object: %s", preview(line))
	}
	var f wire.Frame
	if err := json.Unmarshal(line, &f); err != nil {
		return wire.Frame{}, fmt.Errorf("invalid JSON frame: %v: %s", err, preview(line))
	}
	if f.Type == "" {
		return wire.Frame{}, fmt.Errorf("frame without a type: %s", preview(line))
	}
	return f, nil
}

// EncodeFrame renders a frame as one line, newline included.
func EncodeFrame(f wire.Frame) ([]byte, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// preview shortens a line for a log message.
func preview(b []byte) string {
	const n = 120
	if len(b) > n {
		return fmt.Sprintf("%q… (%d bytes)", b[:n], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// lineReader reads newline-terminated lines of at most max bytes from a
// bufio.Reader. Unlike bufio.Scanner, a line past the limit is not fatal:
// it is consumed, reported as ErrLineTooLong, and reading continues.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 2<<10), max: max} // longer lines accumulate in buf
}

// next returns the next line without its newline. The slice is valid until
// the following call. At EOF a final unterminated line is returned first.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+1 { // +1: the newline itself
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, ErrLineTooLong
			}
			return bytes.TrimSuffix(lr.buf, []byte{'\n'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if tooLong {
				return nil, ErrLineTooLong
			}
			if len(lr.buf) > 0 {
				// The final line lacks its newline; hand it out, and
				// report the error on the next call.
				line := lr.buf
				lr.buf = nil
				return line, nil
			}
			return nil, err
		}
	}
}

// shrink releases a huge buffer after a huge line, so one 16 MiB frame
// does not pin 16 MiB for the extension's lifetime.
func (lr *lineReader) shrink() {
	if cap(lr.buf) > 1<<20 {
		lr.buf = nil
	}
}

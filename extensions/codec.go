package extensions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

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
		return wire.Frame{}, fmt.Errorf("invalid JSON frame: %w: %s", err, preview(line))
	}
	if f.Type == "" {
		return wire.Frame{}, fmt.Errorf("frame without a type: %s", preview(line))
	}
	return f, nil
}

// errBadHello marks a first frame that is a hello zot cannot read.
var errBadHello = errors.New("malformed hello")

// badHello reports, for a line that failed to decode (err), whether it is
// a hello, and then what is wrong with it, naming the field: a hello
// with, say, "capabilities" as an object is a clear error at once rather
// than a skipped line and a "no hello" a minute later.
func badHello(line []byte, err error) error {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &head) != nil || head.Type != wire.TypeHello {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%w: %q must be %s, not %s", errBadHello, te.Field, jsonKindOf(te.Type), withArticle(te.Value))
	}
	return fmt.Errorf("%w: %v", errBadHello, errors.Unwrap(err))
}

// jsonKindOf says in JSON's words what a Go type reads.
func jsonKindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKindOf(t.Elem())
	}
	return "of another type"
}

// withArticle: "object" → "an object" (json.UnmarshalTypeError.Value).
func withArticle(v string) string {
	switch {
	case v == "":
		return "that"
	case strings.HasPrefix(v, "number"):
		return "a " + v
	case strings.ContainsAny(v[:1], "aeiou"):
		return "an " + v
	}
	return "a " + v
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

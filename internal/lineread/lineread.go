// Package lineread reads newline-delimited messages (zot rpc's commands,
// zot acp's JSON-RPC lines) of up to a bound, with one copy of each.
package lineread

import (
	"bufio"
	"bytes"
	"errors"
)

// ErrTooLong reports a line past the bound; it was consumed.
var ErrTooLong = errors.New("line too long")

// Read reads one line and returns it without its "\n" or "\r\n". A line
// longer than max bytes is consumed and reported as ErrTooLong. The
// returned slice has room for at least spare more bytes (a caller that
// puts the newline back does not copy it again). At the end of input the
// last, unterminated line comes with io.EOF.
func Read(r *bufio.Reader, max, spare int) ([]byte, error) {
	// A long line is gathered in pieces and joined once at its final
	// size: growing one slice by append would copy a 16 MiB prompt over
	// and over (about 5× its size in garbage).
	var pieces [][]byte
	total := 0
	for {
		chunk, err := r.ReadSlice('\n')
		if total+len(chunk) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err == nil {
				err = ErrTooLong
			}
			return nil, err
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			pieces = append(pieces, bytes.Clone(chunk))
			total += len(chunk)
			continue
		}
		buf := make([]byte, 0, total+len(chunk)+spare)
		for _, p := range pieces {
			buf = append(buf, p...)
		}
		buf = append(buf, chunk...)
		if n := len(buf); n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
			if n > 1 && buf[n-2] == '\r' {
				buf = buf[:n-2]
			}
		}
		return buf, err
	}
}

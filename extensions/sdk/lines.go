package sdk

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its "\n" (or "\r\n"). A line
// longer than limit bytes is consumed and reported as errLineTooLong; the
// reader stays usable. A final line without a newline is returned before
// io.EOF.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		frag, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > limit+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			if errors.Is(err, io.EOF) && len(line) > 0 && !tooLong {
				return trimEOL(line), nil
			}
			return nil, err
		case tooLong:
			return nil, errLineTooLong
		}
		line = trimEOL(line)
		if len(line) > limit {
			return nil, errLineTooLong
		}
		return line, nil
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// serial runs queued functions one at a time, in order, on a goroutine
// of its own that lives while the queue is non-empty. The queue is
// unbounded so the reader never blocks on a slow handler.
type serial struct {
	mu      sync.Mutex
	q       []func()
	running bool
}

func (s *serial) push(f func()) {
	s.mu.Lock()
	s.q = append(s.q, f)
	if s.running {
		s.mu.Unlock()
		return
	}
	s.running = true
	s.mu.Unlock()
	go s.drain()
}

func (s *serial) drain() {
	for {
		s.mu.Lock()
		if len(s.q) == 0 {
			s.running = false
			s.q = nil
			s.mu.Unlock()
			return
		}
		f := s.q[0]
		s.q[0] = nil
		s.q = s.q[1:]
		s.mu.Unlock()
		f()
	}
}

package server

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/zot-editors/zot/internal/syncbuf"
	"go.lsp.dev/jsonrpc2"
)

func frameOf(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// readAll reads messages until the input ends and returns their methods
// (or response ids) and what the stream answered by itself.
func readAll(t testing.TB, input string, max int) ([]string, string) {
	var out syncbuf.Buffer
	s := newFrameStream(strings.NewReader(input), &out, func(string, ...any) {})
	if max > 0 {
		s.max = max
	}
	var got []string
	for {
		m, _, err := s.Read(context.Background())
		if err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				t.Fatalf("Read: %v", err)
			}
			break
		}
		switch m := m.(type) {
		case jsonrpc2.Request:
			got = append(got, m.Method())
		case *jsonrpc2.Response:
			got = append(got, fmt.Sprintf("response %v", m.ID()))
		}
	}
	s.out.close()
	return got, out.String()
}

func TestFramingRecovers(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"zot/ping"}`
	input := strings.Join([]string{
		frameOf(ping),
		"\r\n",                        // stray blank line
		"garbage header line\r\n\r\n", // no Content-Length
		frameOf("{not json"),          // parse error
		frameOf(`{"jsonrpc":"2.0","id":2.5,"method":"x"}`),                              // bad id
		frameOf(`{"jsonrpc":"1.0","id":3,"method":"x"}`),                                // bad version
		frameOf(`{"jsonrpc":"2.0","method":"n","params":{}}`),                           // fine notification
		"Content-Length: -4\r\n\r\n",                                                    // bad length
		fmt.Sprintf("content-length: %d\r\nContent-Type: x\r\n\r\n%s", len(ping), ping), // case and extra header
		frameOf(strings.Repeat("x", 100)),                                               // too big for max=64: skipped
		frameOf(`{"jsonrpc":"2.0","id":"s","result":null}`),
	}, "")
	// A body without trailing newline followed by a header on the same
	// line resynchronises.
	input += `{"x":1}` + frameOf(ping)
	got, answered := readAll(t, input, 64)
	want := "zot/ping n zot/ping response s zot/ping"
	if strings.Join(got, " ") != want {
		t.Fatalf("read %q, want %q", strings.Join(got, " "), want)
	}
	for _, w := range []string{`"id":null,"error":{"code":-32700`, `"id":2.5,"error":{"code":-32600`, `"id":3,"error":{"code":-32600`, "larger than the 64 byte limit"} {
		if !strings.Contains(answered, w) {
			t.Errorf("no %s in the stream's answers:\n%s", w, answered)
		}
	}
}

func TestOutQueueCoalescesAndFlushes(t *testing.T) {
	var out syncbuf.Buffer
	q := newOutQueue(&out)
	for i := 0; i < 1000; i++ {
		q.writeFrame([]byte(fmt.Sprintf(`{"n":%d}`, i)))
	}
	q.close()
	got := out.String()
	if strings.Count(got, "Content-Length: ") != 1000 || !strings.HasSuffix(got, `{"n":999}`) {
		t.Fatalf("output: %d frames, ends %q", strings.Count(got, "Content-Length: "), got[len(got)-20:])
	}
	if _, err := q.writeFrame([]byte("{}")); err == nil {
		t.Fatal("write after close succeeded")
	}
}

func FuzzFraming(f *testing.F) {
	f.Add([]byte(frameOf(`{"jsonrpc":"2.0","id":1,"method":"zot/ping"}`)))
	f.Add([]byte("Content-Length: 3\r\n\r\n{}}Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"))
	f.Add([]byte("\r\n\r\n\r\nContent-Length:\r\n\r\n"))
	f.Add([]byte(frameOf(`{"jsonrpc":"2.0","id":[1],"method":"x"}`)))
	f.Add([]byte(frameOf(`[{"jsonrpc":"2.0","id":1,"method":"x"}]`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Must terminate (the input is finite) and never panic.
		readAll(t, string(data), 1<<16)
	})
}

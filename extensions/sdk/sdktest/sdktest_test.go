package sdktest

import (
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/extensions/wire"
)

// recorder is a testing.TB whose Fatal records the message and ends the
// calling goroutine, so the helpers' own failures can be checked.
type recorder struct {
	testing.TB
	mu    sync.Mutex
	fatal string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	panic(r)
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// failure runs f and returns what it failed with ("" when it did not).
func failure(r *recorder, f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil && v != any(r) {
			panic(v)
		}
		r.mu.Lock()
		msg = r.fatal
		r.mu.Unlock()
	}()
	f()
	return ""
}

// script is an in-process extension that writes fixed output and then
// waits for its stdin to close.
type script string

func (s script) Serve(in io.Reader, out io.Writer) error {
	io.WriteString(out, string(s))
	io.Copy(io.Discard, in)
	return nil
}

func TestExpectNamesTheWrongFrame(t *testing.T) {
	r := &recorder{TB: t}
	h := Start(r, script(`{"type":"hello","name":"x","version":"1"}`+"\n"))
	if msg := failure(r, func() { h.Expect(wire.TypeReady) }); !strings.Contains(msg, "got hello frame") || !strings.Contains(msg, "want ready") {
		t.Fatalf("failure %q", msg)
	}
}

func TestNextRejectsJunk(t *testing.T) {
	r := &recorder{TB: t}
	h := Start(r, script("not json\n"))
	if msg := failure(r, func() { h.Next() }); !strings.Contains(msg, `wrote a bad frame "not json\n"`) {
		t.Fatalf("failure %q", msg)
	}
}

func TestHandshakeAndShutdownOfAProcess(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	// A shell extension: hello, then ready after the ack, then a clean
	// shutdown.
	cmd := exec.Command(sh, "-c", `
echo '{"type":"hello","name":"shx","version":"1","protocol_version":1}'
read ack
echo '{"type":"register_tool","name":"t1","description":"d","parameters":{}}'
echo '{"type":"ready"}'
read shutdown
echo '{"type":"shutdown_ack"}'
`)
	h := Spawn(t, cmd)
	hello, frames := h.Handshake(Ack(t))
	if hello.Name != "shx" {
		t.Fatalf("hello %+v", hello)
	}
	if got := Registered(frames); len(got) != 1 || got[0] != "register_tool:t1" {
		t.Fatalf("registered %v", got)
	}
	h.Shutdown()
}

package rpc

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/syncbuf"
)

func newTestRuntime(t *testing.T, replies ...llmtest.Reply) *agent.Runtime {
	t.Helper()
	llm := llmtest.New(llmtest.Script{Replies: replies, Loop: len(replies) > 0})
	t.Cleanup(llm.Close)
	rt, err := agent.New(agent.Config{Provider: "anthropic", APIKey: "k", BaseURL: llm.URL(), CWD: t.TempDir(), Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// serve runs s.Serve over a pipe; closing the returned writer is the end
// of input. The channel gets Serve's result.
func serve(t *testing.T, s *Server, out io.Writer) (*io.PipeWriter, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), inR, out) }()
	return inW, done
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("Serve did not return")
		return nil
	}
}

// An extension's send_message while idle (StartPrompt) after the input
// ended is refused with an error the extension sees; it must not panic
// (it used to send on the closed job channel).
func TestStartPromptAfterInputEndedIsRefused(t *testing.T) {
	s := New(newTestRuntime(t), Options{})
	in, done := serve(t, s, io.Discard)
	in.Close()
	if err := wait(t, done); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	err := s.StartPrompt("run this")
	if err == nil || !strings.Contains(err.Error(), "input has ended") {
		t.Fatalf("StartPrompt after the end of input: %v; want an error saying the input has ended", err)
	}
}

// StartPrompt racing the end of input (an extension sending while stdin
// closes): every call either is refused or its run ends before Serve
// returns; none panics.
func TestStartPromptRacingEndOfInput(t *testing.T) {
	s := New(newTestRuntime(t, llmtest.TextReply("ok")), Options{})
	var out syncbuf.Buffer
	in, done := serve(t, s, &out)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if err := s.StartPrompt("hi"); err != nil {
					if strings.Contains(err.Error(), "not serving") {
						continue // Serve has not started yet
					}
					if !strings.Contains(err.Error(), "input has ended") && !strings.Contains(err.Error(), "queue full") {
						t.Errorf("StartPrompt: %v", err)
					}
					if strings.Contains(err.Error(), "input has ended") {
						return
					}
					continue
				}
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		}()
	}
	in.Close()
	if err := wait(t, done); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	wg.Wait()
	if got := strings.Count(out.String(), `"type":"done"`); got != accepted {
		t.Fatalf("%d runs accepted, %d ended with done", accepted, got)
	}
}

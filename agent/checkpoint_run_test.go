package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/testenv"
)

// waitLimit bounds a wait for an event that must come; reaching it fails.
const waitLimit = 30 * time.Second

// heldCheckpoints is a runtime with checkpoints whose prompt recording
// blocks until release is closed: started reports it began, awaiting that
// something waits for it.
type heldCheckpoints struct {
	rt       *agent.Runtime
	cwd      string
	started  chan struct{}
	awaiting chan struct{}
	release  chan struct{}
	released sync.Once
}

// free ends the hold (once; a failed test's cleanup frees it too).
func (h *heldCheckpoints) free() { h.released.Do(func() { close(h.release) }) }

func newHeldCheckpoints(t *testing.T, replies ...llmtest.Reply) *heldCheckpoints {
	t.Helper()
	return newHeldCheckpointsWith(t, nil, replies...)
}

func newHeldCheckpointsWith(t *testing.T, hooks func(cwd string) agent.Hooks, replies ...llmtest.Reply) *heldCheckpoints {
	t.Helper()
	testenv.NeedCommand(t, "git", "the checkpoint store")
	// Checked last (cleanups run last-in first-out): nothing of the
	// runtime, its recording or the model is left.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		// childproc's starter lives with the process (the store's git).
		goleak.VerifyNone(t, ignore, goleak.IgnoreTopFunction("github.com/zot-editors/zot/internal/childproc.starterLoop"))
	})
	srv := llmtest.New(llmtest.Script{Replies: replies})
	t.Cleanup(srv.Close)
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "kept.txt"), []byte("as the prompt found it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Checkpoints: true}
	if hooks != nil {
		cfg.Hooks = hooks(cwd)
	}
	rt, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &heldCheckpoints{rt: rt, cwd: cwd, started: make(chan struct{}, 1), awaiting: make(chan struct{}, 8), release: make(chan struct{})}
	t.Cleanup(func() {
		h.free()
		rt.Close()
	})
	agent.HoldCheckpoints(rt, func(ctx context.Context) {
		h.started <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
		}
	}, func() {
		select {
		case h.awaiting <- struct{}{}:
		default:
		}
	})
	return h
}

// events forwards a run's events to a channel the test can select on.
func events(t *testing.T) func(<-chan agent.Event, error) <-chan agent.Event {
	return func(ch <-chan agent.Event, err error) <-chan agent.Event {
		return forward(t, ch, err)
	}
}

func forward(t *testing.T, ch <-chan agent.Event, err error) <-chan agent.Event {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan agent.Event, 256)
	go func() {
		defer close(out)
		for ev := range ch {
			out <- ev
		}
	}()
	return out
}

// until reads evs until one of type typ; it fails on the run's end or
// at the wait's limit.
func until(t *testing.T, evs <-chan agent.Event, typ, why string) {
	t.Helper()
	limit := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("the run ended without a %s: %s", typ, why)
			}
			if ev.Type == typ {
				return
			}
		case <-limit:
			t.Fatalf("no %s: %s", typ, why)
		}
	}
}

// The prompt's checkpoint is recorded beside the model request (issue
// 37), yet a tool's change is not in it: the model answers while the
// recording is held, and the write tool waits for the recording.
func TestPromptCheckpointRecordsBesideTheModelRequest(t *testing.T) {
	h := newHeldCheckpoints(t,
		llmtest.Reply{Text: "Let me write it.", ToolCalls: []llmtest.ToolCall{{Name: "write", Args: []byte(`{"path":"new.txt","content":"written by the tool\n"}`)}}},
		llmtest.TextReply("Written."))
	evs := events(t)(h.rt.Prompt(context.Background(), "write new.txt", nil))
	select {
	case <-h.started:
	case <-time.After(waitLimit):
		t.Fatal("the prompt's checkpoint was not started")
	}
	// The model's answer streams while the recording is still held.
	until(t, evs, agent.EventTextDelta, "the model request waited for the checkpoint")
	// The tool waits for the recording: it is released when the tool
	// waits, or when the tool ran without waiting (then the checkpoint
	// has the tool's file, below).
	limit := time.After(waitLimit)
wait:
	for {
		select {
		case <-h.awaiting:
			break wait
		case ev, ok := <-evs:
			if !ok {
				t.Fatal("the run ended while its checkpoint was held")
			}
			if ev.Type == agent.EventToolResult {
				break wait
			}
		case <-limit:
			t.Fatal("the write tool neither ran nor waited for the checkpoint")
		}
	}
	h.free()
	until(t, evs, agent.EventDone, "the run did not end")
	if b, err := os.ReadFile(filepath.Join(h.cwd, "new.txt")); err != nil || string(b) != "written by the tool\n" {
		t.Fatalf("the tool did not write new.txt: %q %v", b, err)
	}
	cps, err := h.rt.Checkpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 1 {
		t.Fatalf("checkpoints %+v, want the prompt's", cps)
	}
	diffs, err := h.rt.CheckpointDiff(context.Background(), cps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || diffs[0].Path != "new.txt" {
		t.Fatalf("checkpoint → now differs in %+v; want new.txt only (the checkpoint must be the workspace before the tool)", diffs)
	}
}

// A run without a tool call ends only once its checkpoint is recorded:
// the checkpoints list it when the run is done.
func TestRunEndsAfterItsCheckpoint(t *testing.T) {
	h := newHeldCheckpoints(t, llmtest.TextReply("Hello there."))
	evs := events(t)(h.rt.Prompt(context.Background(), "hi", nil))
	until(t, evs, agent.EventTextDelta, "the model request waited for the checkpoint")
	limit := time.After(waitLimit)
wait:
	for {
		select {
		case <-h.awaiting:
			break wait
		case ev, ok := <-evs:
			if !ok || ev.Type == agent.EventDone {
				t.Fatal("the run ended before its checkpoint was recorded")
			}
		case <-limit:
			t.Fatal("the run's end did not wait for its checkpoint")
		}
	}
	h.free()
	until(t, evs, agent.EventDone, "the run did not end")
	cps, err := h.rt.Checkpoints(context.Background())
	if err != nil || len(cps) != 1 || cps[0].Prompt != "hi" {
		t.Fatalf("checkpoints %+v %v, want the prompt's", cps, err)
	}
}

// An abort while the checkpoint is recorded ends the run and the
// recording (no checkpoint, as an abort during the recording always
// did), and leaves no goroutine.
func TestAbortDuringTheCheckpoint(t *testing.T) {
	h := newHeldCheckpoints(t, llmtest.Reply{Text: "slow answer that goes on", DelayMS: 50})
	evs := events(t)(h.rt.Prompt(context.Background(), "hi", nil))
	until(t, evs, agent.EventTextDelta, "the model request waited for the checkpoint")
	h.rt.Cancel()
	until(t, evs, agent.EventDone, "the aborted run did not end")
	for range evs {
	}
	if h.rt.Busy() {
		t.Fatal("busy after done")
	}
}

// writingInputHook is an extension's input hook that writes a file (it
// intercepts "input" only).
type writingInputHook struct {
	path string
	ran  chan struct{}
}

func (w *writingInputHook) Intercepts(event string) bool { return event == "input" }
func (w *writingInputHook) TransformInput(ctx context.Context, text string) agent.InputDecision {
	os.WriteFile(w.path, []byte("written by the input hook\n"), 0o644)
	w.ran <- struct{}{}
	return agent.InputDecision{}
}
func (w *writingInputHook) BeforeAgentStart(ctx context.Context, prompt, system string) agent.AgentStartDecision {
	return agent.AgentStartDecision{}
}
func (w *writingInputHook) TransformContext(ctx context.Context, msgs []message.Message) []message.Message {
	return nil
}
func (w *writingInputHook) AfterTool(ctx context.Context, call agent.ToolCallInfo, res tools.Result) tools.Result {
	return res
}
func (w *writingInputHook) BeforeTool(ctx context.Context, call agent.ToolCallInfo) agent.ToolDecision {
	return agent.ToolDecision{}
}
func (w *writingInputHook) BeforeTurn(ctx context.Context, step int) agent.TurnDecision {
	return agent.TurnDecision{}
}
func (w *writingInputHook) BeforeAssistantMessage(ctx context.Context, text string) agent.AssistantDecision {
	return agent.AssistantDecision{}
}
func (w *writingInputHook) Observe(agent.Lifecycle) {}

// An extension's input hook runs after the prompt's checkpoint is
// recorded: what it writes is not in the checkpoint.
func TestInputHookWaitsForTheCheckpoint(t *testing.T) {
	hook := &writingInputHook{ran: make(chan struct{}, 1)}
	h := newHeldCheckpointsWith(t, func(cwd string) agent.Hooks {
		hook.path = filepath.Join(cwd, "hooked.txt")
		return hook
	}, llmtest.TextReply("Hello."))
	evs := events(t)(h.rt.Prompt(context.Background(), "hi", nil))
	// Released when the hook waits, or when it ran without waiting.
	select {
	case <-h.awaiting:
	case <-hook.ran:
	case <-time.After(waitLimit):
		t.Fatal("the input hook neither ran nor waited for the checkpoint")
	}
	h.free()
	until(t, evs, agent.EventDone, "the run did not end")
	cps, err := h.rt.Checkpoints(context.Background())
	if err != nil || len(cps) != 1 {
		t.Fatalf("checkpoints %+v %v, want the prompt's", cps, err)
	}
	diffs, err := h.rt.CheckpointDiff(context.Background(), cps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || diffs[0].Path != "hooked.txt" {
		t.Fatalf("checkpoint → now differs in %+v; want hooked.txt only (the checkpoint must be the workspace before the input hook)", diffs)
	}
}

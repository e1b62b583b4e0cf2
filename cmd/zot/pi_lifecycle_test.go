package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/session"
)

// pi.registerProvider with its own streamSimple
// (extensions/testdata/piext/lifecycle.ts) over real zot rpc: its model is
// listed and selected with --model, one answer streams thinking, text, a
// tool call and usage through provider_delta / provider_result, the tool
// runs and the provider answers its result (the system prompt reached
// it); the stream's error event is the turn's error; an abort reaches
// streamSimple's AbortSignal; a compaction during that run
// is refused saying so; pi's api/baseUrl form without code is not
// registered; the extension selects its model from ctx.modelRegistry
// with pi.setModel; unregisterProvider takes the model away.
func TestRPCPiProviderStreamSimple(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t)
	e.dumpExtLogs()
	p := e.startRPC(rt, "--model", "lc/lc-1", "-e", piTestdata("lifecycle.ts"))

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "echo please"})
	frames := p.until(isType("done"))
	var deltas []string
	for _, f := range frames {
		if f["type"] == "text_delta" {
			deltas = append(deltas, fmt.Sprint(f["delta"]))
		}
	}
	if got := strings.Join(deltas, "|"); !strings.HasPrefix(got, "let me| echo|") || !strings.Contains(strings.Join(deltas, ""), "tool said: echoed from lc (system given)") {
		t.Fatalf("text deltas %q (%v)\nstderr: %s", got, types(frames), p.errb.String())
	}
	if f := find(frames, "thinking_delta"); f == nil || f["text"] != "pondering" {
		t.Fatalf("the streamed thinking: %v (%v)", f, types(frames))
	}
	if f := find(frames, "tool_use_start"); f == nil || f["name"] != "lc_echo" {
		t.Fatalf("the streamed tool call: %v (%v)", f, types(frames))
	}
	if tr := find(frames, "tool_result"); tr == nil || !strings.Contains(toJSON(tr), "echoed from lc") {
		t.Fatalf("the provider's tool call did not run: %v", tr)
	}
	if u := find(frames, "usage"); u == nil || u["input"] != float64(11) || u["output"] != float64(4) || u["cache_read"] != float64(2) {
		t.Fatalf("usage: %v", u)
	}

	p.send(map[string]any{"id": "2", "type": "get_models"})
	models := toJSON(p.response("2"))
	if !strings.Contains(models, `"id":"lc/lc-1"`) || strings.Contains(models, "lc-plain") {
		t.Fatalf("get_models: want lc/lc-1 and no lc-plain (no streamSimple): %s", models)
	}

	p.send(map[string]any{"id": "2b", "type": "prompt", "message": "now fail"})
	frames = p.until(isType("done"))
	if ev := find(frames, "error"); ev == nil || !strings.Contains(toJSON(ev), "lc upstream is down") {
		t.Fatalf("the provider's error: %v (%v)", ev, types(frames))
	}

	// A run the provider holds until its AbortSignal fires.
	p.send(map[string]any{"id": "3", "type": "prompt", "message": "wait for it"})
	p.until(func(m map[string]any) bool {
		return m["type"] == "text_delta" && strings.HasPrefix(fmt.Sprint(m["delta"]), "wait")
	})
	if got := p.commandNotify("4", "lc-compact", "", "lc compact"); !strings.Contains(got, "cannot start during a run") {
		t.Fatalf("ctx.compact during a run: %q", got)
	}
	p.send(map[string]any{"id": "5", "type": "abort"})
	var aborted, done bool
	p.until(func(m map[string]any) bool {
		done = done || m["type"] == "done"
		aborted = aborted || m["type"] == "ext_notify" && m["message"] == "lc provider: aborted"
		return done && aborted
	})

	// The extension selects its own model from ctx.modelRegistry.
	p.send(map[string]any{"id": "5b", "type": "set_model", "model": "claude-sonnet-4-5"})
	p.response("5b")
	if got := p.commandNotify("5c", "lc-use", "", "lc model"); got != "lc model: ok=true lc/lc-1 LC One" {
		t.Fatalf("pi.setModel of its provider's model: %q", got)
	}
	p.send(map[string]any{"id": "5d", "type": "get_state"})
	if d, _ := p.response("5d")["data"].(map[string]any); d["model"] != "lc/lc-1" {
		t.Fatalf("get_state after pi.setModel: %v", d)
	}

	p.command("6", "lc-unprovide", "")
	p.send(map[string]any{"id": "7", "type": "get_models"})
	if models := toJSON(p.response("7")); strings.Contains(models, "lc/lc-1") {
		t.Fatalf("unregisterProvider: lc/lc-1 still listed: %s", models)
	}
}

// ctx.compact, ctx.switchSession, ctx.reload and ctx.shutdown of a pi
// extension (lifecycle.ts) over real zot rpc: the compaction runs as
// /compact (its customInstructions reach the summary request), its
// session_compact says fromExtension, and onComplete gets the summary; switchSession resumes a session file
// (session_before_switch may refuse it, session_switch follows), a
// missing file or one that is not a session is an error and the session
// stays; reload resolves in the old runtime, which hears
// session_shutdown, and a new one answers after it; shutdown ends zot rpc
// cleanly after session_shutdown.
func TestRPCPiSessionLifecycle(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.TextReply("noted apples"),
		llmtest.TextReply("hi there"),
		llmtest.TextReply("SUMMARY: hello and hi"),
	)
	e.dumpExtLogs()
	// A stored session to switch to.
	if _, se, code := e.runZot(e.args("-p", "remember apples")...); code != 0 {
		t.Fatalf("zot -p: %d\n%s", code, se)
	}
	infos, err := session.ListWorkspace(e.home, e.cwd)
	if err != nil || len(infos) != 1 {
		t.Fatalf("the stored session: %v %v", infos, err)
	}
	stored := infos[0].Path

	shutdownFile := filepath.Join(t.TempDir(), "shutdown")
	p := e.startRPC(append(rt, "LC_SHUTDOWN_FILE="+shutdownFile), "-e", piTestdata("lifecycle.ts"))
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hello"})
	p.until(isType("done"))

	// compact: as /compact, with the extension's instructions.
	p.send(map[string]any{"id": "2", "type": "command", "name": "lc-compact", "args": "keep the greetings"})
	var compacted bool
	var completed, event string
	p.until(func(m map[string]any) bool {
		compacted = compacted || m["type"] == "compact_done"
		if s := fmt.Sprint(m["message"]); m["type"] == "ext_notify" {
			if strings.HasPrefix(s, "lc session_compact") {
				event = s
			} else if strings.HasPrefix(s, "lc compact") {
				completed = s
			}
		}
		return completed != "" && event != ""
	})
	if !compacted || completed != "lc compacted: SUMMARY: hello and hi" || event != "lc session_compact fromExtension=true" {
		t.Fatalf("compact_done %v; onComplete: %q; session_compact: %q", compacted, completed, event)
	}
	reqs := e.llm.Requests()
	if last := toJSON(reqs[len(reqs)-1].Body); !strings.Contains(last, "keep the greetings") {
		t.Fatalf("the summary request lacks the customInstructions: %s", last)
	}
	p.send(map[string]any{"id": "3", "type": "get_messages"})
	if msgs := toJSON(p.response("3")); !strings.Contains(msgs, "SUMMARY: hello and hi") {
		t.Fatalf("the transcript after ctx.compact: %s", msgs)
	}

	// switchSession: refused by session_before_switch, then done.
	p.commandNotify("4", "lc-refuse", "on", "lc refuse")
	if got := p.commandNotify("5", "lc-switch", stored, "lc switch"); got != "lc switch: cancelled=true" {
		t.Fatalf("a refused switch: %q", got)
	}
	p.commandNotify("6", "lc-refuse", "off", "lc refuse")
	p.send(map[string]any{"id": "7", "type": "command", "name": "lc-switch", "args": stored})
	var switched, answered string
	p.until(func(m map[string]any) bool {
		if s := fmt.Sprint(m["message"]); m["type"] == "ext_notify" {
			if strings.HasPrefix(s, "lc switched") {
				switched = s
			} else if strings.HasPrefix(s, "lc switch") {
				answered = s
			}
		}
		return switched != "" && answered != ""
	})
	if switched != "lc switched: reason=resume entries=2" || answered != "lc switch: cancelled=false" {
		t.Fatalf("switchSession: %q / %q", switched, answered)
	}
	p.send(map[string]any{"id": "8", "type": "get_messages"})
	if msgs := toJSON(p.response("8")); !strings.Contains(msgs, "remember apples") || strings.Contains(msgs, "SUMMARY") {
		t.Fatalf("the transcript after switchSession: %s", msgs)
	}
	missing := filepath.Join(t.TempDir(), "nope.jsonl")
	if got := p.commandNotify("9", "lc-switch", missing, "lc switch"); !strings.Contains(got, "lc switch error: no session file") {
		t.Fatalf("switching to a missing file: %q", got)
	}
	notes := e.write("notes.jsonl", "not a session\n")
	if got := p.commandNotify("9b", "lc-switch", notes, "lc switch"); !strings.Contains(got, "lc switch error: "+notes+" is not a zot session file") {
		t.Fatalf("switching to a file that is not a session: %q", got)
	}
	p.send(map[string]any{"id": "10", "type": "get_messages"})
	if msgs := toJSON(p.response("10")); !strings.Contains(msgs, "remember apples") {
		t.Fatalf("a failed switch lost the session: %s", msgs)
	}

	// reload: resolves in the old runtime; a new one starts (its
	// session_start) and answers the commands after it.
	old := strings.TrimPrefix(p.commandNotify("11", "lc-loaded", "", "lc loaded"), "lc loaded ")
	p.send(map[string]any{"id": "12", "type": "command", "name": "lc-reload"})
	var resolved, started string
	p.until(func(m map[string]any) bool {
		if s := fmt.Sprint(m["message"]); m["type"] == "ext_notify" {
			if strings.HasPrefix(s, "lc reload") {
				resolved = s
			} else if strings.HasPrefix(s, "lc started ") && s != "lc started "+old {
				started = strings.TrimPrefix(s, "lc started ")
			}
		}
		return resolved != "" && started != ""
	})
	if resolved != "lc reload resolved in "+old {
		t.Fatalf("reload: %q", resolved)
	}
	if got := p.commandNotify("13", "lc-loaded", "", "lc loaded"); got != "lc loaded "+started {
		t.Fatalf("after the reload /lc-loaded answered %q, want the new runtime's %s", got, started)
	}
	// The old runtime heard session_shutdown before it stopped (pi's
	// reload); its file goes, for shutdown's check below.
	if b, err := os.ReadFile(shutdownFile); err != nil || string(b) != "session_shutdown\n" {
		t.Fatalf("session_shutdown of the reloaded runtime: %q %v", b, err)
	}
	os.Remove(shutdownFile)

	// shutdown: zot rpc ends cleanly; the extensions heard session_shutdown.
	p.send(map[string]any{"id": "14", "type": "command", "name": "lc-shutdown"})
	frames := p.until(isType("shutdown"))
	if f := frames[len(frames)-1]; f["extension"] != "lifecycle" {
		t.Fatalf("shutdown event: %v", f)
	}
	exited := make(chan error, 1)
	go func() {
		for range p.lines {
		}
		exited <- p.cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("zot rpc after ctx.shutdown: %v\nstderr: %s", err, p.errb.String())
		}
	case <-time.After(60 * time.Second): // a hang, not a timing check
		t.Fatalf("zot rpc did not exit after ctx.shutdown\nstderr: %s", p.errb.String())
	}
	if b, err := os.ReadFile(shutdownFile); err != nil || string(b) != "session_shutdown\n" {
		t.Fatalf("session_shutdown before the exit: %q %v", b, err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
)

// secret is what the redacting extension replaces; its answer streams in
// pieces, so a prefix of it ("SEC") would show a leak of a delta.
const secret = "SECRET-4242"

func redactingReply() llmtest.Reply {
	return llmtest.Reply{Deltas: []string{"The key is SEC", "RET-42", "42, keep it."}}
}

// installRedactor installs an extension that intercepts assistant_message
// and replaces the secret with [redacted].
func (e *env) installRedactor(t *testing.T) {
	e.installGlobalExt("redactor", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "redactor", "-intercept", "assistant_message", "-replace", secret + "=[redacted]"}})
}

// A redacting extension's secret never reaches zot -p's stdout or stderr,
// not even a prefix streamed before the answer was judged, with or
// without --no-yolo (whose approval layer wraps the host); the session
// file keeps the model's original (seed 000: the transcript keeps it).
func TestPrintRedactedAnswerNeverShowsTheSecret(t *testing.T) {
	for _, flags := range [][]string{nil, {"--no-yolo"}} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) { printRedacted(t, flags) })
	}
}

func printRedacted(t *testing.T, flags []string) {
	e := newEnv(t, redactingReply())
	e.installRedactor(t)
	out, errOut, code := e.runZot(e.args(append([]string{"-p", "what is the key?"}, flags...)...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	if out != "The key is [redacted], keep it.\n" {
		t.Fatalf("stdout %q; want only the rewritten answer", out)
	}
	if strings.Contains(errOut, "SEC") {
		t.Fatalf("stderr shows the secret: %s", errOut)
	}
	files, _ := filepath.Glob(filepath.Join(e.home, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "The key is "+secret+", keep it.") {
		t.Fatalf("the session file lacks the original answer:\n%s", data)
	}
}

// zot rpc: no event carries the secret or a prefix of it — the first
// prompt too, whose answer may come while the extension still starts —
// and the answer streams as the rewritten text; get_messages keeps the
// model's original.
func TestRPCRedactedAnswerNeverShowsTheSecret(t *testing.T) {
	e := newEnv(t, redactingReply(),
		llmtest.Reply{Text: "Listing.", ToolCalls: []llmtest.ToolCall{{Name: "ls"}}},
		redactingReply())
	e.installRedactor(t)
	p := e.startRPC(nil)
	check := func(frames []map[string]any) {
		t.Helper()
		text, answer := "", ""
		for _, f := range frames {
			if f["type"] == "assistant_message" {
				answer = toJSON(f) // the last: the answer after the tool
			}
			if strings.Contains(toJSON(f), "SEC") {
				t.Fatalf("an event shows the secret: %v", f)
			}
			if f["type"] == "text_delta" {
				text += f["delta"].(string)
			}
		}
		if !strings.HasSuffix(text, "The key is [redacted], keep it.") {
			t.Fatalf("streamed text %q; want the rewritten answer", text)
		}
		if !strings.Contains(answer, "The key is [redacted], keep it.") {
			t.Fatalf("assistant_message: %s", answer)
		}
	}
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "what is the key?"})
	check(p.until(isType("done")))
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "list, then tell me again"})
	check(p.until(isType("done")))
	p.send(map[string]any{"id": "3", "type": "get_messages"})
	if msgs := toJSON(p.response("3")); strings.Count(msgs, "The key is "+secret) != 2 {
		t.Fatalf("the transcript lacks the model's original answers: %s", msgs)
	}
	if strings.Contains(p.errb.String(), "SEC") {
		t.Fatalf("stderr shows the secret: %s", p.errb.String())
	}
}

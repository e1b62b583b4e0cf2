package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/session/sessiontest"
)

// anthropicRequest is the part of a Messages API request the session tests
// look at.
type anthropicRequest struct {
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Thinking  string          `json:"thinking"`
			Signature string          `json:"signature"`
			Data      string          `json:"data"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Source    *struct {
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"source"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"content"`
	} `json:"messages"`
}

func request(t *testing.T, e *env, i int) anthropicRequest {
	t.Helper()
	reqs := e.llm.Requests()
	if len(reqs) <= i {
		t.Fatalf("the model got %d requests, want more than %d", len(reqs), i)
	}
	var r anthropicRequest
	if err := json.Unmarshal(reqs[i].Raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// checkZotHistory checks that req opens with the fixture's conversation,
// every block in place: prompt and image, the tool call, its result, the
// answer.
func checkZotHistory(t *testing.T, req anthropicRequest) {
	t.Helper()
	ms := req.Messages
	dump, _ := json.Marshal(ms)
	if len(ms) < 5 {
		t.Fatalf("want the fixture's 4 messages and the new prompt, got %s", dump)
	}
	u, a, tr, a2 := ms[0], ms[1], ms[2], ms[3]
	ok := u.Role == "user" && len(u.Content) == 2 && u.Content[0].Text == sessiontest.ZotPrompt &&
		u.Content[1].Type == "image" && u.Content[1].Source != nil && u.Content[1].Source.Data == sessiontest.PNG && u.Content[1].Source.MediaType == "image/png" &&
		a.Role == "assistant" && len(a.Content) == 2 && a.Content[0].Text == "Let me read the notes." &&
		a.Content[1].Type == "tool_use" && a.Content[1].ID == sessiontest.ZotToolCallID && a.Content[1].Name == "read" && string(a.Content[1].Input) == `{"path":"notes.txt"}` &&
		tr.Role == "user" && len(tr.Content) == 1 && tr.Content[0].Type == "tool_result" && tr.Content[0].ToolUseID == sessiontest.ZotToolCallID &&
		len(tr.Content[0].Content) == 1 && tr.Content[0].Content[0].Text == sessiontest.ZotToolResult && !tr.Content[0].IsError &&
		a2.Role == "assistant" && len(a2.Content) == 1 && a2.Content[0].Text == sessiontest.ZotAnswer
	if !ok {
		t.Fatalf("the model did not get zot's conversation whole:\n%s", dump)
	}
}

// A session zot wrote in the terminal continues with -c and --session PATH:
// the model gets the whole conversation, and what we append is still zot's.
func TestZotSessionContinues(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("continued"), llmtest.TextReply("by path"))
	path := sessiontest.WriteZotFixture(t, e.home, e.cwd)
	before, _ := os.ReadFile(path)

	out, errOut, code := e.runZot("sessions", "--cwd", e.cwd)
	if code != 0 || !strings.Contains(out, sessiontest.ZotID) || !strings.Contains(out, sessiontest.ZotPrompt) {
		t.Fatalf("zot sessions: exit %d out %q err %s", code, out, errOut)
	}

	if out, errOut, code := e.runZot(e.args("-c", "-p", "and the colour?")...); code != 0 || strings.TrimSpace(out) != "continued" {
		t.Fatalf("-c: exit %d out %q err %s", code, out, errOut)
	}
	req := request(t, e, 0)
	checkZotHistory(t, req)
	if last := req.Messages[4]; last.Role != "user" || last.Content[0].Text != "and the colour?" {
		t.Fatalf("-c: last message %+v", last)
	}

	// Appended in place, in zot's format; zot's own lines untouched.
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), string(before)) {
		t.Fatalf("-c rewrote zot's lines:\n%s", after)
	}
	f, err := sessiontest.Decode(after)
	if err != nil {
		t.Fatalf("after -c zot cannot read its session: %v", err)
	}
	if n := len(f.Messages); n != 6 || f.Messages[4].Content[0].Text != "and the colour?" || f.Messages[5].Content[0].Text != "continued" {
		t.Fatalf("appended messages: %+v", f.Messages)
	}
	// The cumulative usage continues from zot's.
	if u := f.Usages[len(f.Usages)-1]; len(f.Usages) != 3 || u.Cumulative.InputTokens != 2500+u.Usage.InputTokens || u.Usage.InputTokens == 0 {
		t.Fatalf("usage lines: %+v", f.Usages)
	}
	if files, _ := filepath.Glob(filepath.Join(e.home, "sessions", "*", "*.jsonl")); len(files) != 1 {
		t.Fatalf("-c started another file: %v", files)
	}

	// --session PATH, from another directory.
	other := t.TempDir()
	args := []string{"--api-key", "k", "--base-url", e.llm.URL(), "--cwd", other, "--session", path, "-p", "and now?"}
	if out, errOut, code := e.runZot(args...); code != 0 || strings.TrimSpace(out) != "by path" {
		t.Fatalf("--session: exit %d out %q err %s", code, out, errOut)
	}
	req = request(t, e, 1)
	checkZotHistory(t, req)
	if n := len(req.Messages); n != 7 || req.Messages[5].Content[0].Text != "continued" || req.Messages[6].Content[0].Text != "and now?" {
		t.Fatalf("--session: %d messages", n)
	}
}

// What we write is zot's format to the letter (a strict reader of zot's
// lines accepts every line) and nothing is lost: a thinking signature,
// redacted thinking, a tool call and result, an image, usage.
func TestSessionWeWriteIsZots(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{Thinking: "plan the read", Signature: "sig-plan", RedactedThinking: "REDACTED-DATA",
			ToolCalls: []llmtest.ToolCall{{ID: "toolu_w1", Name: "read", Args: json.RawMessage(`{"path":"notes.txt"}`)}}},
		llmtest.TextReply("it says kiwi"),
		llmtest.TextReply("a red dot"),
		llmtest.TextReply("all there"),
	)
	e.write("notes.txt", "kiwi-42\n")
	if out, errOut, code := e.runZot(e.args("-p", "read the notes")...); code != 0 {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(sessiontest.ZotDir(e.home, e.cwd), "*.jsonl"))
	if len(files) != 1 {
		all, _ := filepath.Glob(filepath.Join(e.home, "sessions", "*", "*"))
		t.Fatalf("want one session in zot's directory for the workspace, got %v (all: %v)", files, all)
	}
	path := files[0]

	// An image, through zot rpc continuing the same file.
	p := e.startRPC(nil, "--session", path)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "and this?", "images": []map[string]string{{"mime_type": "image/png", "data": sessiontest.PNG}}})
	p.until(isType("done"))
	p.in.Close()
	p.cmd.Wait()

	data, _ := os.ReadFile(path)
	f, err := sessiontest.Decode(data)
	if err != nil {
		t.Fatalf("zot cannot read the session we wrote: %v", err)
	}
	if !strings.HasSuffix(filepath.Base(path), "-"+f.Meta.ID[:8]+".jsonl") || f.Meta.Cwd != e.cwd || f.Meta.Provider != "anthropic" || f.Meta.Version == "" || f.Meta.Model == "" {
		t.Fatalf("meta %+v in %s", f.Meta, path)
	}
	var kinds []string
	for _, m := range f.Messages {
		k := m.Role + ":"
		for _, b := range m.Content {
			k += b.Kind + ","
		}
		kinds = append(kinds, k)
	}
	want := "user:text, assistant:reasoning,reasoning,tool_call, tool:tool_result, assistant:text, user:text,image, assistant:text,"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("messages as zot reads them:\n got %s\nwant %s", got, want)
	}
	think, redacted, call := f.Messages[1].Content[0], f.Messages[1].Content[1], f.Messages[1].Content[2]
	result, img := f.Messages[2].Content[0], f.Messages[4].Content[1]
	if think.Summary != "plan the read" || think.EncryptedContent != "sig-plan" || redacted.EncryptedContent != "REDACTED-DATA" ||
		call.ID != "toolu_w1" || call.Name != "read" || string(call.Arguments) != `{"path":"notes.txt"}` ||
		result.CallID != "toolu_w1" || result.IsError || len(result.Content) != 1 || !strings.Contains(result.Content[0].Text, "kiwi-42") ||
		img.MimeType != "image/png" || img.Data != sessiontest.PNG {
		t.Fatalf("blocks: %+v %+v %+v %+v %+v", think, redacted, call, result, img)
	}
	var sum sessiontest.Usage
	for _, u := range f.Usages {
		sum.InputTokens += u.Usage.InputTokens
		sum.OutputTokens += u.Usage.OutputTokens
		if u.Cumulative.InputTokens != sum.InputTokens || u.Cumulative.OutputTokens != sum.OutputTokens {
			t.Fatalf("cumulative %+v after %+v", u.Cumulative, sum)
		}
	}
	if len(f.Usages) != 3 || sum.InputTokens == 0 {
		t.Fatalf("usage lines %+v", f.Usages)
	}

	// Read back: the model gets every block again.
	if out, errOut, code := e.runZot(e.args("--session", path, "-p", "all there?")...); code != 0 || strings.TrimSpace(out) != "all there" {
		t.Fatalf("resume: exit %d out %q err %s", code, out, errOut)
	}
	req := request(t, e, 3)
	a := req.Messages[1].Content
	if len(a) != 3 || a[0].Type != "thinking" || a[0].Thinking != "plan the read" || a[0].Signature != "sig-plan" ||
		a[1].Type != "redacted_thinking" || a[1].Data != "REDACTED-DATA" || a[2].Type != "tool_use" || a[2].ID != "toolu_w1" {
		dump, _ := json.Marshal(req.Messages)
		t.Fatalf("resumed assistant turn lost blocks:\n%s", dump)
	}
	if im := req.Messages[4].Content[1]; im.Type != "image" || im.Source == nil || im.Source.Data != sessiontest.PNG {
		dump, _ := json.Marshal(req.Messages)
		t.Fatalf("resumed image lost:\n%s", dump)
	}
}

// Sessions of our earlier layout are still listed and resumed; resuming
// one migrates it to zot's format and keeps the old file as a backup.
func TestLegacySessionsListedAndResumed(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("fresh"), llmtest.TextReply("followed up"), llmtest.TextReply("again"))
	old := sessiontest.WriteLegacyFixture(t, e.home, e.cwd)
	if out, errOut, code := e.runZot(e.args("-p", "fresh question")...); code != 0 {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	out, errOut, code := e.runZot("sessions", "--cwd", e.cwd)
	if code != 0 || !strings.Contains(out, sessiontest.LegacyID) || !strings.Contains(out, "legacy question") || !strings.Contains(out, "fresh question") {
		t.Fatalf("zot sessions: exit %d out %q err %s", code, out, errOut)
	}

	if out, errOut, code := e.runZot(e.args("-r", sessiontest.LegacyID[:6], "-p", "follow up")...); code != 0 || strings.TrimSpace(out) != "followed up" {
		t.Fatalf("-r legacy: exit %d out %q err %s", code, out, errOut)
	}
	req := request(t, e, 1)
	if len(req.Messages) != 3 || req.Messages[0].Content[0].Text != "legacy question" || req.Messages[1].Content[0].Text != "legacy answer" {
		dump, _ := json.Marshal(req.Messages)
		t.Fatalf("legacy history not sent:\n%s", dump)
	}
	if _, err := os.Stat(old + ".migrated"); err != nil {
		t.Fatalf("legacy file not kept as a backup: %v", err)
	}
	migrated, _ := filepath.Glob(filepath.Join(sessiontest.ZotDir(e.home, e.cwd), "*-"+sessiontest.LegacyID[:8]+".jsonl"))
	if len(migrated) != 1 {
		t.Fatalf("no migrated file in zot's layout: %v", migrated)
	}
	data, _ := os.ReadFile(migrated[0])
	f, err := sessiontest.Decode(data)
	if err != nil || f.Meta.ID != sessiontest.LegacyID || len(f.Messages) != 4 {
		t.Fatalf("migrated file as zot reads it: %+v %v", f, err)
	}

	out, _, _ = e.runZot("sessions", "--cwd", e.cwd)
	if strings.Count(out, sessiontest.LegacyID) != 1 {
		t.Fatalf("after migration the session is listed %d times:\n%s", strings.Count(out, sessiontest.LegacyID), out)
	}
	if out, errOut, code := e.runZot(e.args("-r", sessiontest.LegacyID, "-p", "once more")...); code != 0 || strings.TrimSpace(out) != "again" {
		t.Fatalf("-r migrated: exit %d out %q err %s", code, out, errOut)
	}
	if n := len(request(t, e, 2).Messages); n != 5 {
		t.Fatalf("the migrated session sent %d messages, want 5", n)
	}
}

package session

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/session/sessiontest"
)

var t0 = time.Date(2026, 4, 19, 11, 30, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// every kind of block we hold, as a conversation with a tool turn.
func richTranscript() []message.Message {
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	return []message.Message{
		{Role: message.RoleUser, Time: at(1), Content: []message.Content{message.Text("look at this and read notes.txt"), message.Image("image/png", png)}},
		{Role: message.RoleAssistant, Time: at(2), Content: []message.Content{
			{Type: message.TypeThinking, Text: "the user wants the notes", Signature: "sig-abc"},
			{Type: message.TypeThinking, Redacted: true, Data: "ENCRYPTED=="},
			message.Text("Reading."),
			{Type: message.TypeToolCall, ID: "toolu_1", Name: "read", Args: json.RawMessage(`{"path":"notes.txt"}`)},
			{Type: message.TypeToolCall, ID: "toolu_2", Name: "bash", Args: json.RawMessage(`{"command":"false"}`)},
		}},
		{Role: message.RoleUser, Time: at(3), Content: []message.Content{
			{Type: message.TypeToolResult, CallID: "toolu_1", Content: []message.Content{message.Text("kiwi-42"), message.Image("image/png", png)}},
			{Type: message.TypeToolResult, CallID: "toolu_2", IsError: true, Content: []message.Content{message.Text("exit status 1")}},
		}},
		{Role: message.RoleAssistant, Time: at(4), Content: []message.Content{
			{Type: message.TypeThinking, ID: "rs_9", Text: "openai summary", Signature: "gAAAA-opaque"},
			message.Text("The notes say kiwi-42."),
		}},
	}
}

func TestZotFormatRoundTripsEveryBlock(t *testing.T) {
	dir := t.TempDir()
	w, err := CreateMeta(dir, Meta{Cwd: "/w", Provider: "anthropic", Model: "m", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	want := richTranscript()
	u1 := message.Usage{Input: 100, Output: 20, CacheRead: 5, CacheWrite: 7, CostUSD: 0.25}
	for i := range want {
		if err := w.Append(Entry{Kind: KindMessage, Message: &want[i]}); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			w.Append(Entry{Kind: KindUsage, Usage: &u1})
		}
	}
	total := u1.Add(u1)
	w.Append(Entry{Kind: KindUsage, Usage: &u1, Cumulative: &total})
	w.Close()

	data, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	f, err := sessiontest.Decode(data)
	if err != nil {
		t.Fatalf("zot could not read what we wrote: %v", err)
	}
	if f.Meta.ID != w.ID() || f.Meta.Version != "1.2.3" || f.Meta.Cwd != "/w" || len(f.Messages) != 4 || len(f.Other) != 0 {
		t.Fatalf("strict read: %+v", f)
	}
	if f.Messages[2].Role != "tool" || f.Messages[2].Content[1].Kind != "tool_result" || !f.Messages[2].Content[1].IsError {
		t.Fatalf("tool results: %+v", f.Messages[2])
	}
	if c := f.Usages[1].Cumulative; c.InputTokens != 200 || c.CacheWriteTokens != 14 || c.CostUSD != 0.5 {
		t.Fatalf("cumulative: %+v", f.Usages)
	}

	l, err := Load(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Messages, want) {
		got, _ := json.MarshalIndent(l.Messages, "", " ")
		t.Fatalf("round trip changed the transcript:\n%s", got)
	}
	if l.Usage != total || l.Info.ID != w.ID() || l.Info.Title != "look at this and read notes.txt" || l.Skipped+l.Ignored+l.Repaired != 0 {
		t.Fatalf("loaded %+v usage %+v", l.Info, l.Usage)
	}
}

// Compactions, summaries and titles are our own line types: zot skips them
// (and sees the whole conversation), we replay them.
func TestOurEntriesAreExtraLineTypes(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	full := richTranscript()
	for i := range full {
		w.Append(Entry{Kind: KindMessage, Message: &full[i]})
	}
	summary := message.Message{Role: message.RoleUser, Summary: true, Time: at(5), Content: []message.Content{message.Text("[Summary] kiwi")}}
	w.Append(Entry{Kind: KindCompact, Messages: []message.Message{summary, full[3]}})
	next := message.Message{Role: message.RoleUser, Time: at(6), Content: []message.Content{message.Text("thanks")}}
	w.Append(Entry{Kind: KindMessage, Message: &next})
	w.Append(Entry{Kind: KindTitle, Title: "Kiwi notes"})
	w.Close()

	data, _ := os.ReadFile(w.Path())
	f, err := sessiontest.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Other, []string{"x-compact", "x-title"}) || len(f.Messages) != 5 {
		t.Fatalf("zot sees messages %d, skips %v", len(f.Messages), f.Other)
	}
	l, err := Load(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	want := []message.Message{summary, full[3], next}
	if !reflect.DeepEqual(l.Messages, want) || l.Info.Title != "Kiwi notes" {
		got, _ := json.MarshalIndent(l.Messages, "", " ")
		t.Fatalf("title %q, messages:\n%s", l.Info.Title, got)
	}

	// A fork writes the compacted transcript as message lines; the summary
	// mark survives as an x-summary line before it.
	w2, _ := Create(dir, "/w", "anthropic", "m")
	w2.AppendTranscript(l.Messages, message.Usage{Input: 1})
	w2.Close()
	data, _ = os.ReadFile(w2.Path())
	if f, err := sessiontest.Decode(data); err != nil || len(f.Messages) != 3 || !reflect.DeepEqual(f.Other, []string{"x-summary"}) {
		t.Fatalf("fork as zot reads it: %+v %v", f, err)
	}
	l2, _ := Load(w2.Path())
	if !reflect.DeepEqual(l2.Messages, want) || l2.Usage.Input != 1 {
		t.Fatalf("fork read back: %+v", l2.Messages)
	}
}

// A file as zot writes it (the lines of issue 21), read field by field.
func TestReadsZotsLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "20260419-113000-6f1c2b9e.jsonl")
	lines := []string{
		`{"type":"meta","meta":{"id":"6f1c2b9e-3d4a-4c5b-9e8f-0a1b2c3d4e5f","cwd":"/w","model":"gpt-5.5","provider":"openai","started":"2026-04-19T11:30:00Z","version":"0.9.3"}}`,
		`{"type":"message","message":{"role":"user","content":[{"text":"hi"},{"mime_type":"image/png","data":"AAAA"}],"time":"2026-04-19T11:30:01Z"}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"reasoning_id":"rs_1","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"enc"},{"id":"call_1","name":"read","arguments":"{\"path\":\"a\"}"},{"id":"call_2","name":"ls","arguments":{}}],"time":"2026-04-19T11:30:02Z"}}`,
		`{"type":"usage","usage":{"input_tokens":10,"output_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":0.1},"cumulative":{"input_tokens":10,"output_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":0.1}}`,
		`{"type":"message","message":{"role":"tool","content":[{"call_id":"call_1","content":[{"text":"A"}],"is_error":false}],"time":"2026-04-19T11:30:03Z"}}`,
		`{"type":"message","message":{"role":"tool","content":[{"call_id":"call_2","content":[{"text":"B"}],"is_error":true}],"time":"2026-04-19T11:30:03Z"}}`,
		`{"type":"checkpoint","anything":[1,2]}`,
		`{"type":"message","message":{"role":"system","content":[{"text":"not ours to send"}],"time":"2026-04-19T11:30:03Z"}}`,
		`{"type":"usage","usage":{"input_tokens":20,"output_tokens":3,"cache_read_tokens":1,"cache_write_tokens":0,"cost_usd":0.2},"cumulative":{"input_tokens":30,"output_tokens":5,"cache_read_tokens":1,"cache_write_tokens":0,"cost_usd":0.3}}`,
	}
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []message.Message{
		{Role: "user", Time: at(1), Content: []message.Content{message.Text("hi"), message.Image("image/png", "AAAA")}},
		{Role: "assistant", Time: at(2), Content: []message.Content{
			{Type: message.TypeThinking, ID: "rs_1", Text: "think", Signature: "enc"},
			{Type: message.TypeToolCall, ID: "call_1", Name: "read", Args: json.RawMessage(`{"path":"a"}`)},
			{Type: message.TypeToolCall, ID: "call_2", Name: "ls", Args: json.RawMessage(`{}`)},
		}},
		{Role: "user", Time: at(3), Content: []message.Content{
			{Type: message.TypeToolResult, CallID: "call_1", Content: []message.Content{message.Text("A")}},
			{Type: message.TypeToolResult, CallID: "call_2", IsError: true, Content: []message.Content{message.Text("B")}},
		}},
	}
	if !reflect.DeepEqual(l.Messages, want) {
		got, _ := json.MarshalIndent(l.Messages, "", " ")
		t.Fatalf("read:\n%s", got)
	}
	if l.Info.ID != "6f1c2b9e-3d4a-4c5b-9e8f-0a1b2c3d4e5f" || !l.Info.Created.Equal(t0) || l.Model != "gpt-5.5" || l.Provider != "openai" || l.Info.Title != "hi" {
		t.Fatalf("info %+v", l.Info)
	}
	if l.Usage != (message.Usage{Input: 30, Output: 5, CacheRead: 1, CostUSD: 0.3}) || l.Ignored != 2 || l.Skipped != 0 || l.Repaired != 0 || l.Tail != nil {
		t.Fatalf("usage %+v ignored %d skipped %d repaired %d", l.Usage, l.Ignored, l.Skipped, l.Repaired)
	}
}

func TestLayoutIsZots(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	sum := sha256.Sum256([]byte(cwd))
	if got, want := Dir(home, cwd), filepath.Join(home, "sessions", hex.EncodeToString(sum[:])[:16]); got != want {
		t.Fatalf("Dir = %s, want %s", got, want)
	}
	w, err := Create(Dir(home, cwd), cwd, "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(w.ID()) {
		t.Fatalf("id %q is not a UUID", w.ID())
	}
	name := filepath.Base(w.Path())
	if !regexp.MustCompile(`^\d{8}-\d{6}-` + w.ID()[:8] + `\.jsonl$`).MatchString(name) {
		t.Fatalf("file name %q", name)
	}
	if w2, err := Open(w.Path()); err == nil || w2 != nil {
		t.Fatal("a second writer got the file")
	}
}

func TestLegacySessionsListedAndMigrated(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	old := filepath.Join(LegacyDir(home, cwd), "20260101T100000Z_a1b2c3d4e5f6.jsonl")
	os.MkdirAll(filepath.Dir(old), 0o700)
	os.WriteFile(old, []byte(strings.Join([]string{
		`{"kind":"session","id":"a1b2c3d4e5f6","cwd":"` + cwd + `","created":"2026-01-01T10:00:00Z","provider":"anthropic","model":"m"}`,
		`{"kind":"message","created":"2026-01-01T10:00:01Z","message":{"role":"user","content":[{"type":"text","text":"old question"}],"time":"2026-01-01T10:00:01Z"}}`,
		`{"kind":"message","created":"0001-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"text","text":"old answer"}],"time":"2026-01-01T10:00:02Z"}}`,
		`{"kind":"usage","usage":{"input":3,"output":4,"cache_read":0,"cache_write":0,"cost_usd":0.01}}`,
	}, "\n")+"\n"), 0o600)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	w, _ := Create(Dir(home, cwd), cwd, "anthropic", "m")
	m := message.Message{Role: "user", Time: time.Now(), Content: []message.Content{message.Text("new question")}}
	w.Append(Entry{Kind: KindMessage, Message: &m})
	w.Close()

	infos, err := ListWorkspace(home, cwd)
	if err != nil || len(infos) != 2 || infos[0].Title != "new question" || infos[1].Title != "old question" || infos[1].ID != "a1b2c3d4e5f6" {
		t.Fatalf("listed %+v %v", infos, err)
	}
	if p, err := FindWorkspace(home, cwd, "a1b2"); err != nil || p != old {
		t.Fatalf("find legacy: %s %v", p, err)
	}
	l, err := Load(old)
	if err != nil || !l.Legacy || len(l.Messages) != 2 {
		t.Fatalf("legacy load %+v %v", l, err)
	}
	if _, err := Open(old); err == nil || !strings.Contains(err.Error(), "migrate") {
		t.Fatalf("appending zot lines to a legacy file: %v", err)
	}

	mw, err := Migrate(l, Dir(home, cwd), Meta{Version: "9"})
	if err != nil {
		t.Fatal(err)
	}
	mw.Close()
	if _, err := os.Stat(old + MigratedSuffix); err != nil {
		t.Fatalf("no backup: %v", err)
	}
	data, _ := os.ReadFile(mw.Path())
	f, err := sessiontest.Decode(data)
	if err != nil || f.Meta.ID != "a1b2c3d4e5f6" || !f.Meta.Started.Equal(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)) || len(f.Messages) != 2 || len(f.Usages) != 1 || f.Usages[0].Cumulative.OutputTokens != 4 {
		t.Fatalf("migrated file as zot reads it: %+v %v\n%s", f, err, data)
	}
	infos, _ = ListWorkspace(home, cwd)
	if len(infos) != 2 || infos[0].ID != "a1b2c3d4e5f6" || infos[0].Path != mw.Path() {
		t.Fatalf("after migration: %+v", infos)
	}
}

// An extension's append_entry is an x-entry line zot skips; Load gives it
// back in order, and the transcript does not see it.
func TestCustomEntriesAreExtraLines(t *testing.T) {
	w, err := Create(t.TempDir(), "/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	first := message.Message{Role: message.RoleUser, Time: at(1), Content: []message.Content{message.Text("hi")}}
	w.Append(Entry{Kind: KindMessage, Message: &first})
	if err := w.AppendCustom(Custom{Extension: "gate", Kind: "always", Data: json.RawMessage(`"rm -rf build"`), Time: at(2)}); err != nil {
		t.Fatal(err)
	}
	w.AppendCustom(Custom{Extension: "plan-mode", Kind: "mode", Data: json.RawMessage(`true`), Time: at(3)})
	if err := w.Append(Entry{Kind: KindCustom}); err == nil {
		t.Fatal("a custom entry without data was written")
	}
	w.Close()
	data, _ := os.ReadFile(w.Path())
	f, err := sessiontest.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Other, []string{"x-entry", "x-entry"}) || len(f.Messages) != 1 {
		t.Fatalf("zot sees messages %d, skips %v", len(f.Messages), f.Other)
	}
	l, err := Load(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	want := []Custom{
		{Extension: "gate", Kind: "always", Data: json.RawMessage(`"rm -rf build"`), Time: at(2)},
		{Extension: "plan-mode", Kind: "mode", Data: json.RawMessage(`true`), Time: at(3)},
	}
	if !reflect.DeepEqual(l.Custom, want) || len(l.Messages) != 1 || l.Ignored != 0 {
		t.Fatalf("custom %+v, %d messages, %d ignored", l.Custom, len(l.Messages), l.Ignored)
	}
}

package session

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/message"
)

func call(id string) message.Content {
	return message.Content{Type: message.TypeToolCall, ID: id, Name: "bash", Args: json.RawMessage(`{}`)}
}

func result(id string) message.Content {
	return message.Content{Type: message.TypeToolResult, CallID: id, Content: []message.Content{message.Text("ok")}}
}

func TestRepairAddsMissingResults(t *testing.T) {
	msgs := []message.Message{
		{Role: "user", Content: []message.Content{message.Text("go")}},
		{Role: "assistant", Content: []message.Content{call("a"), call("b")}},
		{Role: "user", Content: []message.Content{result("a")}},
		{Role: "assistant", Content: []message.Content{call("c")}},
	}
	out, n := Repair(msgs)
	if n != 2 || len(out) != 5 {
		t.Fatalf("repaired %d, %d messages", n, len(out))
	}
	if got := out[2].Content; len(got) != 2 || got[1].CallID != "b" || !got[1].IsError {
		t.Fatalf("partial results not completed: %+v", got)
	}
	if got := out[4].Content; len(got) != 1 || got[0].CallID != "c" {
		t.Fatalf("trailing orphan not repaired: %+v", out[4])
	}
	if _, n := Repair(out); n != 0 {
		t.Fatal("repair is not idempotent")
	}
}

func TestTornLineSkippedAndAppendAfterIt(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	m := message.Message{Role: "user", Content: []message.Content{message.Text("kept")}, Time: time.Now()}
	w.Append(Entry{Kind: KindMessage, Message: &m})
	w.Close()
	f, _ := os.OpenFile(w.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"kind":"message","message":{"role":"assis`) // kill -9 mid-write
	f.Close()

	w2, err := Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	m2 := message.Message{Role: "assistant", Content: []message.Content{message.Text("after")}, Time: time.Now()}
	w2.Append(Entry{Kind: KindMessage, Message: &m2})
	w2.Close()
	l, err := Load(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if l.Skipped != 1 || len(l.Messages) != 2 || message.TextOf(l.Messages[1].Content) != "after" {
		t.Fatalf("skipped %d, messages %+v", l.Skipped, l.Messages)
	}
	if l.Info.Title != "kept" || l.Info.ID != w.ID() {
		t.Fatalf("info %+v", l.Info)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	if _, err := Find(dir, "latest"); err == nil || !strings.Contains(err.Error(), "no sessions") {
		t.Fatalf("empty dir: %v", err)
	}
	a, _ := Create(dir, "/w", "p", "m")
	a.Close()
	if p, err := Find(dir, "latest"); err != nil || p != a.Path() {
		t.Fatalf("latest: %v %v", p, err)
	}
	if p, err := Find(dir, a.ID()[:5]); err != nil || p != a.Path() {
		t.Fatalf("prefix: %v %v", p, err)
	}
	if _, err := Find(dir, "zzzz"); err == nil {
		t.Fatal("unknown id found")
	}
}

func TestDirIsPerWorkspace(t *testing.T) {
	if Dir("/h", "/a/b") == Dir("/h", "/a/c") {
		t.Fatal("two workspaces share a session dir")
	}
	if !strings.HasPrefix(Dir("/h", "/a/b"), "/h/sessions/") {
		t.Fatal(Dir("/h", "/a/b"))
	}
}

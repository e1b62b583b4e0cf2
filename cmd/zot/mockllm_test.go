package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The README's no-key run: zot mock-llm serves a script, zot -p talks to it.
func TestMockLLMCommandServesScript(t *testing.T) {
	e := newEnv(t)
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`{"replies":[{"text":"scripted hello"}]}`), 0o644)
	cmd := e.command("mock-llm", "--script", script)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	urlc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		urlc <- strings.TrimSpace(line)
	}()
	var url string
	select {
	case url = <-urlc:
	case <-time.After(30 * time.Second):
		t.Fatal("mock-llm printed no URL")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %q", url)
	}
	stdout, stderr, code := e.runZot("-p", "hi", "--api-key", "x", "--base-url", url, "--cwd", e.cwd)
	if code != 0 || strings.TrimSpace(stdout) != "scripted hello" {
		t.Fatalf("exit %d out %q err %s", code, stdout, stderr)
	}
}

func TestMockLLMBadScriptSaysWhy(t *testing.T) {
	e := newEnv(t)
	script := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(script, []byte(`{"replies":[{"text":"x",}]}`), 0o644)
	_, stderr, code := e.runZot("mock-llm", "--script", script)
	if code == 0 || !strings.Contains(stderr, "bad.json") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// --requests FILE: each request the model got, one JSON line, as sent (the
// editors' tests read what the model was told from it).
func TestMockLLMRequestsLog(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.json")
	log := filepath.Join(dir, "requests.jsonl")
	os.WriteFile(script, []byte(`{"replies":[{"text":"one"},{"text":"two"}]}`), 0o644)
	cmd := e.command("mock-llm", "--script", script, "--requests", log)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	url := strings.TrimSpace(line)
	for _, prompt := range []string{"first-prompt", "second-prompt"} {
		if _, stderr, code := e.runZot("-p", prompt, "--api-key", "x", "--base-url", url, "--cwd", e.cwd); code != 0 {
			t.Fatalf("zot -p %s: exit %d: %s", prompt, code, stderr)
		}
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 request lines, got %d: %s", len(lines), data)
	}
	for i, want := range []string{"first-prompt", "second-prompt"} {
		var body map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &body); err != nil || body["messages"] == nil {
			t.Fatalf("line %d is not a request body: %v %s", i+1, err, lines[i])
		}
		if !strings.Contains(lines[i], want) {
			t.Fatalf("line %d lacks %q: %s", i+1, want, lines[i])
		}
	}
}

func TestMockLLMRequestsLogUnwritable(t *testing.T) {
	e := newEnv(t)
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`{"replies":[{"text":"x"}]}`), 0o644)
	_, stderr, code := e.runZot("mock-llm", "--script", script, "--requests", filepath.Join(t.TempDir(), "no", "such", "dir", "r.jsonl"))
	if code == 0 || !strings.Contains(stderr, "--requests") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
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

// GET /llmtest/requests: each request the model got, as sent (the
// editors' tests read what the model was told from it).
func TestMockLLMServesRequests(t *testing.T) {
	e := newEnv(t)
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`{"replies":[{"text":"one"},{"text":"two"}]}`), 0o644)
	cmd := e.command("mock-llm", "--script", script)
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
	got, err := llmtest.FetchRequests(url)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, r := range got {
		var body struct {
			Messages json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(r.Body, &body) == nil && body.Messages != nil {
			bodies = append(bodies, string(r.Body))
		}
	}
	if len(bodies) != 2 {
		t.Fatalf("want 2 model requests, got %d: %+v", len(bodies), got)
	}
	for i, want := range []string{"first-prompt", "second-prompt"} {
		if !strings.Contains(bodies[i], want) {
			t.Fatalf("request %d lacks %q: %s", i+1, want, bodies[i])
		}
	}
}

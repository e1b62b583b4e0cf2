package main

import (
	"bufio"
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

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/agent/session/sessiontest"
	"github.com/zot-editors/zot/internal/proctest"
)

// Provider keys and the RPC token never reach the bash tool's environment;
// a key the model digs out anyway (--api-key in /proc/PID/cmdline) is masked
// in the tool result, the events and the session file; $ZOT_HOME and the
// sessions are private to the user.
func TestSecretsStayOutOfBashEventsAndSessions(t *testing.T) {
	const (
		flagKey  = "sk-flag-secret-0123456789"
		envKey   = "sk-ant-env-secret-987654321"
		openKey  = "sk-openai-env-secret-55555"
		rpcToken = "rpc-token-secret-4444444"
	)
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "env | grep -E '^(ANTHROPIC|OPENAI|ZOTCORE)' ; echo env-listed; tr '\\0' ' ' < /proc/$PPID/cmdline; echo"}),
		llmtest.TextReply("done"),
	)
	e.home = filepath.Join(e.home, "fresh-home") // zot creates it
	cmd := e.command("--api-key", flagKey, "--base-url", e.llm.URL(), "--cwd", e.cwd, "-p", "show me", "--json")
	cmd.Env = append(cmd.Env, "ANTHROPIC_API_KEY="+envKey, "OPENAI_API_KEY="+openKey, "ZOTCORE_RPC_TOKEN="+rpcToken)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot: %v\n%s", err, out)
	}
	reqs := e.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d", len(reqs))
	}
	seen, _ := json.Marshal(reqs[1].Body)
	if !strings.Contains(string(seen), "env-listed") || !strings.Contains(string(seen), "--api-key [REDACTED]") {
		t.Fatalf("the tool result the model saw is not the redacted command line: %s", seen)
	}
	for _, name := range []string{"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "ZOTCORE_RPC_TOKEN="} {
		if strings.Contains(string(seen), name) {
			t.Errorf("bash saw %s in its environment: %s", name, seen)
		}
	}
	sess, err := session.List(session.Dir(e.home, e.cwd))
	if err != nil || len(sess) != 1 {
		t.Fatalf("sessions: %v %v", sess, err)
	}
	file, err := os.ReadFile(sess[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{flagKey, envKey, openKey, rpcToken} {
		for what, text := range map[string]string{"the model's input": string(seen), "the events": string(out), "the session file": string(file)} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %s:\n%s", what, secret, text)
			}
		}
	}
	if !strings.Contains(string(file), "[REDACTED]") {
		t.Errorf("the session file lacks the redacted tool result:\n%s", file)
	}
	for path, want := range map[string]os.FileMode{
		e.home: 0o700, filepath.Join(e.home, "sessions"): 0o700,
		filepath.Dir(sess[0].Path): 0o700, sess[0].Path: 0o600,
	} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", path, st.Mode().Perm(), want)
		}
	}
}

// A second process resuming a session another one is writing continues in
// a copy: the two conversations never interleave in one file.
func TestResumeOfLockedSessionForks(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("first answer"), llmtest.TextReply("from A"), llmtest.TextReply("from B"))
	if _, errOut, code := e.runZot(e.args("-p", "the first prompt")...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	a := e.startRPC(nil, "-c")
	a.send(map[string]any{"id": "s", "type": "get_state"})
	stA := a.until(isResponse("s"))[0]["data"].(map[string]any)
	b := e.startRPC(nil, "-c")
	b.send(map[string]any{"id": "s", "type": "get_state"})
	stB := b.until(isResponse("s"))[0]["data"].(map[string]any)
	if stA["forked_from"] != nil || stA["message_count"].(float64) != 2 {
		t.Fatalf("the first resume: %v", stA)
	}
	if stB["session_id"] == stA["session_id"] || stB["forked_from"] != stA["session_id"] || stB["message_count"].(float64) != 2 {
		t.Fatalf("the second resume should fork %v: %v", stA["session_id"], stB)
	}
	announce := "is open in another zot process; continuing in a new session " + stB["session_id"].(string)
	for i := 0; i < 200 && !strings.Contains(b.errb.String(), announce); i++ {
		time.Sleep(25 * time.Millisecond) // stderr is copied by a goroutine
	}
	if !strings.Contains(b.errb.String(), announce) {
		t.Fatalf("the fork is not announced: %s", b.errb.String())
	}
	a.send(map[string]any{"id": "1", "type": "prompt", "message": "prompt A"})
	a.until(isType("done"))
	b.send(map[string]any{"id": "1", "type": "prompt", "message": "prompt B"})
	b.until(isType("done"))
	a.in.Close()
	b.in.Close()
	a.cmd.Wait()
	b.cmd.Wait()
	infos, _ := session.List(session.Dir(e.home, e.cwd))
	texts := map[string]string{}
	for _, in := range infos {
		l, err := session.Load(in.Path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(l.Messages)
		texts[in.ID] = string(b)
	}
	// The fork is a session zot reads whole: the copied conversation as
	// message lines, then B's turn.
	for _, in := range infos {
		if in.ID != stB["session_id"] {
			continue
		}
		data, _ := os.ReadFile(in.Path)
		f, err := sessiontest.Decode(data)
		if err != nil || len(f.Messages) != 4 || f.Messages[0].Content[0].Text != "the first prompt" || f.Messages[2].Content[0].Text != "prompt B" {
			t.Fatalf("the fork as zot reads it: %+v %v", f, err)
		}
	}
	ta, tb := texts[stA["session_id"].(string)], texts[stB["session_id"].(string)]
	if !strings.Contains(ta, "prompt A") || strings.Contains(ta, "prompt B") {
		t.Fatalf("session A: %s", ta)
	}
	if !strings.Contains(tb, "the first prompt") || !strings.Contains(tb, "prompt B") || strings.Contains(tb, "prompt A") {
		t.Fatalf("session B: %s", tb)
	}
}

// Background jobs of the bash tool die when the run ends (zot still
// running) and whatever escaped its process group dies when zot exits.
func TestBackgroundJobsDieWithTheRunAndZot(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "sleep 3021 >/dev/null 2>&1 & echo $! > bg.pid"}),
		llmtest.TextReply("started"),
		llmtest.ToolReply("bash", map[string]any{"command": "(setsid sleep 3022 >/dev/null 2>&1 & echo $! > escaped.pid); setsid sleep 3023 >/dev/null 2>&1 & echo $! > sid.pid"}),
		llmtest.TextReply("started more"),
	)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "start a job"})
	p.until(isType("done"))
	bg := waitPIDFile(t, filepath.Join(e.cwd, "bg.pid"))
	proctest.WaitGone(t, bg, "the background job (after the run)")
	p.send(map[string]any{"id": "2", "type": "ping"})
	p.until(isResponse("2"))

	p.send(map[string]any{"id": "3", "type": "prompt", "message": "start escaping jobs"})
	p.until(isType("done"))
	escaped := waitPIDFile(t, filepath.Join(e.cwd, "escaped.pid"))
	sid := waitPIDFile(t, filepath.Join(e.cwd, "sid.pid"))
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("zot rpc: %v", err)
	}
	for _, pid := range []int{escaped, sid} {
		proctest.WaitGone(t, pid, "a setsid process (after zot exited)")
	}
}

// An extension's setsid grandchild dies with zot.
func TestExtensionGrandchildDiesWithZot(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("hi"))
	dir := filepath.Join(t.TempDir(), "spawner")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "extension.json"), []byte(`{"name":"spawner","version":"1.0.0","exec":"./spawner.sh"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "spawner.sh"), []byte(`#!/bin/sh
setsid sleep 3031 </dev/null >/dev/null 2>&1 &
echo $! > "$(dirname "$0")/grandchild.pid.tmp" && mv "$(dirname "$0")/grandchild.pid.tmp" "$(dirname "$0")/grandchild.pid"
echo '{"type":"hello","name":"spawner","version":"1.0.0","capabilities":[]}'
echo '{"type":"ready"}'
exec cat >/dev/null
`), 0o755)
	_, errOut, code := e.runZot(e.args("-p", "hi", "--ext", dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "grandchild.pid"))
	if err != nil {
		t.Fatalf("the extension did not start its grandchild: %v; %s", err, errOut)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	proctest.WaitGone(t, pid, "the extension's setsid grandchild (after zot exited)")
}

// Writes outside the workspace (../, absolute paths, symlinks) are refused
// in print mode, which cannot ask; --add-dir allows a directory; a
// dangling symlink is not replaced by a regular file.
func TestWritesOutsideWorkspaceAreRefusedWithoutUI(t *testing.T) {
	outside := t.TempDir()
	allowed := t.TempDir()
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": "../" + filepath.Base(outside) + "/dotdot.txt", "content": "x\n"}),
		llmtest.ToolReply("write", map[string]any{"path": filepath.Join(outside, "abs.txt"), "content": "x\n"}),
		llmtest.ToolReply("write", map[string]any{"path": "linkdir/via-link.txt", "content": "x\n"}),
		llmtest.ToolReply("edit", map[string]any{"path": "victim-link", "edits": []map[string]string{{"oldText": "precious", "newText": "changed"}}}),
		llmtest.ToolReply("write", map[string]any{"path": "dangling", "content": "x\n"}),
		llmtest.ToolReply("write", map[string]any{"path": filepath.Join(allowed, "ok.txt"), "content": "allowed\n"}),
		llmtest.ToolReply("write", map[string]any{"path": "inside.txt", "content": "inside\n"}),
		llmtest.TextReply("done"),
	)
	// The workspace sits next to outside, so ../outside reaches it.
	e.cwd = filepath.Join(filepath.Dir(outside), "ws-"+filepath.Base(outside))
	os.MkdirAll(e.cwd, 0o755)
	os.WriteFile(filepath.Join(outside, "victim.txt"), []byte("precious\n"), 0o644)
	os.Symlink(outside, filepath.Join(e.cwd, "linkdir"))
	os.Symlink(filepath.Join(outside, "victim.txt"), filepath.Join(e.cwd, "victim-link"))
	os.Symlink(filepath.Join(e.cwd, "no-such-file"), filepath.Join(e.cwd, "dangling"))
	out, errOut, code := e.runZot(e.args("-p", "write around", "--json", "--add-dir", allowed)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var results []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		json.Unmarshal([]byte(line), &m)
		if m["type"] == "tool_result" {
			results = append(results, m)
		}
	}
	if len(results) != 7 {
		t.Fatalf("tool results: %d\n%s", len(results), out)
	}
	for i := 0; i < 4; i++ {
		if txt := toJSON(results[i]["content"]); results[i]["is_error"] != true || !strings.Contains(txt, "outside the workspace") || !strings.Contains(txt, "--add-dir") {
			t.Errorf("write %d outside the workspace: %v", i, results[i])
		}
	}
	if txt := toJSON(results[4]["content"]); results[4]["is_error"] != true || !strings.Contains(txt, "does not exist") {
		t.Errorf("write through a dangling symlink: %v", results[4])
	}
	for _, i := range []int{5, 6} {
		if results[i]["is_error"] != false {
			t.Errorf("allowed write %d failed: %v", i, results[i])
		}
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 1 {
		t.Errorf("files appeared outside the workspace: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim.txt")); string(b) != "precious\n" {
		t.Errorf("the file behind the symlink was changed: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(e.cwd, "dangling")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling symlink was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(allowed, "ok.txt")); string(b) != "allowed\n" {
		t.Errorf("the --add-dir write: %q", b)
	}
}

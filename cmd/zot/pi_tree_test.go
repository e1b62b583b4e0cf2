package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
)

// pi's session tree members over real zot rpc with a session file
// (extensions/testdata/piext/tree.ts): sessionManager's entry ids are the
// host's ("<session id>:<index>"), a session_before_fork that cancels
// keeps the session (ctx.fork answers cancelled), a fork reaches
// session_fork with pi's fields and moves the session, and
// ctx.navigateTree goes through session_before_tree (cancellable) to
// session_tree, the prompt coming back as the editor text.
func TestRPCPiSessionTree(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t, llmtest.TextReply("one"), llmtest.TextReply("two"), llmtest.TextReply("three"))
	e.dumpExtLogs()
	out := piOut(filepath.Join(t.TempDir(), "tree.ndjson"))
	// zot -p writes the session file; zot rpc -c goes on in it.
	if _, errOut, code := e.runZot(e.args("-p", "first")...); code != 0 {
		t.Fatalf("zot -p: %s", errOut)
	}
	p := e.startRPC(append(rt, "PIEXT_OUT="+string(out)), "-c", "-e", piTestdata("tree.ts"))
	out.wait(t, "session_start")
	p.send(map[string]any{"id": "p", "type": "prompt", "message": "second"})
	p.until(isType("done"))

	ids := p.commandNotify("1", "t-ids", "", "ids:")
	m := regexp.MustCompile(`^ids: (\S+):0,(\S+):1,(\S+):2,(\S+):3 leaf=(\S+):3$`).FindStringSubmatch(ids)
	if m == nil || m[1] != m[2] || m[1] != m[5] {
		t.Fatalf("the entry ids are not the host's <session id>:<index>: %q\nstderr: %s", ids, p.errb.String())
	}
	sid := m[1]

	// Refused: the fork is cancelled and the session stays.
	p.commandNotify("2", "t-refuse", "on", "refuse=")
	if got := p.commandNotify("3", "t-fork", "1", "fork:"); got != "fork: cancelled=true from="+sid+":2" {
		t.Fatalf("a refused fork: %q", got)
	}
	out.wait(t, "session_before_fork", `"entryId":"`+sid+`:2"`, `"refuse":true`)
	if got := p.commandNotify("4", "t-ids", "", "ids:"); !strings.HasSuffix(got, "leaf="+sid+":3") {
		t.Fatalf("after a refused fork the session moved: %q", got)
	}

	// Allowed: the fork keeps the conversation before the second prompt
	// in a new session.
	p.commandNotify("5", "t-refuse", "off", "refuse=")
	if got := p.commandNotify("6", "t-fork", "1", "fork:"); got != "fork: cancelled=false from="+sid+":2" {
		t.Fatalf("a fork: %q\nstderr: %s", got, p.errb.String())
	}
	fork := out.wait(t, "session_fork", `"entryId":"`+sid+`:2"`)
	prev, _ := fork["previousSessionFile"].(string)
	if len(sid) < 8 || !strings.Contains(filepath.Base(prev), sid[:8]) { // files are named by time and the id's first part
		t.Fatalf("session_fork.previousSessionFile %q does not name the session %s", prev, sid)
	}
	if _, err := os.Stat(prev); err != nil {
		t.Fatalf("session_fork.previousSessionFile: %v", err)
	}
	newSID, _ := fork["sessionId"].(string)
	if newSID == "" || newSID == sid {
		t.Fatalf("in session_fork the session manager's session is %q (was %s)", newSID, sid)
	}
	// A fork is pi's session_fork, not a session_switch: events come in
	// order, so a switch would be noted before the fork.
	if b, _ := os.ReadFile(string(out)); strings.Contains(string(b), `"session_switch"`) {
		t.Fatalf("a fork fired session_switch:\n%s", b)
	}
	if got := p.commandNotify("7", "t-ids", "", "ids:"); got != "ids: "+newSID+":0,"+newSID+":1 leaf="+newSID+":1" {
		t.Fatalf("the forked session's entries: %q", got)
	}

	// Navigation: refused first, then to the first prompt (its text
	// comes back as the editor text).
	p.commandNotify("8", "t-refuse", "on", "refuse=")
	if got := p.commandNotify("9", "t-nav", "0", "nav:"); !strings.HasPrefix(got, "nav: cancelled=true") {
		t.Fatalf("a refused navigation: %q", got)
	}
	out.wait(t, "session_before_tree", `"targetId":"`+newSID+`:0"`, `"oldLeafId":"`+newSID+`:1"`, `"label":"t-nav"`, `"hasSignal":true`, `"refuse":true`)
	p.commandNotify("10", "t-refuse", "off", "refuse=")
	if got := p.commandNotify("11", "t-nav", "0", "nav:"); got != "nav: cancelled=false editor=first" {
		t.Fatalf("a navigation: %q\nstderr: %s", got, p.errb.String())
	}
	out.wait(t, "session_tree", `"oldLeafId":"`+newSID+`:1"`)

	// ctx.newSession: a fresh session, pi's session_switch "new".
	got := p.commandNotify("12", "t-new", "", "new:")
	if !strings.HasPrefix(got, "new: cancelled=false session=") || !strings.HasSuffix(got, " entries=0") || strings.Contains(got, newSID) {
		t.Fatalf("ctx.newSession: %q\nstderr: %s", got, p.errb.String())
	}
	out.wait(t, "session_switch", `"reason":"new"`)

	// session_before_switch refuses: ctx.newSession is cancelled, and so
	// are the client's /new and /resume (its target named).
	p.commandNotify("13", "t-refuse", "on", "refuse=")
	if got := p.commandNotify("14", "t-new", "", "new:"); !strings.HasPrefix(got, "new: cancelled=true") {
		t.Fatalf("a refused ctx.newSession: %q", got)
	}
	out.wait(t, "session_before_switch", `"reason":"new"`, `"refuse":true`)
	for _, c := range [][2]string{{"new", ""}, {"resume", sid}} {
		fs := p.command("15"+c[0], c[0], c[1])
		if r := toJSON(fs[len(fs)-1]); !strings.Contains(r, `cancelled by extension \"tree\"`) {
			t.Fatalf("/%s refused by the extension: %s", c[0], r)
		}
	}
	ev := out.wait(t, "session_before_switch", `"reason":"resume"`, `"targetSessionId":"`+sid+`"`)
	if f, _ := ev["targetSessionFile"].(string); f != prev {
		t.Fatalf("session_before_switch.targetSessionFile = %q, want %s", f, prev)
	}
}

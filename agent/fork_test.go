package agent_test

import (
	"context"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/session"
)

// Config.Fork continues a saved session in a copy under a new id (even
// when nothing else holds the original); the original keeps its
// conversation.
func TestForkCopiesTheSession(t *testing.T) {
	home, cwd, other := t.TempDir(), t.TempDir(), t.TempDir()
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply("one"), llmtest.TextReply("two")}})
	defer srv.Close()
	cfg := agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Sessions: true}
	rt, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	collect(t)(rt.Prompt(context.Background(), "first", nil))
	id := rt.State().SessionID
	rt.Close()

	fcfg := cfg
	fcfg.Resume, fcfg.Fork = id, true
	fork, err := agent.New(fcfg)
	if err != nil {
		t.Fatal(err)
	}
	st := fork.State()
	if st.SessionID == id || st.ForkedFrom != id || st.MessageCount != 2 {
		t.Fatalf("fork state %+v; want a new id forked from %s with the 2 messages", st, id)
	}
	collect(t)(fork.Prompt(context.Background(), "second", nil))
	forkID := fork.State().SessionID
	fork.Close()

	orig, err := agent.New(agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Sessions: true, Resume: id})
	if err != nil {
		t.Fatal(err)
	}
	if n := orig.State().MessageCount; n != 2 {
		t.Fatalf("the original has %d messages after the fork went on; want 2", n)
	}
	orig.Close()
	again, err := agent.New(agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Sessions: true, Resume: forkID})
	if err != nil {
		t.Fatal(err)
	}
	if n := again.State().MessageCount; n != 4 {
		t.Fatalf("the fork was saved with %d messages; want 4", n)
	}
	again.Close()

	// A fork of a session file into another workspace is saved there.
	path, err := session.FindWorkspace(home, cwd, id)
	if err != nil {
		t.Fatal(err)
	}
	xcfg := agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: other, Home: home, Sessions: true, SessionPath: path, Fork: true}
	x, err := agent.New(xcfg)
	if err != nil {
		t.Fatal(err)
	}
	xid := x.State().SessionID
	x.Close()
	if _, err := session.FindWorkspace(home, other, xid); err != nil {
		t.Fatalf("the fork into %s is not among its sessions: %v", other, err)
	}
}

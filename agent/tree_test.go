package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
)

// treeHooks records the session-tree hooks and events and may cancel.
type treeHooks struct {
	hooks
	mu      sync.Mutex
	cancel  bool
	forks   []agent.ForkPreparation
	trees   []agent.TreePreparation
	changes []string // session_start reasons, session_fork and session_tree, in order
}

func (h *treeHooks) BeforeFork(_ context.Context, p agent.ForkPreparation) agent.TreeDecision {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forks = append(h.forks, p)
	return agent.TreeDecision{Cancel: h.cancel, Extension: "guard", Reason: "not now"}
}

func (h *treeHooks) BeforeTree(_ context.Context, p agent.TreePreparation) agent.TreeDecision {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.trees = append(h.trees, p)
	return agent.TreeDecision{Cancel: h.cancel, Extension: "guard"}
}

func (h *treeHooks) Observe(ev agent.Lifecycle) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch ev.Event {
	case "session_start":
		h.changes = append(h.changes, "session_start "+ev.Reason)
	case "session_fork":
		h.changes = append(h.changes, fmt.Sprintf("session_fork %s %d %s→%s", ev.Tree.EntryID, ev.Tree.MessageIndex, ev.Tree.PreviousSessionID, ev.Tree.SessionID))
	case "session_tree":
		h.changes = append(h.changes, fmt.Sprintf("session_tree %s→%s %s→%s", ev.Tree.OldLeafID, ev.Tree.NewLeafID, ev.Tree.PreviousSessionID, ev.Tree.SessionID))
	}
}

func (h *treeHooks) took() (changes []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	changes, h.changes = h.changes, nil
	return changes
}

// A conversation of two prompts: [0 "one", 1 a tool call, 2 its result,
// 3 "a1", 4 "two", 5 "a2"].
func treeRuntime(t *testing.T) (*agent.Runtime, *treeHooks, string) {
	h := &treeHooks{}
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Sessions, c.Hooks = true, h },
		llmtest.ToolReply("ls", map[string]any{}), llmtest.TextReply("a1"), llmtest.TextReply("a2"))
	collect(t)(rt.Prompt(context.Background(), "one", nil))
	collect(t)(rt.Prompt(context.Background(), "two", nil))
	if n := rt.State().MessageCount; n != 6 {
		t.Fatalf("%d messages, want 6", n)
	}
	h.took()
	return rt, h, rt.State().SessionID
}

// Navigating to an earlier prompt branches there (the session keeps its
// later messages), returns the prompt's text for the input, and
// navigating to the session's id goes back to its leaf; each tells the
// hooks what pi's session_before_tree and session_tree carry.
func TestNavigateTreeBranchesAndReturns(t *testing.T) {
	rt, h, s := treeRuntime(t)
	ctx := context.Background()

	r, err := rt.NavigateTree(ctx, s+":4", agent.TreeOptions{Label: "mark"})
	if err != nil {
		t.Fatal(err)
	}
	b := r.SessionID
	if !r.Branched || b == s || r.MessageCount != 4 || r.EditorText != "two" || r.NewLeafID != b+":3" || r.OldLeafID != s+":5" {
		t.Fatalf("navigation to the second prompt: %+v", r)
	}
	if got := fmt.Sprintf("%+v", h.trees[0]); got != fmt.Sprintf("{TargetID:%s:4 OldLeafID:%s:5 CommonAncestorID:%s:4 EntriesToSummarize:[%s:5] CustomInstructions: ReplaceInstructions:false Label:mark}", s, s, s, s) {
		t.Fatalf("session_before_tree: %s", got)
	}
	if got, want := strings.Join(h.took(), "; "), fmt.Sprintf("session_start tree; session_tree %s:5→%s:3 %s→%s", s, b, s, b); got != want {
		t.Fatalf("events:\n %s\nwant %s", got, want)
	}
	tree, err := rt.SessionTree()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(tree.Sessions), fmt.Sprintf("[{%s   6 %s:5 false} {%s %s  4 %s:3 true}]", s, s, b, s, b); !strings.Contains(got, b) || len(tree.Sessions) != 2 ||
		tree.Sessions[1].Parent != s || !tree.Sessions[1].Current || tree.Sessions[0].Messages != 6 {
		t.Fatalf("tree %s\nwant like %s", got, want)
	}

	// Back to the first session's leaf: no new branch.
	r, err = rt.NavigateTree(ctx, s, agent.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Branched || r.SessionID != s || r.MessageCount != 6 || r.NewLeafID != s+":5" || r.OldLeafID != b+":3" || r.EditorText != "" {
		t.Fatalf("navigation back: %+v", r)
	}
	if p := h.trees[1]; p.CommonAncestorID != s+":3" || len(p.EntriesToSummarize) != 0 {
		t.Fatalf("session_before_tree back: %+v", p)
	}
	if n := len(rt.Messages()); n != 6 {
		t.Fatalf("%d messages after going back, want 6", n)
	}
	h.took()

	// Already there: nothing happens.
	if r, err := rt.NavigateTree(ctx, s+":5", agent.TreeOptions{}); err != nil || r.SessionID != s || r.Branched {
		t.Fatalf("navigation to the leaf itself: %+v, %v", r, err)
	}
	if got := h.took(); len(got) != 0 {
		t.Fatalf("a navigation to where the conversation is fired %v", got)
	}

	// An extension cancels: nothing moves.
	h.cancel = true
	if r, err := rt.NavigateTree(ctx, s+":0", agent.TreeOptions{}); err != nil || !r.Cancelled || rt.State().SessionID != s {
		t.Fatalf("a cancelled navigation: %+v, %v (session %s)", r, err, rt.State().SessionID)
	}
	if got := h.took(); len(got) != 0 {
		t.Fatalf("a cancelled navigation fired %v", got)
	}
}

// Bad targets get an error that says what to give instead.
func TestNavigateTreeRefusesBadTargets(t *testing.T) {
	rt, _, s := treeRuntime(t)
	ctx := context.Background()
	for target, want := range map[string]string{
		s + ":1":  "tool calls are answered by the next one: navigate to " + s + ":2",
		s + ":9":  "past the 6 messages",
		s + ":x":  "is not \"<session id>:<message index>\"",
		"":        "an entry id is required",
		"nosuch":  "no session nosuch in this workspace",
		":3":      "is not \"<session id>:<message index>\"",
		s + ":-1": "is not \"<session id>:<message index>\"",
	} {
		if _, err := rt.NavigateTree(ctx, target, agent.TreeOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("navigate to %q: %v; want %q", target, err, want)
		}
	}
	if _, err := rt.NavigateTree(ctx, s+":0", agent.TreeOptions{Summarize: true}); err == nil || !strings.Contains(err.Error(), "zot writes no branch summaries") {
		t.Errorf("summarize: %v", err)
	}
	if rt.State().SessionID != s || len(rt.Messages()) != 6 {
		t.Fatal("a refused navigation moved the conversation")
	}
}

// A fork from an entry: only from a prompt of the current session; an
// extension may cancel it; otherwise the hooks hear session_start (fork)
// and session_fork with the entry and both sessions.
func TestForkEntry(t *testing.T) {
	rt, h, s := treeRuntime(t)
	ctx := context.Background()
	for entry, want := range map[string]string{
		s + ":3":      "is not a prompt of the user",
		s:             "names no message",
		"other:0":     "is not in the current session",
		s + ":6":      "past the conversation's 6 messages",
		s + ":banana": "is not \"<session id>:<message index>\"",
	} {
		if _, err := rt.ForkEntry(ctx, entry, false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fork %q: %v; want %q", entry, err, want)
		}
	}
	h.cancel = true
	_, err := rt.ForkEntry(ctx, s+":4", false)
	var c *agent.CancelledError
	if !errors.As(err, &c) || err.Error() != `the fork was cancelled by extension "guard": not now` || rt.State().SessionID != s {
		t.Fatalf("a cancelled fork: %v", err)
	}
	h.cancel = false
	r, err := rt.ForkEntry(ctx, s+":4", false)
	if err != nil {
		t.Fatal(err)
	}
	if r.MessageCount != 4 || r.ForkedFrom != s || rt.State().SessionID != r.SessionID {
		t.Fatalf("fork: %+v", r)
	}
	if got := fmt.Sprintf("%+v", h.forks); got != fmt.Sprintf("[{EntryID:%s:4 SessionID:%s MessageIndex:4 WithFiles:false} {EntryID:%s:4 SessionID:%s MessageIndex:4 WithFiles:false}]", s, s, s, s) {
		t.Fatalf("session_before_fork: %s", got)
	}
	if got, want := strings.Join(h.took(), "; "), fmt.Sprintf("session_start fork; session_fork %s:4 4 %s→%s", s, s, r.SessionID); got != want {
		t.Fatalf("events:\n %s\nwant %s", got, want)
	}
}

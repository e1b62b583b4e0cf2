package extensions

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
)

// session_before_fork and session_before_tree run in load order and fail
// open (pi's handlers that throw are skipped): an extension that never
// answers, or dies meanwhile, does not stop the fork; the next one may
// cancel it, and its reason names it. The frames carry pi's fields.
func TestTreeHooksFailOpenThenCancel(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	e.global("a-hung", "-intercept", "session_before_fork,session_before_tree", "-hang-intercept")
	e.global("b-crash", "-intercept", "session_before_fork,session_before_tree", "-crash-intercept")
	e.global("c-refuse", "-intercept", "session_before_fork,session_before_tree", "-cancel-tree", "-record", rec)
	h := e.start(func(o *Options) { o.InterceptTimeout = 300 * time.Millisecond })
	ctx := context.Background()

	d := h.BeforeFork(ctx, agent.ForkPreparation{EntryID: "s1:0", SessionID: "s1", MessageIndex: 0})
	if !d.Cancel || d.Extension != "c-refuse" || d.Reason != "c-refuse refused the session_before_fork" {
		t.Fatalf("fork verdict %+v; want cancelled by c-refuse past the hung and the crashed ones", d)
	}
	d = h.BeforeTree(ctx, agent.TreePreparation{TargetID: "s2", EntriesToSummarize: []string{"s1:3"}, Label: "x"})
	if !d.Cancel || d.Extension != "c-refuse" {
		t.Fatalf("tree verdict %+v; want cancelled by c-refuse", d)
	}
	var got []string
	for _, f := range recorded(t, rec) {
		if f.Type == "event_intercept" {
			b, _ := json.Marshal(f)
			got = append(got, string(b))
		}
	}
	want := []string{
		`{"type":"event_intercept","id":"event_intercept-1","event":"session_before_fork","entry_id":"s1:0","message_index":0,"session_id":"s1"}`,
		`{"type":"event_intercept","id":"event_intercept-2","event":"session_before_tree","preparation":{"target_id":"s2","old_leaf_id":null,"common_ancestor_id":null,"entries_to_summarize":["s1:3"],"user_wants_summary":false,"label":"x"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("frames:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Without a refusing extension, a hung one lets the fork through once its
// time is up.
func TestTreeHooksHungExtensionAllows(t *testing.T) {
	e := newEnv(t)
	e.global("hung", "-intercept", "session_before_fork", "-hang-intercept")
	h := e.start(func(o *Options) { o.InterceptTimeout = 300 * time.Millisecond })
	if d := h.BeforeFork(context.Background(), agent.ForkPreparation{EntryID: "s1:2", SessionID: "s1", MessageIndex: 2}); d.Cancel {
		t.Fatalf("a hung extension cancelled the fork: %+v", d)
	}
	if !strings.Contains(e.logOf("hung"), "session_before_fork intercept: no answer within 300ms; passed through (fail-open)") {
		t.Fatalf("the timeout was not logged: %s", e.logOf("hung"))
	}
}

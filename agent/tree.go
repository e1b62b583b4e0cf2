package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/session"
)

// The session tree (issue 33; docs/extensions.md, "The session tree"):
// zot's branches are session files naming their parent (a fork), so the
// tree is the sessions of a workspace linked by parent. An entry of it is
// a message of a session, named "<session id>:<message index>" — what
// pi's extensions call an entry id (ctx.fork, ctx.navigateTree).

// session_start reasons of the session tree: a fork, and a navigation
// that moved to another session file.
const (
	SessionStartFork = "fork"
	SessionStartTree = "tree"
	// SessionStartNew: a fresh session (NewSession).
	SessionStartNew = "new"
)

// EntryID names message index of session id.
func EntryID(id string, index int) string { return id + ":" + strconv.Itoa(index) }

// leafID is the entry id of the last of n messages of session id; "" for
// an empty conversation (pi's null leaf).
func leafID(id string, n int) string {
	if n == 0 {
		return ""
	}
	return EntryID(id, n-1)
}

// ParseEntryID splits an entry id. A bare session id (no ":") names that
// session's leaf: hasIndex is false.
func ParseEntryID(entry string) (id string, index int, hasIndex bool, err error) {
	if entry == "" {
		return "", 0, false, errors.New(`an entry id is required: "<session id>:<message index>", or a session id for its last message`)
	}
	i := strings.LastIndexByte(entry, ':')
	if i < 0 {
		return entry, 0, false, nil
	}
	n, err := strconv.Atoi(entry[i+1:])
	if err != nil || n < 0 || i == 0 {
		return "", 0, false, fmt.Errorf(`entry id %q is not "<session id>:<message index>" (a message index is a number from 0)`, entry)
	}
	return entry[:i], n, true, nil
}

// CancelledError is an extension refusing a fork or a navigation
// (session_before_fork, session_before_tree).
type CancelledError struct {
	What      string // "fork" or "navigation"
	Extension string
	Reason    string
}

func (e *CancelledError) Error() string {
	s := fmt.Sprintf("the %s was cancelled by extension %q", e.What, e.Extension)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

func (r *Runtime) treeHooks() TreeHooks {
	if h, ok := r.cfg.Hooks.(TreeHooks); ok {
		return h
	}
	return nil
}

func (r *Runtime) beforeFork(ctx context.Context, p ForkPreparation) TreeDecision {
	if h := r.treeHooks(); h != nil {
		return h.BeforeFork(ctx, p)
	}
	return TreeDecision{}
}

func (r *Runtime) beforeTree(ctx context.Context, p TreePreparation) TreeDecision {
	if h := r.treeHooks(); h != nil {
		return h.BeforeTree(ctx, p)
	}
	return TreeDecision{}
}

// sessionPath is the current session file's path, "" without one.
func (r *Runtime) sessionPath() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil {
		return ""
	}
	return r.sess.Path()
}

// isPrompt: a message the user typed (not tool results, not a
// compaction's summary).
func isPrompt(m message.Message) bool {
	if m.Role != message.RoleUser || m.Summary {
		return false
	}
	for _, c := range m.Content {
		if c.Type == message.TypeToolResult {
			return false
		}
	}
	return len(m.Content) > 0
}

// ForkEntry is ForkAt from an entry id of the current session, which must
// name a prompt of the user (the conversation before it is kept, as pi's
// fork does).
func (r *Runtime) ForkEntry(ctx context.Context, entry string, withFiles bool) (ForkResult, error) {
	id, index, hasIndex, err := ParseEntryID(entry)
	if err != nil {
		return ForkResult{}, err
	}
	r.mu.Lock()
	cur, msgs := "", r.messages
	if r.sess != nil {
		cur = r.sess.ID()
	}
	var bad error
	switch {
	case cur == "":
		bad = errors.New("sessions are off (--no-session): a fork needs a session to branch from")
	case id != cur:
		bad = fmt.Errorf("entry %s is not in the current session %s: fork from an entry of it (navigate_tree moves to another session first)", entry, cur)
	case !hasIndex:
		bad = fmt.Errorf("entry %q names no message: fork from \"%s:<index of a prompt>\"", entry, cur)
	case index >= len(msgs):
		bad = fmt.Errorf("entry %s is past the conversation's %d messages", entry, len(msgs))
	case !isPrompt(msgs[index]):
		bad = fmt.Errorf("entry %s is not a prompt of the user: fork from a user message (the conversation before it is kept)", entry)
	}
	r.mu.Unlock()
	if bad != nil {
		return ForkResult{}, bad
	}
	return r.ForkAt(ctx, index, withFiles)
}

// TreeOptions are navigate_tree's options (pi's navigateTree options).
type TreeOptions struct {
	// Summarize is refused: zot writes no branch summaries.
	Summarize           bool
	CustomInstructions  string
	ReplaceInstructions bool
	Label               string
}

// TreeResult is what a navigation did.
type TreeResult struct {
	Cancelled bool `json:"cancelled"`
	// NewLeafID and OldLeafID: the conversation's last entry after and
	// before ("" for an empty conversation).
	NewLeafID string `json:"new_leaf_id"`
	OldLeafID string `json:"old_leaf_id"`
	// EditorText is the prompt navigated to (its text goes back to the
	// chat input, as in pi).
	EditorText   string `json:"editor_text,omitempty"`
	SessionID    string `json:"session_id"`
	MessageCount int    `json:"message_count"`
	// Branched: the navigation went to an earlier point of a session, so
	// a new branch (session file) continues from there and the session's
	// later messages stay where they were.
	Branched bool `json:"branched"`
}

// NavigateTree moves the conversation to another point of the session
// tree (pi's navigateTree): target is an entry id, or a session id for
// that session's last message. A prompt as target leaves the
// conversation just before it (its text is returned, for the chat's
// input), any other message just after it. The leaf of a session (the
// current one or another branch) switches to that session; an earlier
// point starts a new branch there, so no leaf is lost. The extensions
// hear session_before_tree (one may cancel: Cancelled), then, when the
// session file changed, session_start (reason tree), then session_tree.
// ErrBusy during a run.
func (r *Runtime) NavigateTree(ctx context.Context, target string, o TreeOptions) (TreeResult, error) {
	if o.Summarize {
		return TreeResult{}, errors.New("summarize is not offered: zot writes no branch summaries; navigate without it")
	}
	id, index, hasIndex, err := ParseEntryID(target)
	if err != nil {
		return TreeResult{}, err
	}
	r.mu.Lock()
	if r.busy || r.restoring {
		r.mu.Unlock()
		return TreeResult{}, ErrBusy
	}
	if r.sess == nil {
		r.mu.Unlock()
		return TreeResult{}, errors.New("sessions are off (--no-session): there is no session tree to navigate")
	}
	r.restoring = true
	cur := r.sess
	curMsgs := slices.Clone(r.messages)
	curCustom := slices.Clone(r.custom)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.restoring = false
		r.mu.Unlock()
	}()

	// The target's conversation.
	msgs, custom, path := curMsgs, curCustom, cur.Path()
	if id != cur.ID() {
		in, err := r.findSession(id)
		if err != nil {
			return TreeResult{}, err
		}
		l, err := session.Load(in.Path)
		if err != nil {
			return TreeResult{}, err
		}
		msgs, custom, path = l.Messages, l.Custom, in.Path
	}
	keep, reach, editor := len(msgs), len(msgs), ""
	if hasIndex {
		if index >= len(msgs) {
			return TreeResult{}, fmt.Errorf("entry %s is past the %d messages of session %s", target, len(msgs), id)
		}
		m := msgs[index]
		switch {
		case isPrompt(m):
			keep, editor = index, message.TextOf(m.Content)
		case m.Role == message.RoleAssistant && len(m.ToolCalls()) > 0:
			return TreeResult{}, fmt.Errorf("entry %s is a model message whose tool calls are answered by the next one: navigate to %s", target, EntryID(id, index+1))
		default:
			keep = index + 1
		}
		reach = index + 1
	}
	oldLeaf := leafID(cur.ID(), len(curMsgs))
	res := TreeResult{OldLeafID: oldLeaf, NewLeafID: oldLeaf, SessionID: cur.ID(), MessageCount: len(curMsgs), EditorText: editor}
	if id == cur.ID() && keep == len(curMsgs) {
		return res, nil // already there
	}
	common := commonPrefix(curMsgs, msgs[:reach])
	prep := TreePreparation{TargetID: target, OldLeafID: oldLeaf, CustomInstructions: o.CustomInstructions, ReplaceInstructions: o.ReplaceInstructions, Label: o.Label}
	if common > 0 {
		prep.CommonAncestorID = EntryID(id, common-1)
	}
	for i := common; i < len(curMsgs); i++ {
		prep.EntriesToSummarize = append(prep.EntriesToSummarize, EntryID(cur.ID(), i))
	}
	if d := r.beforeTree(ctx, prep); d.Cancel {
		res.Cancelled = true
		return res, nil
	}

	if keep == len(msgs) {
		// A session's leaf: switch to that session.
		r.mu.Lock()
		r.sess = nil
		r.custom, r.nextTurn = nil, nil
		err = r.resumePath(path)
		r.mu.Unlock()
		cur.Close()
		if err != nil {
			return res, err
		}
	} else {
		if _, err := r.branch(ctx, branchSource{id: id, messages: slices.Clone(msgs[:keep]), custom: custom}, false); err != nil {
			return res, err
		}
		res.Branched = true
	}
	r.mu.Lock()
	now, n := r.sess, len(r.messages)
	r.mu.Unlock()
	res.SessionID, res.MessageCount, res.NewLeafID = now.ID(), n, leafID(now.ID(), n)
	if now.ID() != cur.ID() {
		r.ObserveSessionStart(SessionStartTree)
	}
	r.observe(Lifecycle{Event: "session_tree", Tree: &TreeChange{SessionID: now.ID(), SessionFile: now.Path(),
		PreviousSessionID: cur.ID(), PreviousSessionFile: cur.Path(), NewLeafID: res.NewLeafID, OldLeafID: oldLeaf}})
	return res, nil
}

// findSession is the session of this workspace whose id is id (exactly:
// an entry id is not a prefix search).
func (r *Runtime) findSession(id string) (session.Info, error) {
	infos, err := session.ListWorkspace(r.cfg.Home, r.cfg.CWD)
	if err != nil {
		return session.Info{}, err
	}
	for _, in := range infos {
		if in.ID == id {
			return in, nil
		}
	}
	return session.Info{}, fmt.Errorf("no session %s in this workspace (get_tree and zot/sessions list them)", id)
}

// commonPrefix is how many first messages a and b share.
func commonPrefix(a, b []message.Message) int {
	n := 0
	for n < len(a) && n < len(b) {
		x, _ := json.Marshal(a[n])
		y, _ := json.Marshal(b[n])
		if string(x) != string(y) {
			break
		}
		n++
	}
	return n
}

// TreeBranch is one session of the tree.
type TreeBranch struct {
	SessionID string `json:"session_id"`
	Parent    string `json:"parent,omitempty"`
	Title     string `json:"title,omitempty"`
	Messages  int    `json:"messages"`
	LeafID    string `json:"leaf_id,omitempty"`
	Current   bool   `json:"current,omitempty"`
}

// Tree is the current session's tree: every session of the workspace
// with the same root (following parent), oldest first.
type Tree struct {
	SessionID string       `json:"session_id"`
	LeafID    string       `json:"leaf_id,omitempty"`
	Sessions  []TreeBranch `json:"sessions"`
}

// SessionTree returns the current session's tree.
func (r *Runtime) SessionTree() (Tree, error) {
	r.mu.Lock()
	if r.sess == nil {
		r.mu.Unlock()
		return Tree{}, errors.New("sessions are off (--no-session): there is no session tree")
	}
	cur, n := r.sess.ID(), len(r.messages)
	r.mu.Unlock()
	infos, err := session.ListWorkspace(r.cfg.Home, r.cfg.CWD)
	if err != nil {
		return Tree{}, err
	}
	byID := map[string]session.Info{}
	for _, in := range infos {
		byID[in.ID] = in
	}
	root := func(id string) string {
		seen := map[string]bool{}
		for !seen[id] {
			seen[id] = true
			in, ok := byID[id]
			if !ok || in.Parent == "" {
				return id
			}
			id = in.Parent
		}
		return id // a cycle (hand-edited files): stop where it closes
	}
	mine := root(cur)
	t := Tree{SessionID: cur, LeafID: leafID(cur, n), Sessions: []TreeBranch{}}
	slices.SortStableFunc(infos, func(a, b session.Info) int { return cmp.Compare(a.Created.UnixNano(), b.Created.UnixNano()) })
	for _, in := range infos {
		if root(in.ID) != mine {
			continue
		}
		b := TreeBranch{SessionID: in.ID, Parent: in.Parent, Title: in.Title, Messages: in.Messages, LeafID: leafID(in.ID, in.Messages), Current: in.ID == cur}
		if b.Current {
			b.Messages, b.LeafID = n, t.LeafID // the live transcript (a rewind the file replays the same)
		}
		t.Sessions = append(t.Sessions, b)
	}
	if !slices.ContainsFunc(t.Sessions, func(b TreeBranch) bool { return b.Current }) {
		t.Sessions = append(t.Sessions, TreeBranch{SessionID: cur, Messages: n, LeafID: t.LeafID, Current: true})
	}
	return t, nil
}

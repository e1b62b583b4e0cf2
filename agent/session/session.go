// Package session persists transcripts as JSONL, one file per session under
// $ZOT_HOME/sessions/<workspace>/. Each message is appended as it completes
// with a single write, so a kill -9 mid-turn loses nothing already finished;
// a torn last line is skipped on load and orphaned tool calls are repaired.
package session

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/agent/message"
)

// Entry kinds, one JSON object a line.
const (
	KindHeader  = "session"
	KindMessage = "message"
	KindUsage   = "usage"
	KindCompact = "compact" // the transcript was replaced by Messages
)

// Entry is one line of a session file.
type Entry struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
	Cwd  string `json:"cwd,omitempty"`
	// Created is when the entry was written (Append stamps it), so no line
	// carries a zero time.
	Created  time.Time         `json:"created,omitzero"`
	Provider string            `json:"provider,omitempty"`
	Model    string            `json:"model,omitempty"`
	Message  *message.Message  `json:"message,omitempty"`
	Usage    *message.Usage    `json:"usage,omitempty"`
	Messages []message.Message `json:"messages,omitempty"`
}

// Info describes a stored session.
type Info struct {
	ID       string    `json:"id"`
	Path     string    `json:"path"`
	Cwd      string    `json:"cwd"`
	Created  time.Time `json:"created"`
	Modified time.Time `json:"modified"`
	Title    string    `json:"title"` // the first user prompt, shortened
	Messages int       `json:"messages"`
}

// ErrLocked is returned by Open when another writer (another zot process,
// another window) holds the session file.
var ErrLocked = errors.New("the session is open in another zot process")

// Dir is the session directory of a workspace: the cwd flattened into one
// path element, as zot does.
func Dir(home, cwd string) string {
	slug := strings.Trim(strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(filepath.Clean(cwd)), "-")
	if slug == "" {
		slug = "root"
	}
	return filepath.Join(home, "sessions", "--"+slug+"--")
}

// Writer appends to one session file. Safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	id     string
	path   string
	redact func([]byte) []byte
}

// SetRedact makes every later entry pass through redact (masking secrets)
// before it is written.
func (w *Writer) SetRedact(redact func([]byte) []byte) {
	w.mu.Lock()
	w.redact = redact
	w.mu.Unlock()
}

// Create starts a new session file in dir.
func Create(dir, cwd, provider, model string) (*Writer, error) {
	// Transcripts hold the user's code and tool output: owner only.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	id := newID()
	now := time.Now().UTC()
	path := filepath.Join(dir, now.Format("20060102T150405Z")+"_"+id+".jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("session: locking %s: %w", path, err)
	}
	w := &Writer{f: f, id: id, path: path}
	if err := w.Append(Entry{Kind: KindHeader, ID: id, Cwd: cwd, Created: now, Provider: provider, Model: model}); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Open reopens an existing session file for appending. The file stays
// locked until Close; ErrLocked (wrapped) if another writer holds it, so
// two windows never interleave their conversations in one file.
func Open(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: %w", idFromPath(path), err)
	}
	// A torn last line (kill -9 mid-write) must not glue onto the next entry.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if r, err := os.Open(path); err == nil {
			if _, err := r.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
				f.Write([]byte("\n"))
			}
			r.Close()
		}
	}
	return &Writer{f: f, id: idFromPath(path), path: path}, nil
}

// ID is the session's id.
func (w *Writer) ID() string { return w.id }

// Path is the session file.
func (w *Writer) Path() string { return w.path }

// Append writes one entry as one line with one write call.
func (w *Writer) Append(e Entry) error {
	if e.Created.IsZero() {
		e.Created = time.Now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return errors.New("session: closed")
	}
	if w.redact != nil {
		b = w.redact(b)
	}
	b = append(b, '\n')
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// Loaded is a session read back from disk.
type Loaded struct {
	Info     Info
	Provider string
	Model    string
	Messages []message.Message
	Usage    message.Usage
	Repaired int // orphaned tool calls given a synthetic error result
	Skipped  int // unreadable lines skipped (a torn last line after kill -9)
}

// Load reads a session file, replays compactions and repairs orphans.
func Load(path string) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	l := &Loaded{Info: Info{ID: idFromPath(path), Path: path}}
	r := bufio.NewReaderSize(f, 64*1024)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var e Entry
			if json.Unmarshal(line, &e) != nil {
				l.Skipped++
			} else {
				l.apply(e)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("session: %s: %w", path, err)
		}
	}
	l.Messages, l.Repaired = Repair(l.Messages)
	if st, err := os.Stat(path); err == nil {
		l.Info.Modified = st.ModTime()
	}
	l.Info.Messages = len(l.Messages)
	return l, nil
}

func (l *Loaded) apply(e Entry) {
	switch e.Kind {
	case KindHeader:
		if e.ID != "" {
			l.Info.ID = e.ID
		}
		l.Info.Cwd, l.Info.Created, l.Provider, l.Model = e.Cwd, e.Created, e.Provider, e.Model
	case KindMessage:
		if e.Message != nil {
			l.Messages = append(l.Messages, *e.Message)
			if l.Info.Title == "" && e.Message.Role == message.RoleUser {
				l.Info.Title = title(message.TextOf(e.Message.Content))
			}
		}
	case KindUsage:
		if e.Usage != nil {
			l.Usage = l.Usage.Add(*e.Usage)
		}
	case KindCompact:
		l.Messages = append([]message.Message(nil), e.Messages...)
		for _, m := range e.Messages {
			if l.Info.Title == "" && m.Role == message.RoleUser && !m.Summary {
				l.Info.Title = title(message.TextOf(m.Content))
			}
		}
	}
}

// Repair makes a transcript valid for a provider: every tool call gets a
// result. Calls whose results never arrived (the process died, the run was
// aborted) get a synthetic error result right after their assistant message.
func Repair(msgs []message.Message) ([]message.Message, int) {
	out := make([]message.Message, 0, len(msgs))
	repaired := 0
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		out = append(out, m)
		calls := m.ToolCalls()
		if m.Role != message.RoleAssistant || len(calls) == 0 {
			continue
		}
		have := map[string]bool{}
		var next *message.Message
		if i+1 < len(msgs) && msgs[i+1].Role == message.RoleUser && hasResults(msgs[i+1]) {
			next = &msgs[i+1]
			for _, c := range next.Content {
				if c.Type == message.TypeToolResult {
					have[c.CallID] = true
				}
			}
		}
		var missing []message.Content
		for _, c := range calls {
			if !have[c.ID] {
				missing = append(missing, message.Content{
					Type: message.TypeToolResult, CallID: c.ID, IsError: true,
					Content: []message.Content{message.Text("aborted: the tool did not finish (the run was interrupted)")},
				})
			}
		}
		if len(missing) == 0 {
			continue
		}
		repaired += len(missing)
		if next != nil {
			fixed := *next
			fixed.Content = append(append([]message.Content(nil), next.Content...), missing...)
			out = append(out, fixed)
			i++
		} else {
			out = append(out, message.Message{Role: message.RoleUser, Content: missing, Time: m.Time})
		}
	}
	return out, repaired
}

func hasResults(m message.Message) bool {
	for _, c := range m.Content {
		if c.Type == message.TypeToolResult {
			return true
		}
	}
	return false
}

// List returns the sessions in dir, newest first. A missing dir is empty.
func List(dir string) ([]Info, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var out []Info
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		l, err := Load(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, l.Info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}

// Find resolves "latest" or an id (or a unique id prefix) to a file in dir.
func Find(dir, which string) (string, error) {
	infos, err := List(dir)
	if err != nil {
		return "", err
	}
	if len(infos) == 0 {
		return "", fmt.Errorf("no sessions yet for this workspace (%s)", dir)
	}
	if which == "" || which == "latest" {
		return infos[0].Path, nil
	}
	var hits []Info
	for _, in := range infos {
		if in.ID == which || strings.HasPrefix(in.ID, which) {
			hits = append(hits, in)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("no session %q in this workspace; list them with `zot sessions`", which)
	case 1:
		return hits[0].Path, nil
	default:
		return "", fmt.Errorf("session id %q is ambiguous (%d matches); give more characters", which, len(hits))
	}
}

func newID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func idFromPath(p string) string {
	base := strings.TrimSuffix(filepath.Base(p), ".jsonl")
	if i := strings.LastIndexByte(base, '_'); i >= 0 {
		return base[i+1:]
	}
	return base
}

func title(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}

// Package session persists transcripts as JSONL in zot's own format and
// layout, so zot and we continue each other's conversations:
// $ZOT_HOME/sessions/<first 16 hex of sha256(cwd)>/<YYYYMMDD-HHMMSS>-<id[:8]>.jsonl,
// a meta line first, then message and usage lines (zotformat.go). Entries
// zot has no line for (compactions, titles) are extra line types zot skips.
// Sessions in our earlier layout (legacy.go) are still listed and read;
// resuming one migrates it.
//
// Each entry is appended as it completes with a single write, so a kill -9
// mid-turn loses nothing already finished; a torn last line is skipped on
// load and orphaned tool calls are repaired.
package session

import (
	"bufio"
	"bytes"
	"crypto/sha256"
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

	"github.com/google/uuid"

	"github.com/zot-editors/zot/agent/message"
)

// Entry kinds: what a caller appends. The writer turns each into zot's
// lines (header, message, usage) or into one of our extra line types.
const (
	KindHeader  = "session"
	KindMessage = "message"
	KindUsage   = "usage"
	KindCompact = "compact" // the transcript was replaced by Messages
	KindTitle   = "title"   // the session was given a title
	KindCustom  = "custom"  // an extension's append_entry (Custom)
	KindRewind  = "rewind"  // the transcript was cut to its first Keep messages
)

// Custom is an extension's own entry (append_entry): state that follows
// the session. It is a line of our own type (x-entry), which zot skips;
// the transcript does not see it.
type Custom struct {
	Extension string          `json:"extension"`
	Kind      string          `json:"kind"`
	Data      json.RawMessage `json:"data"`
	Time      time.Time       `json:"time"`
}

// Entry is one thing appended to a session. Its JSON form is our earlier
// line format, still read from legacy files; new files are written in
// zot's format.
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
	// Cumulative is the session's usage including Usage (zot's usage lines
	// carry both). Nil: the sum of what this writer appended.
	Cumulative *message.Usage `json:"-"`
	Title      string         `json:"-"`
	Custom     *Custom        `json:"-"`
	// Keep is a rewind's length: the transcript keeps its first Keep
	// messages (retry, edit and resend); the lines before stay in the
	// file as the old branch.
	Keep int `json:"-"`
}

// Info describes a stored session.
type Info struct {
	ID       string    `json:"id"`
	Path     string    `json:"path"`
	Cwd      string    `json:"cwd"`
	Created  time.Time `json:"created"`
	Modified time.Time `json:"modified"`
	Title    string    `json:"title"` // set by the session, else the first user prompt, shortened
	Messages int       `json:"messages"`
	// Parent is the session this one was forked from (zot's meta.parent).
	Parent string `json:"parent,omitempty"`
}

// ErrLocked is returned by Open when another writer (another zot process,
// another window) holds the session file.
var ErrLocked = errors.New("the session is open in another zot process")

// Dir is the session directory of a workspace, as zot names it: the first
// 16 hex digits of the SHA-256 of the absolute working directory.
func Dir(home, cwd string) string {
	sum := sha256.Sum256([]byte(absClean(cwd)))
	return filepath.Join(home, "sessions", hex.EncodeToString(sum[:])[:16])
}

func absClean(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Writer appends to one session file. Safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	id     string
	path   string
	redact func([]byte) []byte
	total  message.Usage // usage appended through this writer, for Entry.Cumulative == nil
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
	return CreateMeta(dir, Meta{Cwd: cwd, Provider: provider, Model: model})
}

// CreateMeta starts a new session file in dir with meta as its first line.
// An empty ID gets a fresh UUID, a zero Started the current time.
func CreateMeta(dir string, meta Meta) (*Writer, error) {
	// Transcripts hold the user's code and tool output: owner only.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if meta.Started.IsZero() {
		meta.Started = time.Now().UTC()
	}
	fresh := meta.ID == ""
	for attempt := 0; ; attempt++ {
		if fresh {
			meta.ID = uuid.NewString()
		}
		path := filepath.Join(dir, fileName(meta.Started, meta.ID))
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) && fresh && attempt < 3 {
			continue // two sessions in one second whose ids share 8 digits
		}
		if err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("session: locking %s: %w", path, err)
		}
		w := &Writer{f: f, id: meta.ID, path: path}
		if err := w.writeLines(metaBytes(meta)); err != nil {
			f.Close()
			os.Remove(path)
			return nil, err
		}
		return w, nil
	}
}

// fileName is zot's: local start time, then the id's first 8 characters.
func fileName(started time.Time, id string) string {
	short := strings.ReplaceAll(id, "-", "")
	if len(short) > 8 {
		short = short[:8]
	}
	return started.Local().Format("20060102-150405") + "-" + short + ".jsonl"
}

func metaBytes(m Meta) []byte {
	m.Started = m.Started.UTC()
	b, _ := json.Marshal(metaLine{Type: lineMeta, Meta: m})
	return append(b, '\n')
}

// Open reopens an existing session file for appending. The file stays
// locked until Close; ErrLocked (wrapped) if another writer holds it, so
// two windows never interleave their conversations in one file. A file in
// our earlier format is refused: Migrate it (appending zot's lines to it
// would leave a file neither reader understands).
func Open(path string) (*Writer, error) {
	id, legacy, err := readHeader(path)
	if err != nil {
		return nil, err
	}
	if legacy {
		return nil, fmt.Errorf("session %s is in the earlier format: migrate it before appending", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	fixTornEnd(f, path)
	return &Writer{f: f, id: id, path: path}, nil
}

// fixTornEnd ends a torn last line (kill -9 mid-write) so it does not glue
// onto the next entry.
func fixTornEnd(f *os.File, path string) {
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if r, err := os.Open(path); err == nil {
			if _, err := r.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
				f.Write([]byte("\n"))
			}
			r.Close()
		}
	}
}

// readHeader reads a session file's id from its first line, and whether
// the file is in our earlier format.
func readHeader(path string) (id string, legacy bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 64*1024).ReadBytes('\n')
	var h struct {
		Kind string `json:"kind"`
		ID   string `json:"id"`
		Meta *Meta  `json:"meta"`
	}
	json.Unmarshal(line, &h)
	switch {
	case h.Kind != "":
		id, legacy = h.ID, true
	case h.Meta != nil:
		id = h.Meta.ID
	}
	if id == "" {
		id = idFromPath(path)
	}
	return id, legacy, nil
}

// ID is the session's id.
func (w *Writer) ID() string { return w.id }

// Path is the session file.
func (w *Writer) Path() string { return w.path }

// Append writes one entry (one or a few lines) with one write call.
func (w *Writer) Append(e Entry) error {
	if e.Created.IsZero() {
		e.Created = time.Now().UTC()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b, err := w.encode(e)
	if err != nil {
		return err
	}
	return w.writeLines(b)
}

// AppendTranscript writes a whole transcript and its usage so far, as a
// fork or a migration starts from: zot reads it as the conversation.
func (w *Writer) AppendTranscript(msgs []message.Message, total message.Usage) error {
	now := time.Now().UTC()
	w.mu.Lock()
	defer w.mu.Unlock()
	var b []byte
	for i := range msgs {
		mb, err := w.encode(Entry{Kind: KindMessage, Message: &msgs[i], Created: now})
		if err != nil {
			return err
		}
		b = append(b, mb...)
	}
	if total != (message.Usage{}) {
		ub, _ := w.encode(Entry{Kind: KindUsage, Usage: &total, Cumulative: &total, Created: now})
		b = append(b, ub...)
	}
	if len(b) == 0 {
		return nil
	}
	return w.writeLines(b)
}

// encode turns an entry into its lines, each ending in a newline. w.mu held.
func (w *Writer) encode(e Entry) ([]byte, error) {
	var b []byte
	add := func(v any) error {
		line, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		b = append(append(b, line...), '\n')
		return nil
	}
	var err error
	switch e.Kind {
	case KindHeader:
		// zot reads the meta line first or not at all.
		return nil, errors.New("session: the header is written by Create, once")
	case KindMessage:
		if e.Message == nil {
			return nil, errors.New("session: message entry without a message")
		}
		if e.Message.Summary {
			if err = add(markLine{Type: lineSummary, Time: e.Created}); err != nil {
				return nil, err
			}
		}
		for _, zm := range toZotMessages(*e.Message, e.Created) {
			if err = add(messageLine{Type: lineMessage, Message: zm}); err != nil {
				return nil, err
			}
		}
	case KindUsage:
		if e.Usage == nil {
			return nil, errors.New("session: usage entry without usage")
		}
		w.total = w.total.Add(*e.Usage)
		cum := w.total
		if e.Cumulative != nil {
			cum, w.total = *e.Cumulative, *e.Cumulative
		}
		err = add(usageLine{Type: lineUsage, Usage: toZotUsage(*e.Usage), Cumulative: toZotUsage(cum)})
	case KindCompact:
		msgs := make([]compactMessage, 0, len(e.Messages))
		for _, m := range e.Messages {
			for _, zm := range toZotMessages(m, e.Created) {
				msgs = append(msgs, compactMessage{zotMessage: zm, Summary: m.Summary})
			}
		}
		err = add(compactLine{Type: lineCompact, Time: e.Created, Messages: msgs})
	case KindRewind:
		if e.Keep < 0 {
			return nil, fmt.Errorf("session: rewind to %d messages", e.Keep)
		}
		err = add(rewindLine{Type: lineRewind, Time: e.Created, Keep: e.Keep})
	case KindTitle:
		err = add(titleLine{Type: lineTitle, Time: e.Created, Title: e.Title})
	case KindCustom:
		if e.Custom == nil {
			return nil, errors.New("session: custom entry without its data")
		}
		err = add(customLine{Type: lineCustom, Time: e.Custom.Time, Extension: e.Custom.Extension, Kind: e.Custom.Kind, Data: e.Custom.Data})
	default:
		return nil, fmt.Errorf("session: unknown entry kind %q", e.Kind)
	}
	return b, err
}

// writeLines writes b (whole lines) with one write call. w.mu held, or w
// not yet shared.
func (w *Writer) writeLines(b []byte) error {
	if w.f == nil {
		return errors.New("session: closed")
	}
	if w.redact != nil {
		b = w.redact(b)
	}
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// AppendCustom stores an extension's custom entry (an x-entry line).
// Load returns them in Loaded.Custom.
func (w *Writer) AppendCustom(c Custom) error {
	if c.Time.IsZero() {
		c.Time = time.Now().UTC()
	}
	return w.Append(Entry{Kind: KindCustom, Custom: &c, Created: c.Time})
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
	Ignored  int // lines of a type we do not know (zot's newer ones), skipped
	Rewinds  int // x-rewind lines that cut the transcript (retry, edit and resend)
	// Tail holds the synthetic results Repair gave the last assistant
	// message's unanswered calls: appending them as a message line makes
	// the file whole for zot too. Nil when that message was answered.
	Tail []message.Content
	// Legacy is set for a file in our earlier format.
	Legacy bool
	// Meta is the file's meta line (zot's format).
	Meta Meta
	// Custom are the extensions' append_entry entries, in file order.
	Custom []Custom

	titled      bool // the title came from the session, not the first prompt
	summaryNext bool // an x-summary line precedes the next message
	lastTool    bool // the last message came from a tool message line
}

// Load reads a session file (zot's format or our earlier one), replays
// compactions and repairs orphans.
func Load(path string) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	l := &Loaded{Info: Info{ID: idFromPath(path), Path: path}}
	r := bufio.NewReaderSize(f, 64*1024)
	first := true
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if first {
				l.Legacy = isLegacyLine(line)
				first = false
			}
			if l.Legacy {
				var e Entry
				if json.Unmarshal(line, &e) != nil {
					l.Skipped++
				} else {
					l.applyLegacy(e)
				}
			} else {
				var a anyLine
				if json.Unmarshal(line, &a) != nil {
					l.Skipped++
				} else {
					l.apply(a)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("session: %s: %w", path, err)
		}
	}
	l.Tail = tailRepair(l.Messages)
	l.Messages, l.Repaired = Repair(l.Messages)
	if st, err := os.Stat(path); err == nil {
		l.Info.Modified = st.ModTime()
	}
	l.Info.Messages = len(l.Messages)
	return l, nil
}

func (l *Loaded) apply(a anyLine) {
	switch a.Type {
	case lineMeta:
		if a.Meta == nil {
			return
		}
		l.Meta = *a.Meta
		if a.Meta.ID != "" {
			l.Info.ID = a.Meta.ID
		}
		l.Info.Cwd, l.Info.Created, l.Provider, l.Model = a.Meta.Cwd, a.Meta.Started, a.Meta.Provider, a.Meta.Model
		l.Info.Parent = a.Meta.Parent
		if a.Meta.Title != "" {
			l.Info.Title, l.titled = title(a.Meta.Title), true
		}
	case lineMessage:
		if a.Message == nil {
			return
		}
		if r := a.Message.Role; r != message.RoleUser && r != message.RoleAssistant && r != roleTool {
			l.Ignored++ // a role the providers here have no place for
			return
		}
		m := a.Message.fromZot()
		m.Summary, l.summaryNext = l.summaryNext, false
		l.addMessage(m, a.Message.Role == roleTool)
	case lineUsage:
		switch {
		case a.Cumulative != nil:
			l.Usage = a.Cumulative.usage()
		case a.Usage != nil:
			l.Usage = l.Usage.Add(a.Usage.usage())
		}
	case lineCompact:
		l.Messages, l.lastTool, l.summaryNext = nil, false, false
		for _, cm := range a.Messages {
			m := cm.fromZot()
			m.Summary = cm.Summary
			l.addMessage(m, cm.Role == roleTool)
		}
	case lineRewind:
		if a.Keep == nil || *a.Keep < 0 {
			l.Skipped++
			return
		}
		// Keep counts the transcript as the runtime held it: repaired, as
		// a resumed runtime's is.
		l.Messages, _ = Repair(l.Messages)
		if *a.Keep < len(l.Messages) {
			l.Messages = l.Messages[:*a.Keep]
			l.Rewinds++
		}
		l.lastTool, l.summaryNext = false, false
	case lineSummary:
		l.summaryNext = true
	case lineTitle:
		if a.Title != "" {
			l.Info.Title, l.titled = title(a.Title), true
		}
	case lineCustom:
		if a.Extension != "" && a.Kind != "" {
			l.Custom = append(l.Custom, Custom{Extension: a.Extension, Kind: a.Kind, Data: a.Data, Time: a.Time})
		}
	default:
		l.Ignored++
	}
}

// addMessage appends m; consecutive tool messages (zot may write one per
// result) become one message of results, as providers want.
func (l *Loaded) addMessage(m message.Message, fromTool bool) {
	if fromTool && l.lastTool && len(l.Messages) > 0 {
		prev := &l.Messages[len(l.Messages)-1]
		prev.Content = append(append([]message.Content(nil), prev.Content...), m.Content...)
		return
	}
	l.Messages = append(l.Messages, m)
	l.lastTool = fromTool
	if !l.titled && l.Info.Title == "" && m.Role == message.RoleUser && !m.Summary {
		l.Info.Title = title(message.TextOf(m.Content))
	}
}

// tailRepair is the synthetic results the last assistant message's
// unanswered tool calls get, or nil.
func tailRepair(msgs []message.Message) []message.Content {
	i := len(msgs) - 1
	if i >= 0 && msgs[i].Role == message.RoleUser && hasResults(msgs[i]) {
		i--
	}
	if i < 0 || msgs[i].Role != message.RoleAssistant {
		return nil
	}
	tail := msgs[i:]
	fixed, n := Repair(tail)
	if n == 0 {
		return nil
	}
	var out []message.Content
	have := map[string]bool{}
	for _, m := range tail[1:] {
		for _, c := range m.Content {
			have[c.CallID] = true
		}
	}
	for _, m := range fixed[1:] {
		for _, c := range m.Content {
			if c.Type == message.TypeToolResult && !have[c.CallID] {
				out = append(out, c)
			}
		}
	}
	return out
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
	sortNewestFirst(out)
	return out, nil
}

func sortNewestFirst(infos []Info) {
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].Modified.After(infos[j].Modified) })
}

// Find resolves "latest" or an id (or a unique id prefix) to a file in dir.
func Find(dir, which string) (string, error) {
	infos, err := List(dir)
	if err != nil {
		return "", err
	}
	return pick(infos, which, dir)
}

// pick resolves "latest" or an id (or a unique id prefix) among infos.
func pick(infos []Info, which, where string) (string, error) {
	if len(infos) == 0 {
		return "", fmt.Errorf("no sessions yet for this workspace (%s)", where)
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

// idFromPath is the id a file's name gives: after the "_" of our earlier
// names, after the last "-" of zot's (its first 8 characters only).
func idFromPath(p string) string {
	base := strings.TrimSuffix(filepath.Base(p), ".jsonl")
	if i := strings.LastIndexByte(base, '_'); i >= 0 {
		return base[i+1:]
	}
	if i := strings.LastIndexByte(base, '-'); i >= 0 {
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

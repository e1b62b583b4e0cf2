package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
)

// validate checks the images and that there is something to send.
func (p *PromptParams) validate(method string) error {
	size := len(p.Text)
	for _, im := range p.Images {
		size += len(im.Data)
	}
	if err := agent.CheckPromptSize(size); err != nil {
		return rpcError(jsonrpc2.InvalidParams, "%s: %v", method, err)
	}
	for i, im := range p.Images {
		if !strings.HasPrefix(im.mimeType(), "image/") {
			return fieldError(method, fmt.Sprintf("images[%d].mimeType", i), "must be an image type such as \"image/png\", not %q", im.mimeType())
		}
		if im.Data == "" {
			return fieldError(method, fmt.Sprintf("images[%d].data", i), "must be the base64 image data")
		}
	}
	if strings.TrimSpace(p.Text) == "" && len(p.Images) == 0 && len(p.Attachments) == 0 {
		return fieldError(method, "text", "must not be empty (or attach images)")
	}
	if p.Context != nil && p.Context.URI == "" {
		return fieldError(method, "context.uri", "is required when context is given")
	}
	for i := range p.Attachments {
		if err := p.Attachments[i].validate(method, fmt.Sprintf("attachments[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// mimeType is the image's type in either spelling.
func (im ImageParam) mimeType() string {
	if im.MimeType == "" {
		return im.MimeTypeRPC
	}
	return im.MimeType
}

func (s *Server) zotPrompt(ctx context.Context, p *PromptParams) (RunStarted, error) {
	r, err := s.promptRun(ctx, MethodPrompt, p, -1)
	if err != nil {
		return RunStarted{}, err
	}
	return s.runs.enqueue(r), nil
}

// promptRun builds the run of a prompt: the images, the legacy context
// appended to the text, the attachments expanded (local ones now, as the
// user sees them when sending; MCP resources when the run starts). keep
// >= 0 rewinds the transcript to that many messages first.
func (s *Server) promptRun(ctx context.Context, method string, p *PromptParams, keep int) (*run, error) {
	imgs := make([]message.Content, 0, len(p.Images))
	for _, im := range p.Images {
		imgs = append(imgs, message.Image(im.mimeType(), im.Data))
	}
	rt, err := s.runtime()
	if err != nil {
		return nil, err
	}
	text := p.Text
	if p.Context != nil {
		text = s.withContext(p.Text, p.Context)
	}
	local, err := s.expandLocal(ctx, p.Attachments)
	if err != nil {
		return nil, err
	}
	size := len(text)
	for _, c := range local {
		size += len(c.Text)
	}
	for _, im := range p.Images {
		size += len(im.Data)
	}
	if err := agent.CheckPromptSize(size); err != nil {
		return nil, rpcError(jsonrpc2.InvalidParams, "%s: with its attachments: %v", method, err)
	}
	atts := p.Attachments
	title := firstLine(p.Text)
	if title == "" && len(atts) > 0 {
		title = "(" + atts[0].Kind + ")"
	}
	return &run{kind: "prompt", title: title, start: func(ctx context.Context) (<-chan agent.Event, error) {
		attached, err := s.expandRemote(ctx, atts, local)
		if err != nil {
			return nil, err
		}
		return rt.PromptWith(ctx, agent.PromptInput{Text: text, Images: imgs, Attached: attached, Keep: keep})
	}}, nil
}

// withContext appends the editor context (file, selection) to a prompt.
func (s *Server) withContext(text string, c *PromptContext) string {
	path := uriPath(c.URI)
	shown := c.URI
	if path != "" {
		shown = s.ws.display(path)
	}
	sel := c.SelectionText
	if sel == "" && c.Range != nil && path != "" {
		if d, ok := s.overlay.get(path); ok {
			s.mu.Lock()
			enc := s.enc
			s.mu.Unlock()
			li := newLineIndex(d.text)
			a, b := li.offset(c.Range.Start, enc), li.offset(c.Range.End, enc)
			if a < b {
				sel = d.text[a:b]
			}
		}
	}
	var b strings.Builder
	b.WriteString(text)
	b.WriteString("\n\n")
	switch {
	case c.Range != nil && sel != "":
		fmt.Fprintf(&b, "(Editor context: %s, lines %d–%d selected:)\n```\n%s\n```", shown, c.Range.Start.Line+1, lastSelectedLine(c.Range), strings.TrimRight(sel, "\n"))
	case sel != "":
		fmt.Fprintf(&b, "(Editor context: selected in %s:)\n```\n%s\n```", shown, strings.TrimRight(sel, "\n"))
	case c.Range != nil:
		fmt.Fprintf(&b, "(Editor context: the cursor is in %s at line %d.)", shown, c.Range.Start.Line+1)
	default:
		fmt.Fprintf(&b, "(Editor context: the user is looking at %s.)", shown)
	}
	return b.String()
}

// lastSelectedLine is the 1-based last line a selection covers. LSP ends
// are exclusive: a whole-line selection ends at {line N+1, character 0},
// which selects nothing of line N+1.
func lastSelectedLine(r *protocol.Range) int {
	if r.End.Character == 0 && r.End.Line > r.Start.Line {
		return int(r.End.Line)
	}
	return int(r.End.Line) + 1
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len([]rune(s)) > 60 {
		s = string([]rune(s)[:60]) + "…"
	}
	return s
}

func (s *Server) zotAbort(ctx context.Context, p *AbortParams) (AbortResult, error) {
	return s.runs.abort(p.ClearQueue), nil
}

func (s *Server) zotState(ctx context.Context) (StateResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return StateResult{}, err
	}
	cur, queued := s.runs.status()
	return StateResult{State: rt.State(), PermissionMode: string(s.permissionMode()), RunID: cur, Queued: queued}, nil
}

func (s *Server) zotMessages(ctx context.Context) (MessagesResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return MessagesResult{}, err
	}
	msgs := rt.Messages()
	wire := make([]message.WireMessage, 0, len(msgs))
	for _, m := range msgs {
		wire = append(wire, message.MessageToWire(m))
	}
	return MessagesResult{Messages: wire}, nil
}

func (s *Server) zotClear(ctx context.Context) (ClearResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return ClearResult{}, err
	}
	if err := rt.Clear(); err != nil {
		return ClearResult{}, err
	}
	s.ws.forgetReads() // the model no longer has what it read
	return ClearResult{Cleared: true}, nil
}

func (s *Server) zotCompact(ctx context.Context) (RunStarted, error) {
	rt, err := s.runtime()
	if err != nil {
		return RunStarted{}, err
	}
	return s.runs.enqueue(&run{kind: "compact", title: "compacting the conversation", start: rt.Compact}), nil
}

func (p *UserBashParams) validate(method string) error {
	if strings.TrimSpace(p.Command) == "" {
		return fieldError(method, "command", "is required: the shell command to run, e.g. \"ls -la\"")
	}
	return nil
}

// zotUserBash runs the user's own shell command as a run of the queue
// (its events: user_bash_start, user_bash_output, user_bash, done).
func (s *Server) zotUserBash(ctx context.Context, p *UserBashParams) (RunStarted, error) {
	rt, err := s.runtime()
	if err != nil {
		return RunStarted{}, err
	}
	ub, ok := rt.(userBasher)
	if !ok {
		return RunStarted{}, rpcError(jsonrpc2.MethodNotFound, "%s: this runtime runs no shell commands", MethodUserBash)
	}
	command, exclude := p.Command, p.ExcludeFromContext
	return s.runs.enqueue(&run{kind: "bash", title: "$ " + firstLine(command), start: func(ctx context.Context) (<-chan agent.Event, error) {
		return ub.UserBash(ctx, command, exclude)
	}}), nil
}

// userBasher is a Runtime that runs the user's shell commands
// (*agent.Runtime; a test's fake may not).
type userBasher interface {
	UserBash(ctx context.Context, command string, excludeFromContext bool) (<-chan agent.Event, error)
}

func (s *Server) zotModels(ctx context.Context) (ModelsResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return ModelsResult{}, err
	}
	return ModelsResult{Models: rt.ListModels(), Current: rt.State().Model}, nil
}

func (p *SetModelParams) validate(method string) error {
	if strings.TrimSpace(p.Model) == "" {
		return fieldError(method, "model", "is required: a model id from zot/models")
	}
	return nil
}

func (s *Server) zotSetModel(ctx context.Context, p *SetModelParams) (SetModelResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return SetModelResult{}, err
	}
	if err := rt.SetModel(p.Model); err != nil {
		return SetModelResult{}, err
	}
	return SetModelResult{Model: rt.State().Model}, nil
}

func (s *Server) zotPing(ctx context.Context) (PingResult, error) {
	return PingResult{Pong: true}, nil
}

func (p *SetReasoningParams) validate(method string) error {
	if strings.TrimSpace(p.Reasoning) == "" {
		return fieldError(method, "reasoning", "is required: off, low, medium or high")
	}
	return nil
}

func (s *Server) zotSetReasoning(ctx context.Context, p *SetReasoningParams) (SetReasoningResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return SetReasoningResult{}, err
	}
	if err := rt.SetReasoning(p.Reasoning); err != nil {
		return SetReasoningResult{}, fieldError(MethodSetReasoning, "reasoning", "%v", err)
	}
	return SetReasoningResult{Reasoning: rt.State().Reasoning}, nil
}

// run is one prompt or compaction, queued or in progress.
type run struct {
	id    string
	kind  string // prompt | compact | bash
	title string
	start func(ctx context.Context) (<-chan agent.Event, error)
	// unstarted (optional) hears why a run ended before it started (an
	// extension's compaction waits for its end).
	unstarted func(why string)

	// guarded by runQueue.mu
	aborted bool
	started bool
}

// runQueue runs prompts and compactions one at a time, in order, and
// streams their events as zot/event notifications.
type runQueue struct {
	s *Server

	mu      sync.Mutex
	cond    *sync.Cond
	seq     int
	queue   []*run
	current *run
	stopped bool
	done    chan struct{}

	// fwd are the tool calls of the current run already on the wire;
	// fwdCh is closed and replaced whenever one is added.
	fwd   map[string]bool
	fwdCh chan struct{}
}

func newRunQueue(s *Server) *runQueue {
	q := &runQueue{s: s, done: make(chan struct{}), fwd: map[string]bool{}, fwdCh: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// enqueue adds a run and says whether it waits behind others.
func (q *runQueue) enqueue(r *run) RunStarted {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	r.id = fmt.Sprintf("run-%d", q.seq)
	ahead := len(q.queue)
	if q.current != nil {
		ahead++
	}
	if q.stopped {
		// Shutting down: answer, then end the run at once.
		go q.s.endUnstarted(r, "zot lsp is shutting down")
		return RunStarted{RunID: r.id}
	}
	q.queue = append(q.queue, r)
	q.cond.Signal()
	return RunStarted{RunID: r.id, Queued: ahead > 0, Ahead: ahead}
}

func (q *runQueue) status() (current string, queued int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.current != nil {
		current = q.current.id
	}
	return current, len(q.queue)
}

// abort stops the current run and, with clearQueue, drops the queued ones.
func (q *runQueue) abort(clearQueue bool) AbortResult {
	q.mu.Lock()
	res := AbortResult{Dropped: []string{}}
	cur := q.current
	started := false
	if cur != nil {
		id := cur.id
		res.Aborted = &id
		cur.aborted = true
		started = cur.started
	}
	var dropped []*run
	if clearQueue {
		dropped = q.queue
		q.queue = nil
	}
	q.mu.Unlock()
	if started {
		if rt, err := q.s.runtime(); err == nil {
			rt.Cancel()
		}
	}
	for _, r := range dropped {
		res.Dropped = append(res.Dropped, r.id)
		q.s.endUnstarted(r, "dropped from the queue by zot/abort")
	}
	return res
}

// endUnstarted ends a run that never started: error, then done.
func (s *Server) endUnstarted(r *run, why string) {
	if r.unstarted != nil {
		r.unstarted(why)
	}
	s.sendEvent(agent.Event{Type: agent.EventError, Message: why}, r.id)
	s.sendEvent(agent.Event{Type: agent.EventDone}, r.id)
}

// sendEvent sends one zot/event of run runID.
func (s *Server) sendEvent(ev agent.Event, runID string) {
	s.sendRaw(append(ev.AppendJSON([]byte(eventPrefix), runID), '}'))
}

// loop is the queue's worker.
func (q *runQueue) loop(ctx context.Context) {
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.queue) == 0 && !q.stopped {
			q.cond.Wait()
		}
		if q.stopped {
			rest := q.queue
			q.queue = nil
			q.mu.Unlock()
			for _, r := range rest {
				q.s.endUnstarted(r, "zot lsp is shutting down")
			}
			return
		}
		r := q.queue[0]
		q.queue = q.queue[1:]
		q.current = r
		q.fwd = map[string]bool{}
		q.mu.Unlock()

		q.execute(ctx, r)

		q.mu.Lock()
		q.current = nil
		q.mu.Unlock()
	}
}

// stop aborts the current run, drops the queue and waits (bounded) for
// the worker, so tools such as bash can clean up their processes.
func (q *runQueue) stop(wait time.Duration) {
	q.mu.Lock()
	already := q.stopped
	q.stopped = true
	cur := q.current
	started := false
	if cur != nil {
		cur.aborted = true
		started = cur.started
	}
	q.cond.Broadcast()
	q.mu.Unlock()
	if started {
		if rt, err := q.s.runtime(); err == nil {
			rt.Cancel()
		}
	}
	if already {
		return
	}
	select {
	case <-q.done:
	case <-time.After(wait):
		q.s.logf("a run did not stop within %v", wait)
	}
}

// execute runs one job and forwards its events.
func (q *runQueue) execute(ctx context.Context, r *run) {
	s := q.s
	q.mu.Lock()
	if r.aborted {
		q.mu.Unlock()
		s.endUnstarted(r, "aborted before it started")
		return
	}
	q.mu.Unlock()

	prog := s.startProgress(r)
	ch, err := r.start(ctx)
	if err != nil {
		prog.end("failed")
		s.endUnstarted(r, err.Error())
		return
	}
	q.mu.Lock()
	r.started = true
	aborted := r.aborted
	q.mu.Unlock()
	if aborted {
		if rt, err := s.runtime(); err == nil {
			rt.Cancel()
		}
	}

	stop := ""
	var buf []byte
	// The announced calls not finished yet, in order: an answer's
	// tool_calls all come before its calls run (zot's order), so the
	// progress names the call running now, the first of them.
	var calls []agent.Event
	for ev := range ch {
		if ev.Type == agent.EventDone {
			// Disk agrees with the buffers before the client hears done.
			if s.savesAtRunEnd() {
				sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				if _, err := s.ws.flushSaves(sctx); err != nil {
					s.sendEvent(agent.Event{Type: agent.EventError, Message: err.Error()}, r.id)
				}
				cancel()
			}
			// A client that hears done sees nothing running.
			q.mu.Lock()
			q.current = nil
			q.mu.Unlock()
		}
		switch ev.Type {
		case agent.EventUserMessage, agent.EventAssistantMessage, agent.EventToolResult:
			// A large text (a 16 MiB prompt) is escaped as it is written.
			sp := ev.Spliced([]byte(eventPrefix), r.id)
			sp.AddRaw([]byte{'}'})
			s.sendSpliced(sp)
		default:
			buf = ev.AppendJSON(append(buf[:0], eventPrefix...), r.id)
			buf = s.sendReusable(append(buf, '}'))
		}
		switch ev.Type {
		case agent.EventToolCall:
			q.mu.Lock()
			q.fwd[ev.ID] = true
			close(q.fwdCh)
			q.fwdCh = make(chan struct{})
			q.mu.Unlock()
			if calls = append(calls, ev); len(calls) == 1 {
				prog.report("running " + ev.Name)
			}
		case agent.EventToolResult:
			for i, c := range calls {
				if c.ID == ev.ID {
					calls = slices.Delete(calls, i, i+1)
					break
				}
			}
			if len(calls) > 0 {
				prog.report("running " + calls[0].Name)
			}
		case agent.EventAssistantStart:
			prog.report("thinking")
		case agent.EventToolUseStart:
			prog.report("writing " + ev.Name)
		case agent.EventTextDelta:
			prog.report("writing")
		case agent.EventTurnEnd:
			stop = ev.Stop
		case agent.EventCompactDone:
			prog.report("compacted")
		}
	}
	switch stop {
	case "aborted":
		prog.end("aborted")
	case "error":
		prog.end("failed")
	default:
		prog.end("done")
	}
}

// eventPrefix starts a zot/event notification; the event's JSON and "}"
// follow. Events are framed by hand: a run can stream 100k deltas.
const eventPrefix = `{"jsonrpc":"2.0","method":"` + MethodEvent + `","params":`

// waitForwarded waits until the tool_call event of id is on the wire, so
// the editor knows a call before any dialog about it.
func (q *runQueue) waitForwarded(ctx context.Context, id string, max time.Duration) {
	t := time.NewTimer(max)
	defer t.Stop()
	for {
		q.mu.Lock()
		ok := q.fwd[id] || q.current == nil
		ch := q.fwdCh
		q.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}

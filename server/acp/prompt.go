package acp

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/internal/jsonstr"
)

// maxToolOutput bounds the live output a tool call shows (its tail).
const maxToolOutput = 64 << 10

// prompt runs one prompt turn: the blocks become the user message, the
// run streams as session/update, the answer is its stop reason. The run
// does not follow the request's context: session/cancel ends it.
func (ss *session) prompt(_ context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	text, images, err := ss.promptContent(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if !ss.begin() {
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32600,
			Message: "Invalid request: sessionId " + ss.id + " is busy: a prompt is running; send session/cancel or wait for its answer",
			Data:    map[string]any{"field": "sessionId", "error": "busy"}}
	}
	defer ss.end()
	// The run has its own lifetime (the connection's), not the request's:
	// the SDK cancels a prompt's context when a second prompt arrives for
	// the session, which zot refuses instead. session/cancel stops it.
	runCtx := withOrigin(ss.srv.ctx, ss, "")
	if name, args, ok := ss.slashCommand(text); ok {
		return ss.runCommand(runCtx, name, args)
	}
	ch, err := ss.rt.Prompt(runCtx, text, images)
	if err != nil {
		return sdk.PromptResponse{}, requestError(err)
	}
	return ss.stream(ch)
}

// begin marks the session busy; false when a prompt already runs.
func (ss *session) begin() bool {
	s := ss.srv
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	ss.mu.Lock()
	if ss.running {
		ss.mu.Unlock()
		s.mu.Unlock()
		return false
	}
	ss.running, ss.cancelled = true, false
	ss.idle = make(chan struct{})
	ss.activeSeq = s.activity.Add(1)
	ss.mu.Unlock()
	s.runs.Add(1)
	s.mu.Unlock()
	return true
}

func (ss *session) end() {
	ss.mu.Lock()
	ss.running = false
	close(ss.idle)
	ss.forwarded = map[string]chan struct{}{}
	ss.calls = map[string]*toolCall{}
	ss.current = ""
	ss.mu.Unlock()
	ss.srv.runs.Done()
}

func (ss *session) wasCancelled() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.cancelled
}

// promptContent turns ACP content blocks into the user message: text as
// is, images attached, resource links named, embedded resources inlined
// with their path.
func (ss *session) promptContent(blocks []sdk.ContentBlock) (string, []message.Content, error) {
	var parts []string
	var images []message.Content
	size := 0
	for i, b := range blocks {
		field := fmt.Sprintf("prompt[%d]", i)
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
			size += len(b.Text.Text)
		case b.Image != nil:
			if b.Image.MimeType == "" || b.Image.Data == "" {
				return "", nil, fieldError(field, "an image needs mimeType and data (base64)")
			}
			images = append(images, message.Image(b.Image.MimeType, b.Image.Data))
			size += len(b.Image.Data)
		case b.ResourceLink != nil:
			l := b.ResourceLink
			path := uriPath(l.Uri)
			parts = append(parts, fmt.Sprintf("(Attached: %s, %s. Read it with the read tool.)", l.Name, path))
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				path := uriPath(r.TextResourceContents.Uri)
				ss.ws.noteOverlaid(path)
				text := strings.TrimRight(r.TextResourceContents.Text, "\n")
				parts = append(parts, fmt.Sprintf("(Editor context: %s)\n```\n%s\n```", ss.ws.display(path), text))
				size += len(text)
			case r.BlobResourceContents != nil:
				blob := r.BlobResourceContents
				mime := ""
				if blob.MimeType != nil {
					mime = *blob.MimeType
				}
				if strings.HasPrefix(mime, "image/") {
					images = append(images, message.Image(mime, blob.Blob))
					size += len(blob.Blob)
				} else {
					parts = append(parts, fmt.Sprintf("(Attached: %s, a binary file (%s) not shown here.)", uriPath(blob.Uri), mime))
				}
			default:
				return "", nil, fieldError(field+".resource", "needs text or blob")
			}
		case b.Audio != nil:
			return "", nil, fieldError(field, "is audio, which zot does not take (promptCapabilities.audio is false)")
		default:
			return "", nil, fieldError(field, "has an unknown type; zot takes text, image, resource_link and resource")
		}
	}
	if err := agent.CheckPromptSize(size); err != nil {
		return "", nil, fieldError("prompt", "%v", err)
	}
	text := strings.Join(parts, "\n\n")
	if strings.TrimSpace(text) == "" && len(images) == 0 {
		return "", nil, fieldError("prompt", "is empty: give at least one text or image block")
	}
	return text, images, nil
}

// uriPath is a file URI's path; other URIs are kept as they are.
func uriPath(u string) string {
	if strings.HasPrefix(u, "file://") {
		if p, err := url.Parse(u); err == nil && p.Path != "" {
			return filepath.Clean(p.Path)
		}
	}
	return u
}

// streamState is what a run's stream tells about its end.
type streamState struct {
	stop     string   // the last turn_end's
	errors   []string // the errors that ended the run
	pending  []string // error events not yet followed by turn_end
	maxSteps bool
	usage    message.Usage
	buf      []byte // reused for chunk encoding
}

// stream forwards a run's events as session/update until done, then
// answers with the stop reason.
func (ss *session) stream(ch <-chan agent.Event) (sdk.PromptResponse, error) {
	var st streamState
	for ev := range ch {
		ss.forward(ev, &st)
	}
	return ss.finish(&st)
}

func (ss *session) finish(st *streamState) (sdk.PromptResponse, error) {
	resp := sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
	if st.maxSteps {
		for _, msg := range st.pending {
			ss.notice("error", "", msg)
		}
	} else {
		st.errors = append(st.errors, st.pending...)
	}
	if u := st.usage; u != (message.Usage{}) {
		resp.Usage = &sdk.Usage{InputTokens: u.Input + u.CacheRead + u.CacheWrite, OutputTokens: u.Output,
			TotalTokens: u.Input + u.CacheRead + u.CacheWrite + u.Output, CachedReadTokens: sdk.Ptr(u.CacheRead), CachedWriteTokens: sdk.Ptr(u.CacheWrite)}
	}
	switch {
	case ss.wasCancelled() || st.stop == provider.StopAborted:
		resp.StopReason = sdk.StopReasonCancelled
	case st.maxSteps:
		resp.StopReason = sdk.StopReasonMaxTurnRequests
	case st.stop == provider.StopError || (st.stop == "" && len(st.errors) > 0):
		return sdk.PromptResponse{}, requestError(fmt.Errorf("%s", strings.Join(st.errors, "; ")))
	case st.stop == provider.StopLength:
		resp.StopReason = sdk.StopReasonMaxTokens
	case st.stop == "refusal":
		resp.StopReason = sdk.StopReasonRefusal
	}
	return resp, nil
}

// forward turns one runtime event into session/update notifications.
func (ss *session) forward(ev agent.Event, st *streamState) {
	switch ev.Type {
	case agent.EventTextDelta:
		st.buf = ss.sendChunk(st.buf, "agent_message_chunk", ev.Delta)
	case agent.EventThinkingDelta:
		st.buf = ss.sendChunk(st.buf, "agent_thought_chunk", ev.Text)
	case agent.EventToolCall:
		kind, title, locs := ss.describeTool(ev.Name, ev.Args)
		raw := rawArgs(ev.Args)
		ss.mu.Lock()
		ss.calls[ev.ID] = &toolCall{name: ev.Name, title: title, kind: kind, rawInput: raw}
		ss.mu.Unlock()
		ss.update(sdk.StartToolCall(sdk.ToolCallId(ev.ID), title, sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusPending),
			sdk.WithStartLocations(locs), sdk.WithStartRawInput(raw)))
		ss.markForwarded(ev.ID)
	case agent.EventToolProgress:
		ss.mu.Lock()
		c := ss.calls[ev.ID]
		var text string
		if c != nil && c.terminal == "" {
			c.output.WriteString(ev.Text)
			if c.output.Len() > 2*maxToolOutput {
				tail := c.output.String()[c.output.Len()-maxToolOutput:]
				c.output.Reset()
				c.output.WriteString(tail)
			}
			text = c.output.String()
			if len(text) > maxToolOutput {
				text = text[len(text)-maxToolOutput:]
			}
		}
		ss.mu.Unlock()
		if text != "" {
			ss.update(sdk.UpdateToolCall(sdk.ToolCallId(ev.ID), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("```\n" + text + "\n```"))})))
		}
	case agent.EventToolResult:
		ss.finishTool(ev)
	case agent.EventUsage:
		st.usage = st.usage.Add(ev.Usage)
		u := ev.Usage
		size := ss.rt.Model().ContextWindow
		ss.update(sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{Used: u.Input + u.CacheRead + u.CacheWrite + u.Output, Size: size,
			Cost: &sdk.Cost{Amount: ev.Cumulative.CostUSD, Currency: "USD"}}})
	case agent.EventTurnEnd:
		st.stop = ev.Stop
		if ev.Stop == provider.StopError {
			st.errors = append(st.errors, st.pending...)
		} else {
			// Errors that did not end the turn (a suppressed message, a
			// failed auto-compaction) are shown as notices.
			for _, msg := range st.pending {
				ss.notice("error", "", msg)
			}
		}
		st.pending = nil
	case agent.EventError:
		if strings.Contains(ev.Message, "(--max-steps)") {
			st.maxSteps = true
		}
		st.pending = append(st.pending, ev.Message)
	case agent.EventCompactDone:
		ss.notice("info", "", "The conversation was compacted into a summary.")
	}
}

// finishTool sends a tool call's final status and content: the diffs of
// write and edit, the terminal of a terminal-backed bash, else the text.
func (ss *session) finishTool(ev agent.Event) {
	status := sdk.ToolCallStatusCompleted
	if ev.IsError {
		status = sdk.ToolCallStatusFailed
	}
	ss.mu.Lock()
	c := ss.calls[ev.ID]
	ss.mu.Unlock()
	var content []sdk.ToolCallContent
	for _, d := range ss.ws.takeDiffs(ev.ID) {
		if d.existed {
			content = append(content, sdk.ToolDiffContent(d.path, d.newText, d.oldText))
		} else {
			content = append(content, sdk.ToolDiffContent(d.path, d.newText))
		}
	}
	if c != nil && c.terminal != "" {
		content = append(content, sdk.ToolTerminalRef(c.terminal))
		if ev.IsError {
			// Why it failed (killed, timed out) is not in the terminal.
			content = append(content, resultContent(ev.Content)...)
		}
	}
	if len(content) == 0 || (ev.IsError && (c == nil || c.terminal == "")) {
		content = append(content, resultContent(ev.Content)...)
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status), sdk.WithUpdateRawOutput(map[string]any{"content": message.TextOf(ev.Content), "isError": ev.IsError})}
	if len(content) > 0 {
		opts = append(opts, sdk.WithUpdateContent(content))
	}
	ss.update(sdk.UpdateToolCall(sdk.ToolCallId(ev.ID), opts...))
}

// sendChunk writes an agent_message_chunk or agent_thought_chunk encoded
// by hand: the SDK's encoder marshals every update three times over
// (struct, map, struct), which the stream of deltas cannot afford (see
// docs/decisions.md). The bytes are those the SDK would write.
func (ss *session) sendChunk(buf []byte, kind, text string) []byte {
	if text == "" {
		return buf
	}
	b := append(buf[:0], `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	b = jsonstr.Append(b, ss.id)
	b = append(b, `,"update":{"content":{"text":`...)
	b = jsonstr.Append(b, text)
	b = append(b, `,"type":"text"},"sessionUpdate":"`...)
	b = append(b, kind...)
	b = append(b, "\"}}}\n"...)
	if _, err := ss.srv.out.Write(b); err != nil && ss.srv.ctx.Err() == nil {
		ss.srv.logf("session/update: %v", err)
	}
	return b
}

// replay sends a loaded conversation as session/update notifications:
// user and agent messages, thinking, tool calls with their results.
func (ss *session) replay(ctx context.Context) {
	for _, m := range ss.rt.Messages() {
		for _, c := range m.Content {
			if ctx.Err() != nil {
				return
			}
			switch c.Type {
			case message.TypeText:
				if m.Role == message.RoleUser {
					ss.update(sdk.UpdateUserMessageText(c.Text))
				} else {
					ss.update(sdk.UpdateAgentMessageText(c.Text))
				}
			case message.TypeImage:
				if m.Role == message.RoleUser {
					ss.update(sdk.UpdateUserMessage(sdk.ImageBlock(c.Data, c.MimeType)))
				}
			case message.TypeThinking:
				if !c.Redacted && c.Text != "" {
					ss.update(sdk.UpdateAgentThoughtText(c.Text))
				}
			case message.TypeToolCall:
				kind, title, locs := ss.describeTool(c.Name, c.Args)
				ss.update(sdk.StartToolCall(sdk.ToolCallId(c.ID), title, sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
					sdk.WithStartLocations(locs), sdk.WithStartRawInput(rawArgs(c.Args))))
			case message.TypeToolResult:
				status := sdk.ToolCallStatusCompleted
				if c.IsError {
					status = sdk.ToolCallStatusFailed
				}
				opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
				if content := resultContent(c.Content); len(content) > 0 {
					opts = append(opts, sdk.WithUpdateContent(content))
				}
				ss.update(sdk.UpdateToolCall(sdk.ToolCallId(c.CallID), opts...))
			}
		}
	}
}

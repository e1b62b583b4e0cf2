package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
)

// Tool is a server's tool as the model sees it. It is bound to the
// server, not to one connection: a call after a restart goes to the new
// one, and one made while the server restarts says so.
type Tool struct {
	s        *server
	name     string // mcp__<server>__<tool>, unique in the set
	remote   string // the server's own name for it
	desc     string
	schema   json.RawMessage
	readOnly bool
}

func (t *Tool) Name() string            { return t.name }
func (t *Tool) Description() string     { return t.desc }
func (t *Tool) Schema() json.RawMessage { return t.schema }

// ReadOnly reports the tool's readOnlyHint: only such tools run without
// asking in ask mode, and only they are offered in readonly mode.
func (t *Tool) ReadOnly() bool { return t.readOnly }

// Server names the MCP server providing the tool; Remote is its name there.
func (t *Tool) Server() string { return t.s.cfg.Name }
func (t *Tool) Remote() string { return t.remote }

var _ tools.Tool = (*Tool)(nil)

// buildTools names the tools of servers (in name order) and resolves
// collisions; servers that are neither ready nor restarting offer none.
func buildTools(ss []*server) []tools.Tool {
	type pending struct {
		s *server
		t *sdk.Tool
	}
	var ps []pending
	var names []string
	for _, s := range ss {
		snap := s.snapshot()
		if snap.state != StateReady && snap.state != StateRestarting {
			continue
		}
		for _, t := range snap.tools {
			ps = append(ps, pending{s, t})
			names = append(names, ToolName(s.cfg.Name, t.Name))
		}
	}
	names = uniqueNames(names)
	out := make([]tools.Tool, 0, len(ps))
	for i, p := range ps {
		out = append(out, newTool(p.s, p.t, names[i]))
	}
	return out
}

// toolNames maps each server to the names its tools have now.
func toolNames(ss []*server) map[*server][]string {
	out := map[*server][]string{}
	for _, t := range buildTools(ss) {
		mt := t.(*Tool)
		out[mt.s] = append(out[mt.s], mt.name)
	}
	return out
}

func newTool(s *server, t *sdk.Tool, name string) *Tool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	if desc == "" {
		desc = fmt.Sprintf("The tool %s of the MCP server %s.", t.Name, s.cfg.Name)
	}
	return &Tool{s: s, name: name, remote: t.Name, desc: desc, schema: schema,
		readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint}
}

// Run calls the tool on the server. Progress notifications become
// tool_progress lines; ctx's end (an abort) sends notifications/cancelled
// and returns at once; the server's timeout ends the call with an error.
func (t *Tool) Run(ctx context.Context, call tools.Call) tools.Result {
	s := t.s
	snap := s.snapshot()
	switch {
	case snap.cs != nil:
	case snap.state == StateRestarting || snap.state == StateStarting:
		msg := fmt.Sprintf("MCP server %s is restarting; tool %s is unavailable for now. Try again shortly", s.cfg.Name, t.name)
		if snap.lastErr != "" {
			msg += " (it " + snap.lastErr + ")"
		}
		return tools.ErrorResult(msg + ".")
	default:
		msg := fmt.Sprintf("MCP server %s is %s; tool %s is unavailable", s.cfg.Name, snap.state, t.name)
		if snap.lastErr != "" {
			msg += ": " + snap.lastErr
		}
		return tools.ErrorResult(msg)
	}
	args := call.Args
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return tools.ErrorResult(fmt.Sprintf("invalid arguments for tool %s: they must be a JSON object (%v)", t.name, err))
	}
	params := &sdk.CallToolParams{Name: t.remote, Arguments: args}
	if call.Progress != nil {
		token, untrack := s.track(func(p *sdk.ProgressNotificationParams) { call.Progress(progressText(p)) })
		defer untrack()
		params.SetProgressToken(token)
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := snap.cs.CallTool(cctx, params)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return tools.ErrorResult(fmt.Sprintf("tool %s cancelled (%v); zot sent notifications/cancelled to MCP server %s", t.name, ctx.Err(), s.cfg.Name))
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		s.log("tool %s timed out after %s; sent notifications/cancelled", t.remote, s.cfg.Timeout)
		return tools.ErrorResult(fmt.Sprintf("tool %s timed out after %s (the MCP server %s's call timeout; set \"timeout\" in seconds in its configuration to change it); zot sent notifications/cancelled", t.name, s.cfg.Timeout, s.cfg.Name))
	default:
		if after := s.snapshot(); after.cs != snap.cs || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) {
			return tools.ErrorResult(fmt.Sprintf("MCP server %s exited during the call to %s; it is restarting (%v)", s.cfg.Name, t.name, err))
		}
		return tools.ErrorResult(fmt.Sprintf("tool %s failed: %v", t.name, err))
	}
	return tools.Result{Content: ConvertResult(res), IsError: res.IsError}
}

func progressText(p *sdk.ProgressNotificationParams) string {
	var b strings.Builder
	if p.Total > 0 {
		fmt.Fprintf(&b, "%s/%s", num(p.Progress), num(p.Total))
	} else {
		b.WriteString(num(p.Progress))
	}
	if p.Message != "" {
		b.WriteString(" ")
		b.WriteString(p.Message)
	}
	return b.String()
}

func num(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}

// ConvertResult turns an MCP tool result into what the model is told:
// text and images as they are; resource links and embedded resources as
// text naming them (an embedded text resource with its text, an image
// resource as an image); audio as a note; structuredContent as JSON text
// unless a text block already carries it.
func ConvertResult(res *sdk.CallToolResult) []message.Content {
	var out []message.Content
	var texts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out = append(out, message.Text(c.Text))
			texts = append(texts, c.Text)
		case *sdk.ImageContent:
			out = append(out, message.Image(c.MIMEType, base64.StdEncoding.EncodeToString(c.Data)))
		case *sdk.AudioContent:
			out = append(out, message.Text(fmt.Sprintf("[audio: %s, %d bytes; zot cannot pass audio to the model]", c.MIMEType, len(c.Data))))
		case *sdk.ResourceLink:
			out = append(out, message.Text(resourceLinkText(c)))
		case *sdk.EmbeddedResource:
			out = append(out, embeddedResource(c.Resource)...)
		default:
			b, _ := json.Marshal(c)
			out = append(out, message.Text(fmt.Sprintf("[content the model cannot take: %s]", b)))
		}
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil && !carriesJSON(texts, b) {
			out = append(out, message.Text("structuredContent: "+string(b)))
		}
	}
	if len(out) == 0 {
		if res.IsError {
			out = append(out, message.Text("the tool failed without a message"))
		} else {
			out = append(out, message.Text("(no output)"))
		}
	}
	return out
}

func resourceLinkText(l *sdk.ResourceLink) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[resource link] %s", l.URI)
	name := l.Title
	if name == "" {
		name = l.Name
	}
	if name != "" {
		fmt.Fprintf(&b, " (%s)", name)
	}
	if l.MIMEType != "" {
		fmt.Fprintf(&b, " %s", l.MIMEType)
	}
	if l.Description != "" {
		fmt.Fprintf(&b, ": %s", l.Description)
	}
	return b.String()
}

func embeddedResource(r *sdk.ResourceContents) []message.Content {
	if r == nil {
		return []message.Content{message.Text("[embedded resource without contents]")}
	}
	head := "[resource " + r.URI
	if r.MIMEType != "" {
		head += " " + r.MIMEType
	}
	head += "]"
	switch {
	case r.Blob == nil:
		return []message.Content{message.Text(head + "\n" + r.Text)}
	case strings.HasPrefix(r.MIMEType, "image/"):
		return []message.Content{message.Text(head), message.Image(r.MIMEType, base64.StdEncoding.EncodeToString(r.Blob))}
	default:
		return []message.Content{message.Text(fmt.Sprintf("%s %d bytes of binary data (not shown)", head, len(r.Blob)))}
	}
}

// carriesJSON reports whether one of texts is the same JSON as b.
func carriesJSON(texts []string, b []byte) bool {
	var want any
	if json.Unmarshal(b, &want) != nil {
		return false
	}
	wb, _ := json.Marshal(want)
	for _, t := range texts {
		var got any
		if json.Unmarshal([]byte(t), &got) != nil {
			continue
		}
		gb, _ := json.Marshal(got)
		if bytes.Equal(gb, wb) {
			return true
		}
	}
	return false
}

package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/wire"
)

// extTool is an extension's tool as a tools.Tool. It is bound to the
// extension's slot, not to one process: a call made after a reload goes
// to the new process, and one made during the swap waits for it.
type extTool struct {
	s               *slot
	ext, name, desc string
	schema          json.RawMessage
}

func (t *extTool) Name() string            { return t.name }
func (t *extTool) Description() string     { return t.desc }
func (t *extTool) Schema() json.RawMessage { return t.schema }

// Extension names the extension providing the tool.
func (t *extTool) Extension() string { return t.ext }

// Run validates the args against the tool's JSON Schema, sends tool_call
// and waits for tool_result. A timeout (60 s or the manifest's) or ctx
// cancellation answers the model with an error and sends tool_cancel; a
// crash of the extension fails the call at once.
func (t *extTool) Run(ctx context.Context, call tools.Call) tools.Result {
	p, err := t.s.acquire(ctx)
	if err != nil {
		return tools.ErrorResult(fmt.Sprintf("tool %s unavailable: %v", t.name, err))
	}
	defer p.end()
	reg := p.toolNamed(t.name)
	if reg == nil {
		return tools.ErrorResult(fmt.Sprintf("tool %s is no longer provided by extension %q", t.name, p.name))
	}
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := reg.validateArgs(args); err != nil {
		return tools.ErrorResult(fmt.Sprintf("invalid arguments for tool %s:\n%v\nThe arguments must match this JSON Schema: %s", t.name, err, reg.schema))
	}
	id := p.newID(wire.TypeToolCall)
	if call.Progress != nil {
		// tool_update frames become the same tool_progress events bash streams.
		p.mu.Lock()
		p.progress[id] = call.Progress
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.progress, id)
			p.mu.Unlock()
		}()
	}
	req := wire.Frame{Type: wire.TypeToolCall, ID: id, Name: t.name, Args: args}
	p.mu.Lock()
	if p.extended {
		// The model's id for the call, as the tool_call event and hooks
		// carry it (pi's toolCallId); zot's frame stays as it was for
		// extensions that did not negotiate the additions.
		req.ToolID = call.ID
	}
	p.mu.Unlock()
	f, err := p.request(ctx, req, p.timeout, true)
	switch {
	case err == nil:
	case errors.Is(err, errTimeout):
		p.log.printf("tool %s timed out after %s; sent tool_cancel", t.name, p.timeout)
		return tools.ErrorResult(fmt.Sprintf("tool %s (extension %q) timed out after %s", t.name, p.name, p.timeout))
	case ctx.Err() != nil:
		return tools.ErrorResult(fmt.Sprintf("tool %s cancelled: %v", t.name, ctx.Err()))
	default:
		return tools.ErrorResult(fmt.Sprintf("tool %s failed: %v", t.name, err))
	}
	return tools.Result{Content: convertBlocks(f.Content, f.IsError), IsError: f.IsError}
}

// convertBlocks turns tool_result blocks into message content.
func convertBlocks(bs []wire.Block, isError bool) []message.Content {
	out := make([]message.Content, 0, len(bs))
	for _, b := range bs {
		switch b.Type {
		case "text", "":
			if b.Text != "" {
				out = append(out, message.Text(b.Text))
			}
		case "image":
			if b.Data == "" || b.MimeType == "" {
				out = append(out, message.Text("[image block without data or mime_type dropped]"))
				continue
			}
			out = append(out, message.Image(b.MimeType, b.Data))
		default:
			out = append(out, message.Text(fmt.Sprintf("[unsupported %q block dropped]", b.Type)))
		}
	}
	if len(out) == 0 {
		if isError {
			out = append(out, message.Text("the tool failed without a message"))
		} else {
			out = append(out, message.Text("(no output)"))
		}
	}
	return out
}

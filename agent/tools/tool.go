// Package tools holds the agent's built-in tools, one file each, and the
// Workspace interface every tool reads and writes through. The default
// Workspace is the disk; the LSP server supplies one that reads unsaved
// buffers and writes through the editor.
package tools

import (
	"context"
	"encoding/json"

	"github.com/zot-editors/zot/agent/message"
)

// Tool is something the model can call.
type Tool interface {
	Name() string
	Description() string
	Schema() json.RawMessage
	Run(ctx context.Context, call Call) Result
}

// Call is one invocation of a tool.
type Call struct {
	ID   string
	Args json.RawMessage
	// Progress streams an optional progress line (tool_progress). Never nil.
	Progress func(text string)
}

// Result is what the model is told. Errors meant for the model are results
// with IsError set, never Go errors.
type Result struct {
	Content []message.Content
	IsError bool
}

// TextResult is a successful text result.
func TextResult(s string) Result { return Result{Content: []message.Content{message.Text(s)}} }

// ErrorResult is a failed result with a message the model can act on.
func ErrorResult(s string) Result {
	return Result{Content: []message.Content{message.Text(s)}, IsError: true}
}

// RunEnder is a tool that holds something for the length of an agent run
// (bash: background jobs). The runtime calls EndRun when a run ends, before
// its done event, and at Close.
type RunEnder interface {
	EndRun()
}

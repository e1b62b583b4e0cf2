// Command fakemcp is a tiny MCP server (the Go SDK's server side) whose
// faults the host's tests need: FAKEMCP_MODE=exit exits at start,
// hang never answers initialize, otherwise it serves tools:
// "crash" (the process dies mid-call), "slow" (sleeps until cancelled;
// FAKEMCP_CANCELLED reads "started" once the call arrived, then
// "cancelled" once notifications/cancelled did),
// "add_tool" (adds "added", sending tools/list_changed) and "write"
// (not read-only), and one resource, fake://notes/today (text), for the
// clients' resource attachments.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	switch os.Getenv("FAKEMCP_MODE") {
	case "exit":
		fmt.Fprintln(os.Stderr, "fakemcp: missing DATABASE_URL, giving up")
		os.Exit(3)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "fakemcp", Version: "1"}, nil)
	if os.Getenv("FAKEMCP_MODE") == "hang" {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				// initialize, or server/discover for the newest protocol
				fmt.Fprintln(os.Stderr, "fakemcp: hanging in", method)
				select {}
			}
		})
	}
	empty := &mcp.Tool{InputSchema: map[string]any{"type": "object"}}
	add := func(name, desc string, ro bool, h mcp.ToolHandler) {
		t := *empty
		t.Name, t.Description = name, desc
		if ro {
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
		s.AddTool(&t, h)
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add("crash", "exits in the middle of the call", true, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "fakemcp: crashing on purpose")
		os.Exit(7)
		return nil, nil
	})
	add("slow", "runs until cancelled", true, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if f := os.Getenv("FAKEMCP_CANCELLED"); f != "" {
			os.WriteFile(f, []byte("started"), 0o644)
		}
		select {
		case <-ctx.Done():
			if f := os.Getenv("FAKEMCP_CANCELLED"); f != "" {
				os.WriteFile(f, []byte("cancelled"), 0o644)
			}
			return nil, ctx.Err()
		case <-time.After(time.Hour):
			return text("done"), nil
		}
	})
	add("add_tool", "adds the tool 'added'", true, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t := *empty
		t.Name, t.Description = "added", "added at run time"
		s.AddTool(&t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("I was added"), nil
		})
		return text("added"), nil
	})
	add("write", "changes something", false, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("written: " + string(req.Params.Arguments)), nil
	})
	s.AddResource(&mcp.Resource{URI: "fake://notes/today", Name: "today", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "Today: ship the Neovim chat."},
			}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fakemcp:", err)
		os.Exit(1)
	}
}

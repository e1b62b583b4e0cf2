package acp

import (
	"encoding/json"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/message"
)

// toolCall is what a session remembers of a running tool call.
type toolCall struct {
	name     string
	title    string
	kind     sdk.ToolKind
	rawInput any
	terminal string // terminal id, when bash runs in the client's terminal
	output   strings.Builder
}

func (ss *session) call(id string) *toolCall {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.calls[id]
}

func (ss *session) setTerminal(id, term string) {
	ss.mu.Lock()
	if c := ss.calls[id]; c != nil {
		c.terminal = term
	}
	ss.mu.Unlock()
}

// toolArgs are the argument fields the titles and locations use.
type toolArgs struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
	Command string `json:"command"`
	URL     string `json:"url"`
	Query   string `json:"query"`
	Offset  int    `json:"offset"`
}

// describeTool gives a tool call its ACP kind, title and locations.
func (ss *session) describeTool(name string, args json.RawMessage) (sdk.ToolKind, string, []sdk.ToolCallLocation) {
	var a toolArgs
	_ = json.Unmarshal(args, &a)
	root := ss.cwd
	abs := func(p string) string {
		if p == "" {
			return root
		}
		if strings.HasPrefix(p, "~") {
			return p
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		return filepath.Clean(p)
	}
	shown := func(p string) string {
		if p == "" {
			return "."
		}
		if rel, err := filepath.Rel(root, abs(p)); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
		return p
	}
	loc := func(line int) []sdk.ToolCallLocation {
		l := sdk.ToolCallLocation{Path: abs(a.Path)}
		if line > 0 {
			l.Line = sdk.Ptr(line)
		}
		return []sdk.ToolCallLocation{l}
	}
	switch name {
	case "read":
		title := "Read " + shown(a.Path)
		if a.Offset > 1 {
			title += " (from line " + itoa(a.Offset) + ")"
		}
		return sdk.ToolKindRead, title, loc(a.Offset)
	case "write":
		return sdk.ToolKindEdit, "Write " + shown(a.Path), loc(0)
	case "edit":
		return sdk.ToolKindEdit, "Edit " + shown(a.Path), loc(0)
	case "bash":
		return sdk.ToolKindExecute, bashTitle(a.Command), nil
	case "ls":
		return sdk.ToolKindRead, "List " + shown(a.Path), loc(0)
	case "grep":
		return sdk.ToolKindSearch, "grep " + quote(a.Pattern) + " in " + shown(a.Path), loc(0)
	case "find":
		return sdk.ToolKindSearch, "Find " + quote(a.Pattern) + " in " + shown(a.Path), loc(0)
	}
	// Extension tools.
	lower := strings.ToLower(name)
	switch {
	case a.URL != "" || strings.Contains(lower, "fetch") || strings.Contains(lower, "web"):
		title := name
		if a.URL != "" {
			title += " " + a.URL
		}
		return sdk.ToolKindFetch, title, nil
	case strings.Contains(lower, "search") && a.Query != "":
		return sdk.ToolKindSearch, name + " " + quote(a.Query), nil
	}
	return sdk.ToolKindOther, name, nil
}

// bashTitle is a command as a title: its first line, clipped.
func bashTitle(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	first, rest, multi := strings.Cut(cmd, "\n")
	if len(first) > 120 {
		first, multi = first[:120], true
	}
	if multi || rest != "" {
		first += " …"
	}
	if first == "" {
		return "bash"
	}
	return first
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// resultContent is a tool result as tool call content: its text (images
// as image blocks).
func resultContent(cs []message.Content) []sdk.ToolCallContent {
	var out []sdk.ToolCallContent
	var text strings.Builder
	for _, c := range cs {
		switch c.Type {
		case message.TypeText:
			if text.Len() > 0 {
				text.WriteString("\n")
			}
			text.WriteString(c.Text)
		case message.TypeImage:
			out = append(out, sdk.ToolContent(sdk.ImageBlock(c.Data, c.MimeType)))
		}
	}
	if text.Len() > 0 {
		out = append([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text.String()))}, out...)
	}
	return out
}

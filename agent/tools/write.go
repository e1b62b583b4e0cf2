package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const writeDescription = `Write a file, replacing it completely or creating it (with any missing parent directories).

- Prefer edit for changing part of an existing file: it is cheaper and safer. Use write for new files or complete rewrites.
- Read an existing file before overwriting it.
- content is written exactly as given: keep the file's indentation and line endings, and end it with a newline.
- path may be absolute, relative to the workspace root, or start with ~.`

var writeSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to write: absolute, relative to the workspace root, or starting with ~"},
    "content": {"type": "string", "description": "The complete new content of the file"}
  },
  "required": ["path", "content"]
}`)

type writeTool struct {
	toolInfo
	ws Workspace
}

// NewWrite returns the write tool.
func NewWrite(ws Workspace) Tool {
	return &writeTool{declare[writeArgs]("write", writeDescription, writeSchema), ws}
}

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

func (t *writeTool) Run(ctx context.Context, call Call) Result {
	var a writeArgs
	if r, ok := decodeArgs(t.name, call.Args, &a, t.schema); !ok {
		return r
	}
	if strings.TrimSpace(a.Path) == "" {
		return ErrorResult("write needs a path and content, e.g. {\"path\": \"notes.md\", \"content\": \"…\"}.")
	}
	if a.Content == nil {
		return ErrorResult("write needs content: the complete new text of the file (use \"\" for an empty file).")
	}
	p := ResolvePath(t.ws, a.Path)
	shown := displayPath(t.ws.Root(), p)
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return ErrorResult(fmt.Sprintf("%s is a directory; give the path of a file inside it.", shown))
	}
	p, err := checkWrite(ctx, t.ws, t.name, p, func() string { return *a.Content })
	if err != nil {
		return ErrorResult(fmt.Sprintf("Could not write %s: %v.", shown, err))
	}
	_, err = t.ws.ReadFile(ctx, p)
	existed := err == nil
	data := []byte(*a.Content)
	if err := t.ws.WriteFile(ctx, p, data); err != nil {
		if ctx.Err() != nil {
			return ErrorResult(fmt.Sprintf("write of %s was cancelled.", shown))
		}
		return ErrorResult(fmt.Sprintf("Could not write %s: %v", shown, err))
	}
	verb := "Created"
	if existed {
		verb = "Overwrote"
	}
	return TextResult(fmt.Sprintf("%s %s (%s, %s).", verb, shown, plural(len(data), "byte"), plural(countLines(data), "line")))
}

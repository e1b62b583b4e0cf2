package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zot-editors/zot/agent/message"
)

// MaxImageBytes is the largest image read returns (providers refuse more).
const MaxImageBytes = 5 * 1024 * 1024

const readDescription = `Read a file from the workspace.

- Text comes back with line numbers, like cat -n: the number, a tab, then the line. The numbers are not part of the file; never copy them into edits.
- At most 2000 lines or 50 KB are returned, whichever comes first; lines longer than 2000 characters are cut. When there is more, the result ends with a note giving the offset to continue from.
- offset (1-based line number) and limit (number of lines) read part of a large file.
- Images (PNG, JPEG, GIF, WebP) come back as images you can look at. Other binary files are refused.
- What you see includes unsaved changes in the user's editor.
- path may be absolute, relative to the workspace root, or start with ~.
- Read a file before editing it. To find files use find or ls; to search contents use grep.`

var readSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to read: absolute, relative to the workspace root, or starting with ~"},
    "offset": {"type": "integer", "minimum": 1, "description": "1-based line number to start at (default 1)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return (default: up to the 2000-line / 50 KB limit)"}
  },
  "required": ["path"]
}`)

type readTool struct {
	toolInfo
	ws Workspace
}

// NewRead returns the read tool.
func NewRead(ws Workspace) Tool {
	return &readTool{declare[readArgs]("read", readDescription, readSchema), ws}
}

type readArgs struct {
	Path   string  `json:"path"`
	Offset flexInt `json:"offset"`
	Limit  flexInt `json:"limit"`
}

func (t *readTool) Run(ctx context.Context, call Call) Result {
	var a readArgs
	if r, ok := decodeArgs(t.name, call.Args, &a, t.schema); !ok {
		return r
	}
	if strings.TrimSpace(a.Path) == "" {
		return ErrorResult("read needs a path. Give the file to read, e.g. {\"path\": \"main.go\"}.")
	}
	if a.Offset < 0 || a.Limit < 0 {
		return ErrorResult("offset and limit must be positive (offset is a 1-based line number).")
	}
	p := ResolvePath(t.ws, a.Path)
	shown := displayPath(t.ws.Root(), p)
	data, err := t.ws.ReadFile(ctx, p)
	if err != nil {
		return fileError(ctx, t.ws.Root(), "read", p, shown, err)
	}
	if n, ok := t.ws.(ReadNoter); ok {
		n.NoteRead(p, data)
	}

	if mime := imageMIME(data); mime != "" {
		if len(data) > MaxImageBytes {
			return ErrorResult(fmt.Sprintf("%s is a %s image of %s, more than the %s limit. Shrink it first with bash (e.g. `convert %s -resize 50%% /tmp/small.png`) and read the smaller copy.",
				shown, mime, formatSize(int64(len(data))), formatSize(MaxImageBytes), shown))
		}
		return Result{Content: imageContent(shown, mime, data)}
	}
	if isBinary(data) {
		return ErrorResult(fmt.Sprintf("%s is a binary file (%s); read only shows text. Inspect it with bash instead, e.g. `file %s` or `xxd %s | head -50`.",
			shown, formatSize(int64(len(data))), shown, shown))
	}

	data = bytes.TrimPrefix(data, utf8BOM)
	text := string(data)
	if text == "" {
		return TextResult(fmt.Sprintf("(%s is empty)", shown))
	}
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	total := len(lines)

	start := 0
	if a.Offset > 0 {
		start = int(a.Offset) - 1
	}
	if start >= total {
		return ErrorResult(fmt.Sprintf("offset %d is past the end of %s, which has %s. Use an offset from 1 to %d.",
			a.Offset, shown, plural(total, "line"), total))
	}
	end := total
	if a.Limit > 0 {
		end = min(start+int(a.Limit), total)
	}

	var b strings.Builder
	truncated, cut := false, false
	i := start
	for ; i < end; i++ {
		if i-start >= MaxOutputLines {
			truncated = true
			break
		}
		line := strings.TrimSuffix(lines[i], "\r")
		if c := cutLine(line, MaxLineLength); len(c) != len(line) {
			line, cut = c, true
		}
		s := fmt.Sprintf("%6d\t%s\n", i+1, line)
		if b.Len()+len(s) > MaxOutputBytes && i > start {
			truncated = true
			break
		}
		b.WriteString(s)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if i < total {
		word := "showing"
		if truncated {
			word = "truncated: showing"
		}
		out += fmt.Sprintf("\n\n[%s lines %d-%d of %d; call read with offset=%d to continue]", word, start+1, i, total, i+1)
	}
	if cut {
		out += fmt.Sprintf("\n[lines longer than %d characters were cut; use bash (e.g. `sed -n 'Np' %s | cut -c 2001-4000`) to see the rest]", MaxLineLength, shown)
	}
	return TextResult(out)
}

var utf8BOM = []byte("\xef\xbb\xbf")

// imageMIME recognises the image formats models accept by magic bytes.
func imageMIME(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

func imageContent(shown, mime string, data []byte) []message.Content {
	return []message.Content{
		message.Text(fmt.Sprintf("Read image %s (%s, %s).", shown, mime, formatSize(int64(len(data))))),
		message.Image(mime, base64.StdEncoding.EncodeToString(data)),
	}
}

// fileError turns a failed workspace read into a message the model can act
// on. verb names the tool ("read", "edit").
func fileError(ctx context.Context, root, verb, p, shown string, err error) Result {
	if ctx.Err() != nil {
		return ErrorResult(fmt.Sprintf("%s of %s was cancelled.", verb, shown))
	}
	if fi, serr := os.Stat(p); serr == nil && fi.IsDir() {
		return ErrorResult(fmt.Sprintf("%s is a directory, not a file. Use ls to list it, or find to search inside it.", shown))
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg := fmt.Sprintf("File not found: %s.", shown)
		if s := similarNames(root, p); len(s) > 0 {
			msg += " Did you mean: " + strings.Join(s, ", ") + "?"
		}
		if verb == "edit" {
			msg += " To create a new file use write; otherwise use ls or find to locate the file."
		} else {
			msg += " Use ls on the parent directory or find to locate the file."
		}
		return ErrorResult(msg)
	case errors.Is(err, fs.ErrPermission):
		return ErrorResult(fmt.Sprintf("Permission denied reading %s.", shown))
	}
	return ErrorResult(fmt.Sprintf("Cannot read %s: %v", shown, err))
}

// similarNames lists up to three entries next to a missing path whose
// names resemble it (same name in another case, or sharing the stem).
func similarNames(root, p string) []string {
	dir, base := filepath.Split(p)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	lb := strings.ToLower(base)
	stem := strings.TrimSuffix(lb, filepath.Ext(lb))
	var out []string
	for _, e := range entries {
		n := strings.ToLower(e.Name())
		ns := strings.TrimSuffix(n, filepath.Ext(n))
		if n == lb || (stem != "" && (ns == stem || (len(stem) >= 3 && strings.Contains(n, stem)))) {
			out = append(out, displayPath(root, filepath.Join(dir, e.Name())))
			if len(out) == 3 {
				break
			}
		}
	}
	return out
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultLsLimit is how many entries ls lists when the model gives no limit.
const DefaultLsLimit = 500

const lsDescription = `List a directory's entries (not recursive), sorted by name; directories end with /.

- path defaults to the workspace root; it may be absolute, relative to the root, or start with ~.
- Entries excluded by .gitignore and the .git directory are left out (the result says how many were hidden).
- At most limit entries are listed (default 500).
- To search a whole tree by name use find; to search file contents use grep.`

var lsSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list (default: the workspace root)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of entries (default 500)"}
  }
}`)

type lsTool struct {
	toolInfo
	ws Workspace
}

// NewLs returns the ls tool.
func NewLs(ws Workspace) Tool {
	return &lsTool{declare[lsArgs]("ls", lsDescription, lsSchema), ws}
}

type lsArgs struct {
	Path  string  `json:"path"`
	Limit flexInt `json:"limit"`
}

func (t *lsTool) Run(ctx context.Context, call Call) Result {
	var a lsArgs
	if r, ok := decodeArgs(t.name, call.Args, &a, t.schema); !ok {
		return r
	}
	limit := DefaultLsLimit
	if a.Limit > 0 {
		limit = int(a.Limit)
	}
	dir := ResolvePath(t.ws, a.Path)
	shown := displayPath(t.ws.Root(), dir)
	if r, ok := checkDir(dir, shown); !ok {
		return r
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ErrorResult(fmt.Sprintf("Cannot list %s: %v", shown, err))
	}
	base := ignoreBase(t.ws, dir)
	st := loadIgnoreStack(ctx, t.ws, base, dir)
	relDir, _ := filepath.Rel(base, dir)
	relDir = filepath.ToSlash(relDir)

	var lines []string
	hidden, more := 0, 0
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return ErrorResult("ls was cancelled.")
		}
		name := e.Name()
		if name == ".git" {
			hidden++
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
				isDir = true
			}
		}
		rel := name
		if relDir != "." {
			rel = relDir + "/" + name
		}
		if st.ignored(rel, isDir) {
			hidden++
			continue
		}
		if len(lines) >= limit {
			more++
			continue
		}
		if isDir {
			name += "/"
		}
		lines = append(lines, name)
	}
	var b strings.Builder
	if len(lines) == 0 {
		fmt.Fprintf(&b, "(%s is empty)", shown)
	} else {
		b.WriteString(strings.Join(lines, "\n"))
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n\n[limit of %d entries reached; %d more not shown. Use find with a pattern, or list a subdirectory]", limit, more)
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "\n[%s hidden: .git or ignored by .gitignore]", plural(hidden, "entry"))
	}
	return TextResult(b.String())
}

// checkDir makes sure dir is an existing directory, for tools that take
// one; ok is false with an error result otherwise.
func checkDir(dir, shown string) (Result, bool) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrorResult(fmt.Sprintf("Directory not found: %s. Use ls on a parent directory, or find, to locate it.", shown)), false
	case err != nil:
		return ErrorResult(fmt.Sprintf("Cannot access %s: %v", shown, err)), false
	case !fi.IsDir():
		return ErrorResult(fmt.Sprintf("%s is a file, not a directory. Use read to view it.", shown)), false
	}
	return Result{}, true
}

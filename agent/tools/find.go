package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// DefaultFindLimit is how many paths find returns by default.
const DefaultFindLimit = 1000

const findDescription = `Find files and directories by glob pattern.

- A pattern without / matches names at any depth: "*.go", "Makefile", "*_test.{go,py}".
- A pattern with / is matched against the path relative to path: "src/**/*.ts", "cmd/*/main.go"; ** matches any number of directories.
- path defaults to the workspace root; it may be absolute, relative to the root, or start with ~.
- Results are sorted paths relative to the workspace root; directories end with /. .gitignore'd entries and .git are skipped.
- At most limit results (default 1000).
- To search file contents use grep.`

var findSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Glob pattern, e.g. \"*.go\" or \"src/**/*.{ts,tsx}\""},
    "path": {"type": "string", "description": "Directory to search (default: the workspace root)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of results (default 1000)"}
  },
  "required": ["pattern"]
}`)

type findTool struct {
	toolInfo
	ws Workspace
}

// NewFind returns the find tool.
func NewFind(ws Workspace) Tool {
	return &findTool{declare[findArgs]("find", findDescription, findSchema), ws}
}

type findArgs struct {
	Pattern string  `json:"pattern"`
	Path    string  `json:"path"`
	Limit   flexInt `json:"limit"`
}

func (t *findTool) Run(ctx context.Context, call Call) Result {
	var a findArgs
	if r, ok := decodeArgs(t.name, call.Args, &a, t.schema); !ok {
		return r
	}
	if strings.TrimSpace(a.Pattern) == "" {
		return ErrorResult(`find needs a glob pattern, e.g. {"pattern": "*.go"} or {"pattern": "src/**/*.ts"}.`)
	}
	globs, err := compileGlobSet(a.Pattern)
	if err != nil {
		return ErrorResult(fmt.Sprintf("Invalid pattern: %v. Use *, ?, [abc], ** and {a,b}.", err))
	}
	limit := DefaultFindLimit
	if a.Limit > 0 {
		limit = int(a.Limit)
	}
	start := ResolvePath(t.ws, a.Path)
	shown := displayPath(t.ws.Root(), start)
	if r, ok := checkDir(start, shown); !ok {
		return r
	}

	var found []string
	more := false
	err = walkTree(ctx, t.ws, start, true, func(e walkEntry) error {
		if !globs.match(e.sub) {
			return nil
		}
		// Collect one more than the limit to know whether there is more.
		if len(found) > limit {
			more = true
			return errStopWalk
		}
		p := e.shown
		if e.isDir {
			p += "/"
		}
		found = append(found, p)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ErrorResult("find was cancelled.")
		}
		return ErrorResult(fmt.Sprintf("Cannot search %s: %v", shown, err))
	}
	if len(found) == 0 {
		return TextResult(fmt.Sprintf("No files found matching %q in %s.", a.Pattern, displayOrRoot(shown)))
	}
	if len(found) > limit {
		more = true
	}
	// Component-wise order is the walk's order, so the first results are
	// also the ones a limited walk found.
	sort.Slice(found, func(i, j int) bool { return pathLess(found[i], found[j]) })
	if len(found) > limit {
		found = found[:limit]
	}
	out := strings.Join(found, "\n")
	if more {
		out += fmt.Sprintf("\n\n[limit of %d results reached; narrow the pattern or path, or raise limit]", limit)
	}
	return TextResult(out)
}

// pathLess orders slash-separated paths component by component, so a
// directory's contents follow it directly ("a/", "a/b", "a.txt").
func pathLess(a, b string) bool {
	a, b = strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/")
	for {
		ai, bi := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		ac, bc := a, b
		if ai >= 0 {
			ac = a[:ai]
		}
		if bi >= 0 {
			bc = b[:bi]
		}
		if ac != bc {
			return ac < bc
		}
		if ai < 0 || bi < 0 {
			return ai < 0 && bi >= 0
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}

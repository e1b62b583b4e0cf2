package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Grep tool tuning.
const (
	// DefaultGrepLimit is how many matching lines grep returns by default.
	DefaultGrepLimit = 100
	// maxGrepContext bounds the context lines around a match.
	maxGrepContext = 20
	// maxGrepFileSize: bigger files are skipped (and counted in the note).
	maxGrepFileSize = 20 * 1024 * 1024
)

const grepDescription = `Search file contents with a regular expression (Go RE2 syntax).

- Output lines look like path:LINE: text, with paths relative to the workspace root. With context, surrounding lines look like path-LINE- text and separate groups are divided by --.
- path (default the workspace root) may be a directory, searched recursively, or a single file. .gitignore'd files, the .git directory and binary files are skipped.
- glob filters files by name: "*.go" matches at any depth, "src/**/*.ts" is matched against the path relative to path, "*.{ts,tsx}" gives alternatives.
- literal: true searches for the pattern text as is (no regex). ignoreCase: true ignores case.
- RE2 has no lookaround or backreferences; escape regex characters such as ( [ . * or use literal.
- At most limit matching lines are returned (default 100); lines longer than 500 characters are cut.
- The search includes unsaved changes in the user's editor.`

var grepSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression (Go RE2 syntax), or plain text with literal: true"},
    "path": {"type": "string", "description": "Directory or file to search (default: the workspace root)"},
    "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" or \"src/**/*.{ts,tsx}\""},
    "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default false)"},
    "literal": {"type": "boolean", "description": "Treat pattern as plain text, not a regular expression (default false)"},
    "context": {"type": "integer", "minimum": 0, "description": "Lines of context before and after each match (default 0)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of matching lines (default 100)"}
  },
  "required": ["pattern"]
}`)

type grepTool struct {
	toolInfo
	ws Workspace
}

// NewGrep returns the grep tool.
func NewGrep(ws Workspace) Tool {
	return &grepTool{declare[grepArgs]("grep", grepDescription, grepSchema), ws}
}

type grepArgs struct {
	Pattern    string   `json:"pattern"`
	Path       string   `json:"path"`
	Glob       string   `json:"glob"`
	IgnoreCase flexBool `json:"ignoreCase"`
	Literal    flexBool `json:"literal"`
	Context    flexInt  `json:"context"`
	Limit      flexInt  `json:"limit"`
}

// grepFile is one file to search and, once searched, what was found.
type grepFile struct {
	abs, shown string
	done       chan struct{} // closed once searched
	lines      []outLine     // matches with their context
	hits       []int         // line numbers of up to limit+1 matches
	skipped    bool          // too large
	binary     bool
	err        error
}

func (t *grepTool) Run(ctx context.Context, call Call) Result {
	var a grepArgs
	if r, ok := decodeArgs(t.name, call.Args, &a, t.schema); !ok {
		return r
	}
	if a.Pattern == "" {
		return ErrorResult(`grep needs a pattern, e.g. {"pattern": "func main", "glob": "*.go"}.`)
	}
	src := a.Pattern
	if a.Literal {
		src = regexp.QuoteMeta(src)
	}
	if a.IgnoreCase {
		src = "(?i)" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return ErrorResult(fmt.Sprintf("Invalid regular expression %q: %v. grep uses Go RE2 syntax (no lookaround or backreferences); escape special characters, or set literal: true to search for the text as is.", a.Pattern, err))
	}
	var globs globSet
	if strings.TrimSpace(a.Glob) != "" {
		if globs, err = compileGlobSet(a.Glob); err != nil {
			return ErrorResult(fmt.Sprintf("Invalid glob: %v.", err))
		}
	}
	limit := DefaultGrepLimit
	if a.Limit > 0 {
		limit = int(a.Limit)
	}
	ctxLines := min(max(int(a.Context), 0), maxGrepContext)

	root := t.ws.Root()
	start := ResolvePath(t.ws, a.Path)
	shownStart := displayPath(root, start)
	fi, err := os.Stat(start)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrorResult(fmt.Sprintf("Path not found: %s. Use ls or find to locate it.", shownStart))
		}
		return ErrorResult(fmt.Sprintf("Cannot access %s: %v", shownStart, err))
	}
	single := !fi.IsDir()

	s := &grepSearch{ws: t.ws, matcher: newMatcher(re, src), limit: limit, ctxLines: ctxLines}
	if ol, ok := t.ws.(OverlayLister); ok {
		s.direct = true
		if paths := ol.OverlaidPaths(); len(paths) > 0 {
			s.overlaid = make(map[string]bool, len(paths))
			for _, p := range paths {
				s.overlaid[p] = true
			}
		}
	}

	// The walk, the searches and the assembly of the output run at once:
	// the walk lists files in order onto `order` and `work`, workers search
	// them in parallel, and the output is assembled in walk order, so the
	// first limit matches are always the same ones. order's buffer bounds
	// how far the searches run ahead of the output (and so the work and
	// memory spent past the limit once it is reached).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	order := make(chan *grepFile, 256)
	work := make(chan *grepFile, 16)
	var wg sync.WaitGroup
	var walkErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(order)
		send := func(f *grepFile) error {
			f.done = make(chan struct{})
			select {
			case order <- f:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case work <- f:
				return nil
			case <-ctx.Done():
				close(f.done)
				return ctx.Err()
			}
		}
		if single {
			send(&grepFile{abs: start, shown: shownStart})
			return
		}
		walkErr = walkTree(ctx, t.ws, start, false, func(e walkEntry) error {
			if e.isDir || !e.searchable() {
				return nil
			}
			if globs != nil && !globs.match(e.sub) {
				return nil
			}
			return send(&grepFile{abs: e.abs, shown: e.shown})
		})
	}()
	for range max(runtime.GOMAXPROCS(0), 2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := s.worker()
			for f := range work {
				w.search(ctx, f)
				close(f.done)
			}
		}()
	}

	var b strings.Builder
	matched, skippedBig := 0, 0
	hitLimit, hitBytes := false, false
	wroteGroup := false
	var singleBinary bool
	for f := range order {
		select {
		case <-f.done:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		switch {
		case f.skipped:
			skippedBig++
			continue
		case f.binary && single:
			singleBinary = true
		}
		if len(f.hits) == 0 {
			continue
		}
		if matched == limit {
			hitLimit = true // one match more than shown: there are more
			break
		}
		take := min(len(f.hits), limit-matched)
		if !writeGrepLines(&b, f, take, ctxLines, &wroteGroup) {
			hitBytes = true
			break
		}
		matched += take
		if take < len(f.hits) {
			hitLimit = true
			break
		}
	}
	cancelled := ctx.Err() != nil && !hitLimit && !hitBytes
	cancel()
	for range order { // let the walk see the cancel and end
	}
	wg.Wait()
	if cancelled {
		return ErrorResult("grep was cancelled.")
	}
	if walkErr != nil && !errors.Is(walkErr, context.Canceled) {
		return ErrorResult(fmt.Sprintf("Cannot search %s: %v", shownStart, walkErr))
	}

	if singleBinary {
		return ErrorResult(fmt.Sprintf("%s is a binary file; grep only searches text.", shownStart))
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if matched == 0 && !hitBytes {
		out = fmt.Sprintf("No matches for %q in %s.", a.Pattern, displayOrRoot(shownStart))
	}
	if hitLimit {
		out += fmt.Sprintf("\n\n[limit of %s reached; there may be more. Narrow the pattern, path or glob, or raise limit]", plural(limit, "match"))
	}
	if hitBytes {
		out += fmt.Sprintf("\n\n[output truncated at %s after %s; narrow the pattern, path or glob]", formatSize(MaxOutputBytes), plural(matched, "match"))
	}
	if skippedBig > 0 {
		out += fmt.Sprintf("\n[%s larger than %s skipped]", plural(skippedBig, "file"), formatSize(maxGrepFileSize))
	}
	return TextResult(out)
}

func displayOrRoot(s string) string {
	if s == "." {
		return "the workspace root"
	}
	return s
}

// grepSearch is what every worker of one grep call shares.
type grepSearch struct {
	ws       Workspace
	matcher  matcher
	limit    int
	ctxLines int
	// direct: files not in overlaid are read from disk, not through ws.
	direct   bool
	overlaid map[string]bool
}

// grepWorker searches files one at a time with its own buffers.
type grepWorker struct {
	*grepSearch
	m    matcher
	buf  []byte
	hits []lineHit
}

func (s *grepSearch) worker() *grepWorker {
	return &grepWorker{grepSearch: s, m: s.matcher}
}

// search reads f and records up to limit+1 matching lines with their
// context (one more than can be shown tells that there are more).
func (w *grepWorker) search(ctx context.Context, f *grepFile) {
	if ctx.Err() != nil {
		return
	}
	var data []byte
	if w.direct && !w.overlaid[f.abs] {
		var tooBig bool
		data, tooBig, f.err = readFileInto(w.buf, f.abs, maxGrepFileSize)
		w.buf = data[:0]
		if tooBig {
			f.skipped = true
			return
		}
	} else {
		data, f.err = w.ws.ReadFile(ctx, f.abs)
		if len(data) > maxGrepFileSize {
			f.skipped = true
			return
		}
	}
	if f.err != nil {
		return
	}
	if isBinary(data) {
		f.binary = true
		return
	}
	w.hits = w.m.scan(data, w.limit+1, w.hits[:0])
	if len(w.hits) == 0 {
		return
	}
	f.hits = make([]int, len(w.hits))
	for i, h := range w.hits {
		f.hits[i] = h.n
	}
	f.lines = renderHits(data, w.hits, w.ctxLines, w.m.re)
}

// writeGrepLines writes f's lines up to its take-th match and that match's
// context. It returns false, writing nothing more, once the output would
// pass MaxOutputBytes.
func writeGrepLines(b *strings.Builder, f *grepFile, take, ctxLines int, wroteGroup *bool) bool {
	lastShown := f.hits[take-1] + ctxLines
	prev := -2 // a file's first line starts a group
	for _, l := range f.lines {
		if l.n > lastShown {
			break
		}
		if ctxLines > 0 && *wroteGroup && l.n != prev+1 {
			b.WriteString("--\n")
		}
		sep := "-"
		if l.match {
			sep = ":"
		}
		line := f.shown + sep + strconv.Itoa(l.n+1) + sep + " " + l.text + "\n"
		if b.Len()+len(line) > MaxOutputBytes {
			return false
		}
		b.WriteString(line)
		prev = l.n
		*wroteGroup = true
	}
	return true
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"
)

// Grep tool tuning.
const (
	// DefaultGrepLimit is how many matching lines grep returns by default.
	DefaultGrepLimit = 100
	// maxGrepContext bounds the context lines around a match.
	maxGrepContext = 20
	// maxGrepFileSize: bigger files are skipped (and counted in the note).
	maxGrepFileSize = 20 * 1024 * 1024
	// grepBatch is how many files are searched in parallel between merges.
	grepBatch = 64
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
	return &grepTool{toolInfo{"grep", grepDescription, grepSchema}, ws}
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
	lines      []string // set when there are matches
	matches    []int    // 0-based line numbers of matching lines
	skipped    bool     // too large
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

	var files []*grepFile
	single := !fi.IsDir()
	if single {
		files = append(files, &grepFile{abs: start, shown: shownStart})
	} else {
		err := walkTree(ctx, t.ws, start, func(e walkEntry) error {
			if e.isDir {
				return nil
			}
			if globs != nil {
				rel := displayPath(start, e.abs)
				if !globs.match(rel) {
					return nil
				}
			}
			f := &grepFile{abs: e.abs, shown: displayPath(root, e.abs)}
			if info, err := e.d.Info(); err == nil && info.Mode().IsRegular() && info.Size() > maxGrepFileSize {
				f.skipped = true
			}
			files = append(files, f)
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return ErrorResult("grep was cancelled.")
			}
			return ErrorResult(fmt.Sprintf("Cannot search %s: %v", shownStart, err))
		}
	}

	// A literal every match must contain lets most files be rejected with
	// one fast substring search instead of a regex scan of every line.
	lit := requiredLiteral(src)

	var b strings.Builder
	matched, skippedBig := 0, 0
	hitLimit, hitBytes := false, false
	wroteGroup := false
	var singleBinary bool

	for i := 0; i < len(files) && !hitLimit && !hitBytes; i += grepBatch {
		batch := files[i:min(i+grepBatch, len(files))]
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for _, f := range batch {
			if f.skipped {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if bin := t.searchFile(ctx, f, re, lit, limit); bin && single {
					singleBinary = true
				}
			}()
		}
		wg.Wait()
		if ctx.Err() != nil {
			return ErrorResult("grep was cancelled.")
		}
		for _, f := range batch {
			if f.skipped {
				skippedBig++
				continue
			}
			if len(f.matches) == 0 {
				continue
			}
			take := min(len(f.matches), limit-matched)
			if !renderFile(&b, f, re, take, ctxLines, &wroteGroup) {
				hitBytes = true
				break
			}
			matched += take
			f.lines = nil // let the batch's text go
			if matched >= limit {
				hitLimit = take < len(f.matches) || i+grepBatch < len(files) || moreMatches(batch, f)
				break
			}
		}
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

// moreMatches reports whether a file after f in batch has matches.
func moreMatches(batch []*grepFile, f *grepFile) bool {
	after := false
	for _, g := range batch {
		if after && len(g.matches) > 0 {
			return true
		}
		if g == f {
			after = true
		}
	}
	return false
}

// searchFile reads f through the workspace and records up to limit
// matching lines. It reports whether the file was binary.
func (t *grepTool) searchFile(ctx context.Context, f *grepFile, re *regexp.Regexp, lit literal, limit int) bool {
	if ctx.Err() != nil {
		return false
	}
	data, err := t.ws.ReadFile(ctx, f.abs)
	if err != nil {
		return false
	}
	if isBinary(data) {
		return true
	}
	text := string(data)
	if !lit.mayMatch(text) {
		return false
	}
	var matches []int
	n := 0
	for rest := text; rest != ""; n++ {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if re.MatchString(strings.TrimSuffix(line, "\r")) {
			matches = append(matches, n)
			if len(matches) > limit { // one more tells there is more
				break
			}
		}
	}
	if len(matches) > 0 {
		f.matches = matches
		f.lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	return false
}

// renderFile writes the first take matches of f with context. It returns
// false, writing nothing more, once the output would pass MaxOutputBytes.
func renderFile(b *strings.Builder, f *grepFile, re *regexp.Regexp, take, ctxLines int, wroteGroup *bool) bool {
	isMatch := make(map[int]bool, len(f.matches))
	for _, m := range f.matches {
		isMatch[m] = true
	}
	last := -1
	for _, m := range f.matches[:take] {
		from, to := max(0, m-ctxLines), min(len(f.lines)-1, m+ctxLines)
		if from <= last {
			from = last + 1
		} else if ctxLines > 0 && *wroteGroup {
			b.WriteString("--\n")
		}
		for i := from; i <= to; i++ {
			sep := "-"
			if isMatch[i] {
				sep = ":"
			}
			line := strings.TrimSuffix(f.lines[i], "\r")
			if isMatch[i] {
				line = matchWindow(line, re)
			}
			line = cutLine(line, MaxGrepLineLength)
			s := fmt.Sprintf("%s%s%d%s %s\n", f.shown, sep, i+1, sep, line)
			if b.Len()+len(s) > MaxOutputBytes {
				return false
			}
			b.WriteString(s)
		}
		last = max(last, to)
		*wroteGroup = true
	}
	return true
}

// matchWindow makes sure a long line shows its match: when the match ends
// past MaxGrepLineLength characters, the line is shown from shortly before
// the match, after a marker.
func matchWindow(line string, re *regexp.Regexp) string {
	if len(line) <= MaxGrepLineLength {
		return line
	}
	loc := re.FindStringIndex(line)
	if loc == nil || utf8.RuneCountInString(line[:loc[1]]) <= MaxGrepLineLength {
		return line
	}
	from := loc[0]
	for n := 0; from > 0 && n < 100; n++ {
		_, size := utf8.DecodeLastRuneInString(line[:from])
		from -= size
	}
	return fmt.Sprintf("[%d chars cut] …", utf8.RuneCountInString(line[:from])) + line[from:]
}

// literal is text every match of a pattern contains, possibly up to ASCII
// case. The zero literal rules nothing out.
type literal struct {
	text string
	fold bool // compare ASCII letters case-insensitively (text is lower case)
}

// requiredLiteral finds the longest literal that every match of the
// pattern src must contain: a literal at the top, or one of the parts of a
// top-level concatenation (through groups and x+ / x{n,} with n ≥ 1).
// Case-folded literals are used only when ASCII, where folding is exact.
func requiredLiteral(src string) literal {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return literal{}
	}
	var walk func(re *syntax.Regexp) literal
	walk = func(re *syntax.Regexp) literal {
		switch re.Op {
		case syntax.OpLiteral:
			s := string(re.Rune)
			if re.Flags&syntax.FoldCase == 0 {
				return literal{text: s}
			}
			for i := 0; i < len(s); i++ {
				if s[i] >= utf8.RuneSelf {
					return literal{}
				}
			}
			return literal{text: strings.ToLower(s), fold: true}
		case syntax.OpCapture, syntax.OpPlus:
			return walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				return walk(re.Sub[0])
			}
		case syntax.OpConcat:
			var best literal
			for _, sub := range re.Sub {
				if l := walk(sub); len(l.text) > len(best.text) {
					best = l
				}
			}
			return best
		}
		return literal{}
	}
	return walk(re)
}

// mayMatch reports whether text contains the literal.
func (l literal) mayMatch(text string) bool {
	switch {
	case l.text == "":
		return true
	case !l.fold:
		return strings.Contains(text, l.text)
	}
	// Two non-ASCII runes fold to ASCII letters: ſ (U+017F) to s and the
	// Kelvin sign (U+212A) to k. A text holding them gets the full scan.
	if strings.Contains(text, "\u017f") || strings.Contains(text, "\u212a") {
		return true
	}
	return strings.Contains(asciiLower(text), l.text)
}

// asciiLower lower-cases ASCII letters only.
func asciiLower(s string) string {
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

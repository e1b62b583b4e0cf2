package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

const editDescription = `Edit a file by replacing exact text.

- edits is a list of {oldText, newText} replacements applied together. Each oldText must appear exactly once in the file as it is now (before any of the edits), and the edits must not overlap.
- oldText must match the file exactly, including indentation and blank lines. Copy it from a recent read, without the line-number prefix read adds.
- Include enough surrounding lines in oldText to make it unique; keep it as short as that allows.
- To delete text, use an empty newText. To create a file, or rewrite one completely, use write.
- Line endings are handled for you: a file with CRLF endings keeps them, and a byte-order mark is kept.
- The result shows a unified diff of the change. Edits apply to the user's editor buffer when the file is open there.`

var editSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to edit: absolute, relative to the workspace root, or starting with ~"},
    "edits": {
      "type": "array",
      "description": "Replacements, applied together; each oldText must match exactly once in the original file",
      "items": {
        "type": "object",
        "properties": {
          "oldText": {"type": "string", "description": "Exact text to replace; must occur exactly once"},
          "newText": {"type": "string", "description": "Text to put in its place"}
        },
        "required": ["oldText", "newText"]
      },
      "minItems": 1
    }
  },
  "required": ["path", "edits"]
}`)

// maxDiffLines bounds the diff shown in an edit result.
const maxDiffLines = 150

type editTool struct {
	toolInfo
	ws Workspace
}

// NewEdit returns the edit tool.
func NewEdit(ws Workspace) Tool {
	return &editTool{declare[editArgs]("edit", editDescription, editSchema), ws}
}

// editPair is one replacement. The snake_case spellings other agents use
// are accepted as well.
type editPair struct {
	OldText   *string `json:"oldText"`
	NewText   *string `json:"newText"`
	OldString *string `json:"old_string" lenient:"Claude Code's spelling"`
	NewString *string `json:"new_string" lenient:"Claude Code's spelling"`
	OldText2  *string `json:"old_text" lenient:"snake_case spelling"`
	NewText2  *string `json:"new_text" lenient:"snake_case spelling"`
}

func (e editPair) texts() (old, new *string) {
	old = cmpOr(e.OldText, e.OldString, e.OldText2)
	new = cmpOr(e.NewText, e.NewString, e.NewText2)
	return
}

func cmpOr(ps ...*string) *string {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

type editArgs struct {
	Path     string          `json:"path"`
	Edits    json.RawMessage `json:"edits"` // []editPair, or that array as a JSON string
	editPair `lenient:"a single pair without the edits array"`
}

// pairs returns the edits in either form: the edits array (also when a
// model sent it as a JSON string) or the single top-level pair.
func (a editArgs) pairs() ([]editPair, error) {
	var list []editPair
	raw := bytes.TrimSpace(a.Edits)
	if len(raw) > 0 && string(raw) != "null" {
		if raw[0] == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			raw = []byte(s)
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("edits must be an array of {oldText, newText}: %v", err)
		}
	}
	if o, n := a.texts(); o != nil || n != nil {
		list = append(list, a.editPair)
	}
	return list, nil
}

// span is one located edit, in offsets of the LF-normalised text.
type span struct {
	idx        int // position in the edits list, for messages
	start, end int
	newText    string
}

func (t *editTool) Run(ctx context.Context, call Call) Result {
	var a editArgs
	if r, ok := decodeArgs(t.name, call.Args, &a, t.schema); !ok {
		return r
	}
	if strings.TrimSpace(a.Path) == "" {
		return ErrorResult(`edit needs a path and edits, e.g. {"path": "main.go", "edits": [{"oldText": "…", "newText": "…"}]}.`)
	}
	pairs, err := a.pairs()
	if err != nil {
		return ErrorResult(fmt.Sprintf("Invalid edits: %v.", err))
	}
	if len(pairs) == 0 {
		return ErrorResult(`edit needs at least one replacement: "edits": [{"oldText": "…", "newText": "…"}].`)
	}
	p := ResolvePath(t.ws, a.Path)
	shown := displayPath(t.ws.Root(), p)
	orig, err := t.ws.ReadFile(ctx, p)
	if err != nil {
		return fileError(ctx, t.ws.Root(), "edit", p, shown, err)
	}
	if isBinary(orig) {
		return ErrorResult(fmt.Sprintf("%s is a binary file; edit only changes text files.", shown))
	}

	bom := bytes.HasPrefix(orig, utf8BOM)
	body := orig
	if bom {
		body = orig[len(utf8BOM):]
	}
	norm, crs := normaliseCRLF(body)
	lf := strings.Count(norm, "\n") - len(crs)
	crlf := len(crs) > 0 && len(crs) >= lf

	label := func(i int) string {
		if len(pairs) == 1 {
			return "oldText"
		}
		return fmt.Sprintf("oldText of edit %d", i+1)
	}
	spans := make([]span, 0, len(pairs))
	for i, e := range pairs {
		o, n := e.texts()
		if o == nil || n == nil {
			return ErrorResult(fmt.Sprintf("Edit %d needs both oldText and newText (use \"\" as newText to delete).", i+1))
		}
		old := strings.ReplaceAll(*o, "\r\n", "\n")
		nw := strings.ReplaceAll(*n, "\r\n", "\n")
		if old == "" {
			return ErrorResult(fmt.Sprintf("%s is empty. Give the exact text to replace; to create or rewrite a whole file use write.", capFirst(label(i))))
		}
		if old == nw {
			return ErrorResult(fmt.Sprintf("Edit %d changes nothing: oldText and newText are the same.", i+1))
		}
		at := findAll(norm, old, 10)
		switch len(at) {
		case 0:
			msg := fmt.Sprintf("%s was not found in %s. It must match the file exactly, including whitespace and indentation.", capFirst(label(i)), shown)
			if ln := fuzzyFirstLine(norm, old); ln > 0 {
				msg += fmt.Sprintf(" Its first line appears (ignoring indentation) at line %d; compare the lines after it.", ln)
			}
			msg += " Read the file again and copy the text exactly. No edits were applied."
			return ErrorResult(msg)
		case 1:
		default:
			n := fmt.Sprint(len(at))
			if len(at) == 10 {
				n = "10 or more"
			}
			return ErrorResult(fmt.Sprintf("%s matches %s times in %s (at lines %s). Add surrounding lines to oldText so it matches exactly once. No edits were applied.",
				capFirst(label(i)), n, shown, lineList(norm, at)))
		}
		spans = append(spans, span{idx: i, start: at[0], end: at[0] + len(old), newText: nw})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for k := 1; k < len(spans); k++ {
		if spans[k].start < spans[k-1].end {
			x, y := min(spans[k-1].idx, spans[k].idx), max(spans[k-1].idx, spans[k].idx)
			return ErrorResult(fmt.Sprintf("Edits %d and %d overlap in %s. Merge them into one edit. No edits were applied.", x+1, y+1, shown))
		}
	}

	// Splice the original bytes so untouched text (line endings included)
	// stays byte for byte; also build the normalised new text for the diff.
	var out bytes.Buffer
	out.Grow(len(orig) + 64)
	var newNorm strings.Builder
	newNorm.Grow(len(norm) + 64)
	if bom {
		out.Write(utf8BOM)
	}
	prevOrig, prevNorm := 0, 0
	for _, s := range spans {
		ob, oe := origOffset(crs, s.start), origOffset(crs, s.end)
		out.Write(body[prevOrig:ob])
		repl := s.newText
		if crlf {
			repl = strings.ReplaceAll(repl, "\n", "\r\n")
		}
		out.WriteString(repl)
		prevOrig = oe
		newNorm.WriteString(norm[prevNorm:s.start])
		newNorm.WriteString(s.newText)
		prevNorm = s.end
	}
	out.Write(body[prevOrig:])
	newNorm.WriteString(norm[prevNorm:])

	// A user asked about this edit sees all of it, not the result's cut.
	if p, err = checkWrite(ctx, t.ws, t.name, p, func() string {
		whole, _, _ := renderDiff(editWindows(norm, newNorm.String(), spans, 3), 3, math.MaxInt)
		return whole
	}); err != nil {
		return ErrorResult(fmt.Sprintf("Could not edit %s: %v.", shown, err))
	}
	if err := t.ws.EditFile(ctx, p, orig, out.Bytes()); err != nil {
		switch {
		case ctx.Err() != nil:
			return ErrorResult(fmt.Sprintf("edit of %s was cancelled; no change was made.", shown))
		case errors.Is(err, ErrFileChanged):
			return ErrorResult(fmt.Sprintf("%s changed while the edit was being made; no change was made. Read it again and redo the edit.", shown))
		case errors.Is(err, os.ErrPermission):
			return ErrorResult(fmt.Sprintf("Permission denied writing %s.", shown))
		}
		return ErrorResult(fmt.Sprintf("Could not edit %s: %v", shown, err))
	}

	diff, added, removed := renderDiff(editWindows(norm, newNorm.String(), spans, 3), 3, maxDiffLines)
	head := fmt.Sprintf("Edited %s: %s applied (+%d -%d lines).", shown, plural(len(spans), "edit"), added, removed)
	if diff == "" {
		return TextResult(head)
	}
	return TextResult(head + "\n" + diff)
}

// normaliseCRLF turns CRLF into LF and returns, for each CR it dropped, the
// offset in the result of the LF that followed it (ascending).
func normaliseCRLF(b []byte) (string, []int) {
	if !bytes.Contains(b, []byte("\r\n")) {
		return string(b), nil
	}
	var sb strings.Builder
	sb.Grow(len(b))
	var crs []int
	for {
		i := bytes.Index(b, []byte("\r\n"))
		if i < 0 {
			sb.Write(b)
			break
		}
		sb.Write(b[:i])
		crs = append(crs, sb.Len())
		sb.WriteByte('\n')
		b = b[i+2:]
	}
	return sb.String(), crs
}

// origOffset maps an offset in the normalised text back to the original:
// every dropped CR before it shifts it by one. A CR belongs before its LF,
// so an offset at an LF maps to the CR in front of it.
func origOffset(crs []int, off int) int {
	n, _ := slices.BinarySearch(crs, off)
	return off + n
}

// findAll returns the offsets of up to max (possibly overlapping) matches.
func findAll(s, sub string, max int) []int {
	var out []int
	for i := 0; len(out) < max; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			break
		}
		out = append(out, i+j)
		i += j + 1
	}
	return out
}

// lineList renders the 1-based line numbers of offsets: "3, 17, 40".
func lineList(s string, offs []int) string {
	parts := make([]string, len(offs))
	line, pos := 1, 0
	for i, o := range offs {
		line += strings.Count(s[pos:o], "\n")
		pos = o
		parts[i] = fmt.Sprint(line)
	}
	return strings.Join(parts, ", ")
}

// fuzzyFirstLine finds the first non-blank line of old in s, comparing
// trimmed lines, and returns its 1-based line number (0 if absent).
func fuzzyFirstLine(s, old string) int {
	var first string
	for l := range strings.Lines(old) {
		if t := strings.TrimSpace(l); t != "" {
			first = t
			break
		}
	}
	if first == "" {
		return 0
	}
	n := 0
	for l := range strings.Lines(s) {
		n++
		if strings.TrimSpace(l) == first {
			return n
		}
	}
	return 0
}

func capFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// diffWindow is a stretch of the old text and the stretch of the new text
// that replaced it, both starting at a line start; oldLine and newLine are
// the 1-based numbers of their first lines.
type diffWindow struct {
	oldText, newText string
	oldLine, newLine int
}

// editWindows cuts the regions around the edits (spans, sorted, in old
// offsets) out of old and new, padded with ctx lines, merging those that
// touch, so the diff costs what the change costs, not what the file does.
func editWindows(old, new string, spans []span, ctx int) []diffWindow {
	type win struct{ a, b, a2, b2 int }
	var wins []win
	shift := 0
	for _, s := range spans {
		a := lineStartBefore(old, s.start, ctx)
		b := lineEndAfter(old, s.end, ctx)
		delta := len(s.newText) - (s.end - s.start)
		if n := len(wins); n > 0 && a <= wins[n-1].b {
			wins[n-1].b, wins[n-1].b2 = b, b+shift+delta
		} else {
			wins = append(wins, win{a, b, a + shift, b + shift + delta})
		}
		shift += delta
	}
	out := make([]diffWindow, len(wins))
	oldLine, newLine, po, pn := 1, 1, 0, 0
	for i, w := range wins {
		oldLine += strings.Count(old[po:w.a], "\n")
		newLine += strings.Count(new[pn:w.a2], "\n")
		po, pn = w.a, w.a2
		out[i] = diffWindow{old[w.a:w.b], new[w.a2:w.b2], oldLine, newLine}
	}
	return out
}

// lineStartBefore returns the start of the line n lines above the one
// holding pos.
func lineStartBefore(s string, pos, n int) int {
	ls := strings.LastIndexByte(s[:pos], '\n') + 1
	for ; n > 0 && ls > 0; n-- {
		ls = strings.LastIndexByte(s[:ls-1], '\n') + 1
	}
	return ls
}

// lineEndAfter returns the end (past the newline) of the line n lines
// below the one holding pos; a pos at a line start counts that line.
func lineEndAfter(s string, pos, n int) int {
	e := pos
	for ; n >= 0 && e < len(s); n-- {
		j := strings.IndexByte(s[e:], '\n')
		if j < 0 {
			return len(s)
		}
		e += j + 1
	}
	return e
}

// UnifiedDiff is the whole unified diff of a → b (hunks with ctx lines of
// context, no length limit), as the edit tool renders it.
func UnifiedDiff(a, b string, ctx int) string {
	d, _, _ := unifiedDiff(a, b, ctx, math.MaxInt)
	return d
}

// unifiedDiff renders a line diff of a and b as unified hunks.
func unifiedDiff(a, b string, ctx, maxLines int) (string, int, int) {
	return renderDiff([]diffWindow{{a, b, 1, 1}}, ctx, maxLines)
}

// renderDiff renders line diffs of the windows as unified hunks with ctx
// lines of context, at most maxLines lines long, and counts the lines
// added and removed.
func renderDiff(wins []diffWindow, ctx, maxLines int) (string, int, int) {
	var sb strings.Builder
	added, removed, written := 0, 0, 0
	full := false
	for _, w := range wins {
		// Once the diff is full, later windows are only counted.
		a, r, ok := renderWindow(&sb, w, ctx, maxLines, &written, full)
		added += a
		removed += r
		full = full || !ok
	}
	return strings.TrimSuffix(sb.String(), "\n"), added, removed
}

func renderWindow(sb *strings.Builder, w diffWindow, ctx, maxLines int, written *int, countOnly bool) (int, int, bool) {
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(w.oldText, w.newText)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)

	type op struct {
		kind byte
		text string
	}
	var ops []op
	added, removed := 0, 0
	for _, d := range diffs {
		kind := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			kind = '+'
		case diffmatchpatch.DiffDelete:
			kind = '-'
		}
		for l := range strings.Lines(d.Text) {
			ops = append(ops, op{kind, strings.TrimSuffix(l, "\n")})
			switch kind {
			case '+':
				added++
			case '-':
				removed++
			}
		}
	}

	if countOnly {
		return added, removed, false
	}
	oldLine, newLine := w.oldLine, w.newLine // line numbers at ops[i]
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			oldLine++
			newLine++
			i++
			continue
		}
		// A hunk: ctx lines before the change, then on until more than
		// 2*ctx unchanged lines follow the last change (or the end).
		start := max(0, i-ctx)
		oStart, nStart := oldLine-(i-start), newLine-(i-start)
		end, eq := i, 0
		for end < len(ops) && (ops[end].kind != ' ' || eq < 2*ctx+1) {
			if ops[end].kind == ' ' {
				eq++
			} else {
				eq = 0
			}
			end++
		}
		if eq > ctx {
			end -= eq - ctx
		}
		oCount, nCount := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				oCount++
			}
			if o.kind != '-' {
				nCount++
			}
		}
		if *written >= maxLines {
			sb.WriteString("[diff truncated]\n")
			return added, removed, false
		}
		fmt.Fprintf(sb, "@@ -%d,%d +%d,%d @@\n", oStart, oCount, nStart, nCount)
		*written++
		for _, o := range ops[start:end] {
			if *written >= maxLines {
				sb.WriteString("[diff truncated]\n")
				return added, removed, false
			}
			sb.WriteByte(o.kind)
			sb.WriteString(cutLine(o.text, MaxGrepLineLength))
			sb.WriteByte('\n')
			*written++
		}
		for _, o := range ops[i:end] {
			if o.kind != '+' {
				oldLine++
			}
			if o.kind != '-' {
				newLine++
			}
		}
		i = end
	}
	return added, removed, true
}

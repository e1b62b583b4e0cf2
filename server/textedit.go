package server

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
	"go.lsp.dev/protocol"
)

// textEdit replaces the bytes [start, end) of a text with text.
type textEdit struct {
	start, end int
	text       string
}

// charDiffLimit bounds the size (bytes, per side) of a changed block that
// is refined character by character; larger blocks are replaced whole.
const charDiffLimit = 32 << 10

// diffTimeout bounds one go-diff call; past it go-diff returns a valid,
// less minimal diff.
const diffTimeout = 250 * time.Millisecond

// computeEdits returns minimal, sorted, non-overlapping edits that turn a
// into b: a line diff (go-diff over line hashes) after trimming the common
// prefix and suffix lines, then a character diff inside each changed block
// of lines. No edit starts or ends between a "\r" and its "\n".
func computeEdits(a, b string) []textEdit {
	if a == b {
		return nil
	}
	var out []textEdit
	for _, h := range lineHunks(a, b) {
		out = append(out, refine(a, h)...)
	}
	return normalize(a, out)
}

// lineHunks returns the edits of a line diff: each replaces whole lines of
// a with whole lines of b.
func lineHunks(a, b string) []textEdit {
	if a == b {
		return nil
	}
	p := commonPrefix(a, b)
	for p > 0 && a[p-1] != '\n' {
		p--
	}
	s := commonSuffix(a[p:], b[p:])
	for s > 0 && !(lineStartAt(a, len(a)-s) && lineStartAt(b, len(b)-s)) {
		s--
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	if am == "" || bm == "" || (strings.Count(am, "\n") <= 1 && strings.Count(bm, "\n") <= 1) {
		return []textEdit{{start: p, end: p + len(am), text: bm}}
	}
	la, lb := splitLines(am), splitLines(bm)
	ids := make(map[string]rune, len(la)+len(lb))
	toRunes := func(lines []string) []rune {
		rs := make([]rune, len(lines))
		for i, l := range lines {
			r, ok := ids[l]
			if !ok {
				r = rune(len(ids) + 1)
				if r >= 0xD800 {
					r += 0x800 // skip the surrogate range
				}
				ids[l] = r
			}
			rs[i] = r
		}
		return rs
	}
	ra, rb := toRunes(la), toRunes(lb)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = diffTimeout
	diffs := dmp.DiffMainRunes(ra, rb, false)

	var out []textEdit
	ia, ib := 0, 0 // line indexes
	oa, ob := p, 0 // byte offsets: oa in a, ob in bm
	var cur *textEdit
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, d := range diffs {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			for k := 0; k < n; k++ {
				oa += len(la[ia])
				ob += len(lb[ib])
				ia++
				ib++
			}
		case diffmatchpatch.DiffDelete:
			if cur == nil {
				cur = &textEdit{start: oa, end: oa}
			}
			for k := 0; k < n; k++ {
				oa += len(la[ia])
				ia++
			}
			cur.end = oa
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &textEdit{start: oa, end: oa}
			}
			start := ob
			for k := 0; k < n; k++ {
				ob += len(lb[ib])
				ib++
			}
			cur.text += bm[start:ob]
		}
	}
	flush()
	return out
}

// refine turns one whole-line edit into character-level edits.
func refine(a string, h textEdit) []textEdit {
	old := a[h.start:h.end]
	if old == "" || h.text == "" || len(old) > charDiffLimit || len(h.text) > charDiffLimit ||
		!utf8.ValidString(old) || !utf8.ValidString(h.text) {
		return []textEdit{h}
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = diffTimeout
	diffs := dmp.DiffMain(old, h.text, false)
	diffs = dmp.DiffCleanupSemantic(diffs)
	var out []textEdit
	pos := h.start
	var cur *textEdit
	for _, d := range diffs {
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
			pos += len(d.Text)
		case diffmatchpatch.DiffDelete:
			if cur == nil {
				cur = &textEdit{start: pos, end: pos}
			}
			pos += len(d.Text)
			cur.end = pos
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &textEdit{start: pos, end: pos}
			}
			cur.text += d.Text
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	if pos != h.end { // cannot happen with valid UTF-8; be safe
		return []textEdit{h}
	}
	return out
}

// normalize sorts edits, widens any edit boundary that splits a "\r\n"
// pair, and merges edits that touch.
func normalize(a string, edits []textEdit) []textEdit {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	out := edits[:0]
	for _, e := range edits {
		if e.start > 0 && e.start < len(a) && a[e.start-1] == '\r' && a[e.start] == '\n' {
			e.start--
			e.text = "\r" + e.text
		}
		if e.end > 0 && e.end < len(a) && a[e.end-1] == '\r' && a[e.end] == '\n' {
			e.end++
			e.text += "\n"
		}
		if n := len(out); n > 0 && e.start <= out[n-1].end {
			// Touching edits (a widened CR/LF boundary meets the next
			// edit) become one. Edits never overlap: they are separated
			// by unchanged text, and widening only eats a terminator.
			prev := &out[n-1]
			prev.text += e.text
			prev.end = max(prev.end, e.end)
			continue
		}
		out = append(out, e)
	}
	return out
}

// applyEdits applies sorted, non-overlapping edits to text.
func applyEdits(text string, edits []textEdit) string {
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for _, e := range edits {
		b.WriteString(text[pos:e.start])
		b.WriteString(e.text)
		pos = e.end
	}
	b.WriteString(text[pos:])
	return b.String()
}

// toTextEdits renders edits against text as LSP TextEdits.
func toTextEdits(text string, edits []textEdit, enc encoding) []protocol.TextEdit {
	if len(edits) == 0 {
		return []protocol.TextEdit{}
	}
	out := make([]protocol.TextEdit, len(edits))
	if strings.IndexByte(text, '\r') < 0 {
		// No CR: count newlines up to each (sorted) offset at memchr
		// speed instead of indexing the whole text.
		line, pos := 0, 0
		at := func(off int) protocol.Position {
			line += strings.Count(text[pos:off], "\n")
			pos = off
			start := strings.LastIndexByte(text[:off], '\n') + 1
			return protocol.Position{Line: uint32(line), Character: uint32(columnOf(text[start:off], enc))}
		}
		for i, e := range edits {
			out[i] = protocol.TextEdit{Range: protocol.Range{Start: at(e.start), End: at(e.end)}, NewText: e.text}
		}
		return out
	}
	li := newLineIndex(text)
	for i, e := range edits {
		out[i] = protocol.TextEdit{
			Range:   protocol.Range{Start: li.position(e.start, enc), End: li.position(e.end, enc)},
			NewText: e.text,
		}
	}
	return out
}

// conflictError says why an edit could not be re-based onto the buffer the
// user changed meanwhile.
type conflictError struct {
	mine, theirs [2]int // 1-based line ranges in the base text
}

func (c *conflictError) Error() string {
	return fmt.Sprintf("the user is editing %s in the editor, which overlaps your change to %s", lineRange(c.theirs), lineRange(c.mine))
}

func lineRange(r [2]int) string {
	if r[1] <= r[0] {
		return fmt.Sprintf("line %d", r[0])
	}
	return fmt.Sprintf("lines %d–%d", r[0], r[1])
}

// rebase applies the change base→mine to theirs (base→theirs, the user's
// typing) when the two change different lines. It refuses with a
// *conflictError when they touch the same lines or insert at the same place.
func rebase(base, mine, theirs string) (string, error) {
	if theirs == base {
		return mine, nil
	}
	if mine == base {
		return theirs, nil
	}
	hm, ht := lineHunks(base, mine), lineHunks(base, theirs)
	for _, m := range hm {
		for _, t := range ht {
			if (m.start < t.end && t.start < m.end) || m.start == t.start {
				return "", &conflictError{mine: linesOf(base, m), theirs: linesOf(base, t)}
			}
		}
	}
	all := append(append([]textEdit{}, hm...), ht...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].start < all[j].start })
	return applyEdits(base, all), nil
}

// linesOf is the 1-based line range an edit covers in text.
func linesOf(text string, e textEdit) [2]int {
	first := strings.Count(text[:e.start], "\n") + 1
	last := first
	if e.end > e.start {
		last = first + strings.Count(text[e.start:e.end-1], "\n")
	}
	return [2]int{first, last}
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for _, step := range []int{4096, 256, 16} {
		for i+step <= n && a[i:i+step] == b[i:i+step] {
			i += step
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for _, step := range []int{4096, 256, 16} {
		for i+step <= n && a[len(a)-i-step:len(a)-i] == b[len(b)-i-step:len(b)-i] {
			i += step
		}
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

func lineStartAt(s string, i int) bool { return i == 0 || s[i-1] == '\n' }

// splitLines splits after each "\n"; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	n := strings.Count(s, "\n")
	out := make([]string, 0, n+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

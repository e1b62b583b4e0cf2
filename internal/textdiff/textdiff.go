// Package textdiff diffs texts by lines (and, inside changed lines, by
// characters), applies the edits, and re-bases one change onto another
// made to the same text: what zot does when the user typed in a file while
// the agent was changing it (zot lsp's editor workspace, zot acp's).
package textdiff

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Edit replaces the bytes [Start, End) of a text with Text.
type Edit struct {
	Start, End int
	Text       string
}

// charDiffLimit bounds the size (bytes, per side) of a changed block that
// is refined character by character; larger blocks are replaced whole.
const charDiffLimit = 32 << 10

// diffTimeout bounds one go-diff call; past it go-diff returns a valid,
// less minimal diff.
const diffTimeout = 250 * time.Millisecond

// Compute returns minimal, sorted, non-overlapping edits that turn a
// into b: a line diff (go-diff over line hashes) after trimming the common
// prefix and suffix lines, then a character diff inside each changed block
// of lines. No edit starts or ends between a "\r" and its "\n".
func Compute(a, b string) []Edit {
	if a == b {
		return nil
	}
	var out []Edit
	for _, h := range LineHunks(a, b) {
		out = append(out, refine(a, h)...)
	}
	return normalize(a, out)
}

// LineHunks returns the edits of a line diff: each replaces whole lines of
// a with whole lines of b.
func LineHunks(a, b string) []Edit {
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
		return []Edit{{Start: p, End: p + len(am), Text: bm}}
	}
	la, lb := SplitLines(am), SplitLines(bm)
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

	var out []Edit
	ia, ib := 0, 0 // line indexes
	oa, ob := p, 0 // byte offsets: oa in a, ob in bm
	var cur *Edit
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
				cur = &Edit{Start: oa, End: oa}
			}
			for k := 0; k < n; k++ {
				oa += len(la[ia])
				ia++
			}
			cur.End = oa
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &Edit{Start: oa, End: oa}
			}
			start := ob
			for k := 0; k < n; k++ {
				ob += len(lb[ib])
				ib++
			}
			cur.Text += bm[start:ob]
		}
	}
	flush()
	return out
}

// refine turns one whole-line edit into character-level edits.
func refine(a string, h Edit) []Edit {
	old := a[h.Start:h.End]
	if old == "" || h.Text == "" || len(old) > charDiffLimit || len(h.Text) > charDiffLimit ||
		!utf8.ValidString(old) || !utf8.ValidString(h.Text) {
		return []Edit{h}
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = diffTimeout
	diffs := dmp.DiffMain(old, h.Text, false)
	diffs = dmp.DiffCleanupSemantic(diffs)
	var out []Edit
	pos := h.Start
	var cur *Edit
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
				cur = &Edit{Start: pos, End: pos}
			}
			pos += len(d.Text)
			cur.End = pos
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &Edit{Start: pos, End: pos}
			}
			cur.Text += d.Text
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	if pos != h.End { // cannot happen with valid UTF-8; be safe
		return []Edit{h}
	}
	return out
}

// normalize sorts edits, widens any edit boundary that splits a "\r\n"
// pair, and merges edits that touch.
func normalize(a string, edits []Edit) []Edit {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	out := edits[:0]
	for _, e := range edits {
		if e.Start > 0 && e.Start < len(a) && a[e.Start-1] == '\r' && a[e.Start] == '\n' {
			e.Start--
			e.Text = "\r" + e.Text
		}
		if e.End > 0 && e.End < len(a) && a[e.End-1] == '\r' && a[e.End] == '\n' {
			e.End++
			e.Text += "\n"
		}
		if n := len(out); n > 0 && e.Start <= out[n-1].End {
			// Touching edits (a widened CR/LF boundary meets the next
			// edit) become one. Edits never overlap: they are separated
			// by unchanged text, and widening only eats a terminator.
			prev := &out[n-1]
			prev.Text += e.Text
			prev.End = max(prev.End, e.End)
			continue
		}
		out = append(out, e)
	}
	return out
}

// Apply applies sorted, non-overlapping edits to text.
func Apply(text string, edits []Edit) string {
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for _, e := range edits {
		b.WriteString(text[pos:e.Start])
		b.WriteString(e.Text)
		pos = e.End
	}
	b.WriteString(text[pos:])
	return b.String()
}

// ConflictError says why a change could not be re-based onto the text
// the user changed meanwhile.
type ConflictError struct {
	Mine, Theirs [2]int // 1-based line ranges in the base text
}

func (c *ConflictError) Error() string {
	return fmt.Sprintf("the user is editing %s in the editor, which overlaps your change to %s", LineRange(c.Theirs), LineRange(c.Mine))
}

// LineRange names a 1-based line range: "line 3", "lines 3–5".
func LineRange(r [2]int) string {
	if r[1] <= r[0] {
		return fmt.Sprintf("line %d", r[0])
	}
	return fmt.Sprintf("lines %d–%d", r[0], r[1])
}

// Rebase applies the change base→mine to theirs (base→theirs, the user's
// typing) when the two change different lines. It refuses with a
// *ConflictError when they touch the same lines or insert at the same place.
func Rebase(base, mine, theirs string) (string, error) {
	if theirs == base {
		return mine, nil
	}
	if mine == base {
		return theirs, nil
	}
	hm, ht := LineHunks(base, mine), LineHunks(base, theirs)
	for _, m := range hm {
		for _, t := range ht {
			if (m.Start < t.End && t.Start < m.End) || m.Start == t.Start {
				return "", &ConflictError{Mine: LinesOf(base, m), Theirs: LinesOf(base, t)}
			}
		}
	}
	all := append(append([]Edit{}, hm...), ht...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Start < all[j].Start })
	return Apply(base, all), nil
}

// LinesOf is the 1-based line range an edit covers in text.
func LinesOf(text string, e Edit) [2]int {
	first := strings.Count(text[:e.Start], "\n") + 1
	last := first
	if e.End > e.Start {
		last = first + strings.Count(text[e.Start:e.End-1], "\n")
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

// SplitLines splits after each "\n"; the last line may lack one.
func SplitLines(s string) []string {
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

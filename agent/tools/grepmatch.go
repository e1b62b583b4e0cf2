package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// literal is text every match of a pattern contains, possibly up to ASCII
// case. The zero literal rules nothing out.
type literal struct {
	text string
	fold bool // compare ASCII letters case-insensitively (text is lower case)
}

// requiredLiterals returns literals one of which every match of the
// pattern src contains, or nil when it finds none worth searching for: a
// literal at the top; the best part of a concatenation (through groups and
// x+ / x{n,} with n ≥ 1); one literal per branch of an alternation.
// Case-folded literals are used only when ASCII, where folding is exact.
func requiredLiterals(src string) []literal {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil
	}
	var walk func(re *syntax.Regexp) []literal
	walk = func(re *syntax.Regexp) []literal {
		switch re.Op {
		case syntax.OpLiteral:
			s := string(re.Rune)
			if re.Flags&syntax.FoldCase == 0 {
				return []literal{{text: s}}
			}
			for i := 0; i < len(s); i++ {
				if s[i] >= utf8.RuneSelf {
					return nil
				}
			}
			return []literal{{text: strings.ToLower(s), fold: true}}
		case syntax.OpCapture, syntax.OpPlus:
			return walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				return walk(re.Sub[0])
			}
		case syntax.OpConcat:
			var best []literal
			for _, sub := range re.Sub {
				if l := walk(sub); l != nil && (best == nil || shortest(l) > shortest(best)) {
					best = l
				}
			}
			return best
		case syntax.OpAlternate:
			var all []literal
			for _, sub := range re.Sub {
				l := walk(sub)
				if l == nil {
					return nil // a branch without a literal: anything may match
				}
				all = append(all, l...)
			}
			return all
		}
		return nil
	}
	lits := walk(re)
	if len(lits) > 8 {
		return nil // more searching than a line-by-line scan saves
	}
	return lits
}

func shortest(ls []literal) int {
	n := -1
	for _, l := range ls {
		if n < 0 || len(l.text) < n {
			n = len(l.text)
		}
	}
	return n
}

// index returns the first position of l in data, or -1.
func (l literal) index(data []byte) int {
	if !l.fold {
		return bytes.Index(data, []byte(l.text))
	}
	return indexFold(data, l.text)
}

// indexFold finds lower (ASCII, lower case) in data ignoring ASCII case.
// It looks for the rarest byte of lower in both cases with IndexByte, the
// way ripgrep picks a rare byte for memchr, and checks around each hit.
func indexFold(data []byte, lower string) int {
	n := len(lower)
	if n == 0 {
		return 0
	}
	r := rarestByte(lower)
	lc := lower[r]
	uc := lc
	if 'a' <= lc && lc <= 'z' {
		uc = lc - 'a' + 'A'
	}
	nextL, nextU := -2, -2
	for pos := r; pos < len(data); {
		if nextL != -1 && nextL < pos {
			if i := bytes.IndexByte(data[pos:], lc); i >= 0 {
				nextL = pos + i
			} else {
				nextL = -1
			}
		}
		if uc != lc && nextU != -1 && nextU < pos {
			if i := bytes.IndexByte(data[pos:], uc); i >= 0 {
				nextU = pos + i
			} else {
				nextU = -1
			}
		}
		at := nextL
		if uc != lc && nextU >= 0 && (at < 0 || nextU < at) {
			at = nextU
		}
		if at < 0 {
			return -1
		}
		if start := at - r; start+n <= len(data) && equalFoldASCII(data[start:start+n], lower) {
			return start
		}
		pos = at + 1
	}
	return -1
}

// equalFoldASCII reports whether b equals lower up to ASCII case.
func equalFoldASCII(b []byte, lower string) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// rarestByte picks the position in s of the byte least common in source
// text, so IndexByte stops on few false candidates.
func rarestByte(s string) int {
	best, bestRank := 0, 1<<30
	for i := 0; i < len(s); i++ {
		if r := byteRank(s[i]); r < bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// byteRank is a rough frequency of c in source code (higher is commoner).
func byteRank(c byte) int {
	const common = "etaoinsrlcdu hpmfgbywvkxjqz" // most to least common lower-case letters and space
	switch {
	case c == ' ' || c == '\t' || c == '\n':
		return 200
	case 'a' <= c && c <= 'z':
		return 100 - strings.IndexByte(common, c)*3
	case 'A' <= c && c <= 'Z':
		return 60 - strings.IndexByte(common, c-'A'+'a')*2
	case '0' <= c && c <= '9':
		return 50
	case strings.IndexByte(`.,;:()"'{}=_-/*`, c) >= 0:
		return 80
	case c >= utf8.RuneSelf:
		return 5
	}
	return 30
}

// lineHit is one matching line: its 0-based number and byte range (no
// newline, no trailing carriage return).
type lineHit struct{ n, start, end int }

// matcher finds the lines of a text that match a regular expression.
// Copy it per goroutine (scan keeps per-text state in next).
type matcher struct {
	re   *regexp.Regexp
	lits []literal // one of them is in every match; nil: test every line
	// foldKS: a folded literal holds k or s, which the Kelvin sign and the
	// long s also fold to; a text holding those is tested line by line.
	foldKS bool
	next   []int
}

func newMatcher(re *regexp.Regexp, src string) matcher {
	m := matcher{re: re, lits: requiredLiterals(src)}
	for _, l := range m.lits {
		if l.fold && strings.ContainsAny(l.text, "ks") {
			m.foldKS = true
		}
	}
	return m
}

var (
	kelvinSign = []byte("\u212a")
	longS      = []byte("\u017f")
)

// scan appends the matching lines of data to hits, stopping after max.
// With literals, only lines holding one are tested with the regexp: the
// literals are found with bytes.Index over the whole text, and line
// numbers are counted between candidates with bytes.Count.
func (m *matcher) scan(data []byte, max int, hits []lineHit) []lineHit {
	if m.lits == nil || (m.foldKS && (bytes.Contains(data, kelvinSign) || bytes.Contains(data, longS))) {
		return m.scanLines(data, max, hits)
	}
	if cap(m.next) < len(m.lits) {
		m.next = make([]int, len(m.lits))
	}
	next := m.next[:len(m.lits)]
	for i := range next {
		next[i] = -2 // not searched yet
	}
	pos, lineNo, counted := 0, 0, 0
	for pos < len(data) && len(hits) < max {
		at := -1
		for i, l := range m.lits {
			if next[i] == -2 || (next[i] >= 0 && next[i] < pos) {
				if j := l.index(data[pos:]); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
			if next[i] >= 0 && (at < 0 || next[i] < at) {
				at = next[i]
			}
		}
		if at < 0 {
			break
		}
		ls := bytes.LastIndexByte(data[:at], '\n') + 1
		le := len(data)
		if k := bytes.IndexByte(data[at:], '\n'); k >= 0 {
			le = at + k
		}
		lineNo += bytes.Count(data[counted:ls], newline)
		counted = ls
		line := trimCR(data[ls:le])
		if m.re.Match(line) {
			hits = append(hits, lineHit{lineNo, ls, ls + len(line)})
		}
		pos = le + 1
	}
	return hits
}

var newline = []byte{'\n'}

// scanLines tests every line with the regexp.
func (m *matcher) scanLines(data []byte, max int, hits []lineHit) []lineHit {
	for start, n := 0, 0; start < len(data) && len(hits) < max; n++ {
		end := len(data)
		if k := bytes.IndexByte(data[start:], '\n'); k >= 0 {
			end = start + k
		}
		line := trimCR(data[start:end])
		if m.re.Match(line) {
			hits = append(hits, lineHit{n, start, start + len(line)})
		}
		start = end + 1
	}
	return hits
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// outLine is one line of grep output for a file: a match or context.
type outLine struct {
	n     int // 0-based line number
	match bool
	text  string // cut to MaxGrepLineLength, the match kept in view
}

// renderHits returns the lines to show for hits: each match with ctx lines
// of context on either side, overlapping windows merged.
func renderHits(data []byte, hits []lineHit, ctx int, re *regexp.Regexp) []outLine {
	out := make([]outLine, 0, len(hits)*(2*ctx+1))
	last := -1 // the last line emitted
	j := 0     // the next hit not yet emitted
	for _, h := range hits {
		if h.n <= last {
			continue
		}
		from := max(h.n-ctx, last+1)
		off := h.start
		for k := h.n; k > from; k-- {
			off = bytes.LastIndexByte(data[:off-1], '\n') + 1
		}
		for n := from; n <= h.n+ctx && off < len(data); n++ {
			end := len(data)
			if k := bytes.IndexByte(data[off:], '\n'); k >= 0 {
				end = off + k
			}
			for j < len(hits) && hits[j].n < n {
				j++
			}
			line := trimCR(data[off:end])
			ol := outLine{n: n}
			if j < len(hits) && hits[j].n == n {
				ol.match = true
				ol.text = cutLine(matchWindow(string(line), re), MaxGrepLineLength)
			} else {
				ol.text = cutLine(string(line), MaxGrepLineLength)
			}
			out = append(out, ol)
			last = n
			off = end + 1
		}
	}
	return out
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
	return "[" + strconv.Itoa(utf8.RuneCountInString(line[:from])) + " chars cut] …" + line[from:]
}

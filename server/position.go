package server

import (
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// encoding is the unit of protocol.Position.Character: UTF-16 code units
// unless the client negotiated otherwise (LSP 3.17 general.positionEncodings).
type encoding int

const (
	encUTF16 encoding = iota
	encUTF8
	encUTF32
)

func (e encoding) String() string {
	switch e {
	case encUTF8:
		return "utf-8"
	case encUTF32:
		return "utf-32"
	}
	return "utf-16"
}

// pickEncoding chooses the first encoding of the client's list that zot
// supports, preferring utf-16 when the client offers nothing.
func pickEncoding(offered []string) encoding {
	for _, o := range offered {
		switch o {
		case "utf-16":
			return encUTF16
		case "utf-8":
			return encUTF8
		case "utf-32":
			return encUTF32
		}
	}
	return encUTF16
}

// lineIndex maps between byte offsets and LSP positions of one text. Lines
// end at "\n", "\r\n" or a lone "\r", as LSP defines them.
type lineIndex struct {
	text   string
	starts []int // byte offset of each line's first byte
}

func newLineIndex(text string) *lineIndex {
	starts := make([]int, 1, strings.Count(text, "\n")+1)
	if strings.IndexByte(text, '\r') < 0 {
		// The common case, at memchr speed.
		for i := 0; ; {
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			starts = append(starts, i)
		}
		return &lineIndex{text: text, starts: starts}
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{text: text, starts: starts}
}

// lineEnd is the byte offset where line l's content ends (before its
// terminator).
func (li *lineIndex) lineEnd(l int) int {
	if l+1 >= len(li.starts) {
		return len(li.text)
	}
	end := li.starts[l+1]
	if end > 0 && li.text[end-1] == '\n' {
		end--
	}
	if end > li.starts[l] && li.text[end-1] == '\r' {
		end--
	}
	return end
}

// offset turns a position into a byte offset. Positions past the end of a
// line clamp to the line's end, positions past the last line to the end
// of the text, as LSP asks; a position inside a surrogate pair or a
// multi-byte rune rounds down to the rune's start.
func (li *lineIndex) offset(p protocol.Position, enc encoding) int {
	l := int(p.Line)
	if l >= len(li.starts) {
		return len(li.text)
	}
	return offsetInLine(li.text, li.starts[l], li.lineEnd(l), int(p.Character), enc)
}

// offsetOf is newLineIndex(text).offset(p, enc) reading text only up to
// p's line, without an index of every line: a didChange per keystroke in a
// large buffer would otherwise build one (an allocation the size of the
// file's line count) for each change.
func offsetOf(text string, p protocol.Position, enc encoding) int {
	off, _, _ := offsetFrom(text, 0, 0, p, enc)
	return off
}

// offsetFrom is offsetOf counting lines from from, the first byte of line
// fromLine (a known line start no later than p's line), so that only the
// text between them is read. It also returns the start of p's line; ok is
// false when the text has fewer lines (off is then len(text)).
func offsetFrom(text string, from, fromLine int, p protocol.Position, enc encoding) (off, start int, ok bool) {
	start, ok = lineStart(text[from:], int(p.Line)-fromLine)
	start += from
	if !ok {
		return len(text), start, false
	}
	end := start + strings.IndexAny(text[start:], "\r\n")
	if end < start {
		end = len(text)
	}
	return offsetInLine(text, start, end, int(p.Character), enc), start, true
}

// lineStart is the byte offset of line l's first byte; false when the text
// has fewer lines.
func lineStart(text string, l int) (int, bool) {
	pos := 0
	if strings.IndexByte(text, '\r') < 0 {
		// "\n" only: whole blocks are skipped by counting (SIMD) their lines.
		const block = 4096
		for line := 0; line < l; {
			if pos+block < len(text) {
				if c := strings.Count(text[pos:pos+block], "\n"); line+c < l {
					line += c
					pos += block
					continue
				}
			}
			j := strings.IndexByte(text[pos:], '\n')
			if j < 0 {
				return len(text), false
			}
			pos += j + 1
			line++
		}
		return pos, true
	}
	for line := 0; line < l; line++ {
		j := strings.IndexAny(text[pos:], "\r\n")
		if j < 0 {
			return len(text), false
		}
		pos += j + 1
		if text[pos-1] == '\r' && pos < len(text) && text[pos] == '\n' {
			pos++
		}
	}
	return pos, true
}

// offsetInLine is the byte offset of the character'th unit of the line
// text[start:end]: clamped to the line's end; inside a surrogate pair or a
// multi-byte rune, the rune's start.
func offsetInLine(text string, start, end, character int, enc encoding) int {
	if enc == encUTF8 {
		off := start + character
		if off > end {
			off = end
		}
		for off > start && off < len(text) && !utf8.RuneStart(text[off]) {
			off--
		}
		return off
	}
	units := 0
	for i := start; i < end; {
		if units >= character {
			return i
		}
		r, size := utf8.DecodeRuneInString(text[i:end])
		n := 1
		if enc == encUTF16 && r >= 0x10000 {
			n = 2
		}
		if units+n > character {
			return i // inside a surrogate pair: round down
		}
		units += n
		i += size
	}
	return end
}

// position turns a byte offset into a position.
func (li *lineIndex) position(off int, enc encoding) protocol.Position {
	if off > len(li.text) {
		off = len(li.text)
	}
	if off < 0 {
		off = 0
	}
	// Binary search the line.
	lo, hi := 0, len(li.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if li.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return protocol.Position{Line: uint32(lo), Character: uint32(columnOf(li.text[li.starts[lo]:off], enc))}
}

// columnOf measures s in the encoding's units.
func columnOf(s string, enc encoding) int {
	switch enc {
	case encUTF8:
		return len(s)
	case encUTF32:
		return utf8.RuneCountInString(s)
	}
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

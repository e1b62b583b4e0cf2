package jsonstr

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Large texts (a 16 MiB prompt) are kept out of a JSON encoder: the value
// is encoded with a placeholder where each text goes, then the encoding is
// split at the placeholders (Splice) and each text escaped straight into
// its destination, a body sized once (Append) or the output in pieces
// (WriteTo), instead of into one more buffer as large as the text.

// placeholderTag starts a placeholder: a NUL (escaped \u0000, which no text
// encodes to by chance) and a per-process random tag.
var placeholderTag = func() string {
	var b [8]byte
	rand.Read(b[:])
	return "\x00zot-text-" + hex.EncodeToString(b[:]) + "-"
}()

// encodedTag is placeholderTag as it appears inside an encoded string.
var encodedTag = AppendContent(nil, placeholderTag)

// Placeholder is the stand-in for the n-th text while a value is encoded.
func Placeholder(n int) string { return placeholderTag + strconv.Itoa(n) + "\x00" }

// Spliced is a JSON encoding whose large texts are kept apart, escaped
// when the encoding is appended or written.
type Spliced struct {
	parts []splicePart
	html  bool
	size  int
}

type splicePart struct {
	raw    []byte
	text   string
	isText bool
}

// Whole is a Spliced of an encoding without texts kept apart.
func Whole(raw []byte) Spliced {
	return Spliced{parts: []splicePart{{raw: raw}}, size: len(raw)}
}

// Splice splits raw, an encoding with Placeholder(i) where texts[i] goes,
// at the placeholders. html: the texts are escaped as encoding/json does
// with HTML escaping on (<, > and & as \u003c, \u003e, \u0026). raw is
// kept, not copied.
func Splice(raw []byte, texts []string, html bool) (Spliced, error) {
	s := Spliced{html: html}
	for {
		i := bytes.Index(raw, encodedTag)
		if i < 0 {
			s.add(splicePart{raw: raw})
			return s, nil
		}
		rest := raw[i+len(encodedTag):]
		j := bytes.Index(rest, []byte(`\u0000`))
		n := -1
		if j >= 0 {
			n, _ = strconv.Atoi(string(rest[:j]))
		}
		if n < 0 || n >= len(texts) {
			return Spliced{}, errors.New("encoding a large text: its placeholder was garbled")
		}
		s.add(splicePart{raw: raw[:i]})
		s.add(splicePart{text: texts[n], isText: true})
		raw = rest[j+len(`\u0000`):]
	}
}

func (s *Spliced) add(p splicePart) {
	if p.isText {
		s.size += ContentLen(p.text, s.html)
	} else if len(p.raw) == 0 {
		return
	} else {
		s.size += len(p.raw)
	}
	s.parts = append(s.parts, p)
}

// AddRaw adds raw bytes at the end (a frame's closing brace, a newline).
func (s *Spliced) AddRaw(raw []byte) { s.add(splicePart{raw: raw}) }

// Len is the encoding's length.
func (s Spliced) Len() int { return s.size }

// Append appends the encoding to b, growing it once, with room for what
// usually follows (the rest of a request body) so that appending that
// does not copy the whole again.
func (s Spliced) Append(b []byte) []byte {
	b = slices.Grow(b, s.size+s.size/16+4096)
	for _, p := range s.parts {
		if p.isText {
			b = appendContent(b, p.text, s.html)
		} else {
			b = append(b, p.raw...)
		}
	}
	return b
}

// pieceSize is how much of a text WriteTo escapes at a time.
const pieceSize = 64 << 10

// WriteTo writes the encoding to w, escaping each text in pieces through
// one small buffer.
func (s Spliced) WriteTo(w io.Writer) (int64, error) {
	var total int64
	var buf []byte
	for _, p := range s.parts {
		if !p.isText {
			n, err := w.Write(p.raw)
			total += int64(n)
			if err != nil {
				return total, err
			}
			continue
		}
		if buf == nil {
			buf = make([]byte, 0, pieceSize+pieceSize/4)
		}
		for text := p.text; text != ""; {
			cut := pieceEnd(text, pieceSize)
			buf = appendContent(buf[:0], text[:cut], s.html)
			text = text[cut:]
			n, err := w.Write(buf)
			total += int64(n)
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// pieceEnd returns where to cut s near n so that no UTF-8 sequence is
// split: each piece then escapes to what the whole would (an invalid byte
// is a U+FFFD of its own, whatever follows it).
func pieceEnd(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n // no sequence start in reach: nothing valid spans the cut
}

// ContentLen is the length of what AppendContent (html: with HTML
// escaping) writes for s.
func ContentLen(s string, html bool) int {
	n := len(s)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n++
			case c < 0x20 || html && (c == '<' || c == '>' || c == '&'):
				n += 5
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5 // \ufffd for one byte
		case r == '\u2028' || r == '\u2029':
			n += 3 // \u202x for three bytes
		}
		i += size
	}
	return n
}

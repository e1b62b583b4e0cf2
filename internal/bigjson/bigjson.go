// Package bigjson decodes JSON documents that carry large strings (a
// prompt near the frame limit) without copying those strings: each is
// unquoted in place, in the document's own memory, and the rest of the
// document is decoded as usual with a short placeholder where the string
// was. The decoded strings then share the document's memory, so the
// document must not be used (or reused) afterwards.
package bigjson

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	segjson "github.com/segmentio/encoding/json"

	"github.com/zot-editors/zot/internal/jsonstr"
)

// MinString is the literal size from which Unmarshal unquotes a string in
// place. Smaller strings cost little to copy.
const MinString = 64 << 10

var minString = MinString // a variable for tests

// tag starts a placeholder: a NUL (written \u0000, which a client's text
// does not contain by chance) and a per-process random tag, so a client
// cannot forge one.
var tag = func() string {
	var b [8]byte
	rand.Read(b[:])
	return "\x00zot-big-" + hex.EncodeToString(b[:]) + "-"
}()

// encodedTag is tag as written inside a JSON string.
var encodedTag = jsonstr.AppendContent(nil, tag)

// Unmarshal decodes doc into v (a pointer) with segmentio's decoder. When
// doc is valid JSON and holds string values of MinString bytes or more,
// those are unquoted in place first and doc's contents are destroyed;
// otherwise doc is left as it is. A string that would shrink to less than
// half its literal (mostly \u escapes) is copied instead, so a small text
// does not keep a large buffer alive; a literal with invalid UTF-8 (which
// decodes to U+FFFD, longer than the byte it replaces) is left to the
// decoder. Strings land where the decoder would have put them: string
// fields, strings inside interfaces, maps and slices; a json.RawMessage
// that held one gets it back re-encoded (the same JSON value).
//
// Where segmentio's decoder fails, encoding/json decodes again, for its
// result or its error (the reference messages, naming the field). On an
// error, rest is the document to report it from: doc itself, or, when doc
// was unquoted in place, doc with placeholders (the same fields and JSON
// types).
func Unmarshal(doc []byte, v any) (rest []byte, err error) {
	small, texts := extract(doc)
	if texts == nil {
		if segjson.Unmarshal(doc, v) != nil {
			reflect.ValueOf(v).Elem().SetZero()
			return doc, json.Unmarshal(doc, v)
		}
		return doc, nil
	}
	if segjson.Unmarshal(small, v) != nil {
		reflect.ValueOf(v).Elem().SetZero()
		if err := json.Unmarshal(small, v); err != nil {
			return small, err
		}
	}
	restore(reflect.ValueOf(v), texts)
	return small, nil
}

// Destroyed reports whether Unmarshal would unquote in place (and so
// destroy) doc: callers that need the document again (an error message
// computed from it) keep a copy of its small parts instead.
func Destroyed(doc []byte) bool {
	return len(doc) >= minString && bytes.IndexByte(doc, '"') >= 0 && hasLargeValue(doc)
}

func hasLargeValue(doc []byte) bool {
	found := false
	scan(doc, func(start, end int) bool {
		if end-start >= minString && literalInPlace(doc[start:end]) {
			found = true
			return false
		}
		return true
	})
	return found && segjson.Valid(doc)
}

// scan calls fn with the bounds of each string value literal (quotes
// included) of the valid JSON document doc, until fn returns false.
// Object keys are not values.
func scan(doc []byte, fn func(start, end int) bool) {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		end := literalEnd(doc, i)
		if end < 0 {
			return
		}
		j := end
		for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t' || doc[j] == '\n' || doc[j] == '\r') {
			j++
		}
		if j < len(doc) && doc[j] == ':' {
			i = end - 1
			continue
		}
		if !fn(i, end) {
			return
		}
		i = end - 1
	}
}

// literalEnd returns the index after the string literal starting at
// doc[start] (a quote), -1 if it does not end.
func literalEnd(doc []byte, start int) int {
	i := start + 1
	for {
		k := bytes.IndexAny(doc[i:], `"\`)
		if k < 0 {
			return -1
		}
		i += k
		if doc[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: skip the escaped byte
		if i > len(doc) {
			return -1
		}
	}
}

// extract unquotes the large string values of doc in place and returns
// the document with placeholders and the strings; texts is nil (doc
// untouched) when there is nothing to extract.
func extract(doc []byte) (small []byte, texts []string) {
	if !Destroyed(doc) {
		return nil, nil
	}
	last := 0
	scan(doc, func(start, end int) bool {
		lit := doc[start:end]
		if len(lit) < minString || !literalInPlace(lit) {
			return true
		}
		small = append(small, doc[last:start]...)
		small = append(small, '"')
		small = append(small, encodedTag...)
		small = strconv.AppendInt(small, int64(len(texts)), 10)
		small = append(small, '"')
		n := unquoteInPlace(lit)
		var s string
		if 2*n < len(lit) {
			s = string(lit[1 : 1+n])
		} else {
			s = unsafe.String(&lit[1], n)
		}
		texts = append(texts, s)
		last = end
		return true
	})
	if texts == nil {
		return nil, nil
	}
	return append(small, doc[last:]...), texts
}

// literalInPlace reports whether the string literal lit (quotes included,
// valid JSON) can be unquoted in its own memory: no invalid UTF-8.
func literalInPlace(lit []byte) bool {
	body := lit[1 : len(lit)-1]
	for i := 0; i < len(body); {
		c := body[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		// Most of a text is ASCII; check the rest rune by rune.
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		i += size
	}
	return true
}

// unquoteInPlace writes the unquoted contents of the valid string literal
// lit from lit[1] on and returns their length. Every escape is at least as
// long as what it stands for, so writing never overtakes reading.
func unquoteInPlace(lit []byte) int {
	body := lit[1 : len(lit)-1]
	w := 0
	for r := 0; r < len(body); {
		k := bytes.IndexByte(body[r:], '\\')
		if k < 0 {
			w += copy(lit[1+w:], body[r:])
			break
		}
		w += copy(lit[1+w:], body[r:r+k])
		r += k
		switch c := body[r+1]; c {
		case 'b':
			lit[1+w] = '\b'
		case 'f':
			lit[1+w] = '\f'
		case 'n':
			lit[1+w] = '\n'
		case 'r':
			lit[1+w] = '\r'
		case 't':
			lit[1+w] = '\t'
		case 'u':
			rr := hex4(body[r+2 : r+6])
			r += 6
			if utf16.IsSurrogate(rr) {
				if r+6 <= len(body) && body[r] == '\\' && body[r+1] == 'u' {
					if dec := utf16.DecodeRune(rr, hex4(body[r+2:r+6])); dec != utf8.RuneError {
						rr = dec
						r += 6
					} else {
						rr = utf8.RuneError
					}
				} else {
					rr = utf8.RuneError
				}
			}
			w += utf8.EncodeRune(lit[1+w:], rr)
			continue
		default: // '"', '\\', '/'
			lit[1+w] = c
		}
		w++
		r += 2
	}
	return w
}

// hex4 reads the four hex digits of a \u escape (valid: the document
// was checked).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= 'a':
			c -= 'a' - 10
		case c >= 'A':
			c -= 'A' - 10
		default:
			c -= '0'
		}
		r = r<<4 | rune(c)
	}
	return r
}

// lookup returns the text a placeholder stands for.
func lookup(s string, texts []string) (string, bool) {
	rest, ok := strings.CutPrefix(s, tag)
	if !ok {
		return "", false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n >= len(texts) {
		return "", false
	}
	return texts[n], true
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// restore puts the texts where the decoder put their placeholders.
func restore(v reflect.Value, texts []string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			restore(v.Elem(), texts)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.String {
			if s, ok := lookup(e.String(), texts); ok && v.CanSet() {
				v.Set(reflect.ValueOf(s))
			}
			return
		}
		restore(e, texts)
	case reflect.String:
		if s, ok := lookup(v.String(), texts); ok && v.CanSet() {
			v.SetString(s)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				restore(v.Field(i), texts)
			}
		}
	case reflect.Slice:
		if v.Type() == rawMessageType {
			if raw := v.Bytes(); bytes.Contains(raw, encodedTag) && v.CanSet() {
				v.SetBytes(restoreRaw(raw, texts))
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			restore(v.Index(i), texts)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			restore(v.Index(i), texts)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			val := iter.Value()
			if val.Kind() == reflect.Interface && !val.IsNil() {
				val = val.Elem()
			}
			if val.Kind() == reflect.String {
				if s, ok := lookup(val.String(), texts); ok {
					v.SetMapIndex(iter.Key(), reflect.ValueOf(s).Convert(v.Type().Elem()))
				}
				continue
			}
			restore(val, texts)
		}
	}
}

// restoreRaw re-encodes the placeholders inside a raw JSON value.
func restoreRaw(raw []byte, texts []string) []byte {
	var out []byte
	for {
		i := bytes.Index(raw, encodedTag)
		if i < 1 {
			return append(out, raw...)
		}
		j := bytes.IndexByte(raw[i:], '"')
		s, ok := "", false
		if j >= 0 {
			s, ok = lookup(tag+string(raw[i+len(encodedTag):i+j]), texts)
		}
		if !ok {
			return append(out, raw...)
		}
		out = append(out, raw[:i-1]...)
		out = jsonstr.Append(out, s)
		raw = raw[i+j+1:]
	}
}

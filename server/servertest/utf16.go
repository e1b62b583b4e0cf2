package servertest

import (
	"strings"
	"unicode/utf16"
)

// Offset is the byte offset of an LSP position (line, UTF-16 column) in
// text, with lines ending at "\n" or "\r\n". Columns past the end of a
// line clamp to it; lines past the end clamp to the end of the text. It is
// deliberately written apart from the server's own conversion.
func Offset(text string, line, char int) int {
	start := 0
	for i := 0; i < line; i++ {
		j := strings.IndexByte(text[start:], '\n')
		if j < 0 {
			return len(text)
		}
		start += j + 1
	}
	rest := text[start:]
	end := strings.IndexByte(rest, '\n')
	if end < 0 {
		end = len(rest)
	}
	content := strings.TrimSuffix(rest[:end], "\r")
	units := utf16.Encode([]rune(content))
	if char > len(units) {
		char = len(units)
	}
	return start + len(string(utf16.Decode(units[:char])))
}

// Position is the LSP position (UTF-16) of a byte offset.
func Position(text string, off int) Pos {
	before := text[:off]
	line := strings.Count(before, "\n")
	col := before[strings.LastIndexByte(before, '\n')+1:]
	return Pos{Line: line, Character: len(utf16.Encode([]rune(col)))}
}

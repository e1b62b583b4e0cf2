package server

import (
	"strings"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/internal/textdiff"
)

// toTextEdits renders edits against text as LSP TextEdits.
func toTextEdits(text string, edits []textdiff.Edit, enc encoding) []protocol.TextEdit {
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
			out[i] = protocol.TextEdit{Range: protocol.Range{Start: at(e.Start), End: at(e.End)}, NewText: e.Text}
		}
		return out
	}
	li := newLineIndex(text)
	for i, e := range edits {
		out[i] = protocol.TextEdit{
			Range:   protocol.Range{Start: li.position(e.Start, enc), End: li.position(e.End, enc)},
			NewText: e.Text,
		}
	}
	return out
}

package server

import (
	"math/rand/v2"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// A typing buffer (kept lines, bytes with room) gives the text that
// replacing each change's range in the whole string gives, the way
// didChange applied changes before issue 36: random edits over "\n",
// "\r\n" and lone "\r" line breaks, multi-byte and astral runes,
// positions past a line's or the text's end, reversed ranges, in every
// position encoding, with the buffer turned back into a string (a read)
// now and then.
func TestTypingBufferMatchesWholeText(t *testing.T) {
	pieces := []string{"a", "b", "xyz", "\n", "\r\n", "\r", "é", "😀", "", "line\n", "\r\r\n\n"}
	rng := rand.New(rand.NewPCG(36, 2))
	piece := func() string {
		var sb strings.Builder
		for n := rng.IntN(4); n > 0; n-- {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	for _, enc := range []encoding{encUTF16, encUTF8, encUTF32} {
		for round := 0; round < 300; round++ {
			want := piece() + piece()
			tb := newTypingBuffer(want)
			for step := 0; step < 200; step++ {
				lines := strings.Count(want, "\n") + strings.Count(want, "\r") + 1
				pos := func() protocol.Position {
					return protocol.Position{Line: uint32(rng.IntN(lines + 2)), Character: uint32(rng.IntN(6))}
				}
				from, to := pos(), pos()
				if rng.IntN(3) > 0 { // mostly typing: an empty range
					to = from
				}
				s := piece()
				start, end := offsetOf(want, from, enc), offsetOf(want, to, enc)
				if end < start {
					start, end = end, start
				}
				before := want
				want = want[:start] + s + want[end:]
				tb.apply(from, to, s, enc)
				if got := string(tb.b); got != want {
					t.Fatalf("%s, round %d step %d: replacing %v–%v of %q with %q gave %q, want %q",
						enc, round, step, from, to, before, s, got, want)
				}
				if rng.IntN(50) == 0 {
					tb = newTypingBuffer(string(tb.b)) // read, then typed into again
				}
			}
		}
	}
}

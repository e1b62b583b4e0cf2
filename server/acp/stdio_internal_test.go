package acp

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// TestReadLineJoinsPieces: a line longer than the reader's buffer comes
// back whole (pieces joined in order), without its newline or CR, with room
// for the newline filterInput appends, and the next line follows.
func TestReadLineJoinsPieces(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 20_000) + "end" // 320 KB: five 64 KiB reads
	r := bufio.NewReaderSize(strings.NewReader(long+"\r\nnext\nlast"), 64<<10)
	for _, want := range []struct {
		line string
		err  error
	}{{long, nil}, {"next", nil}, {"last", io.EOF}} {
		got, err := readLine(r)
		if string(got) != want.line || err != want.err {
			t.Fatalf("readLine = %d bytes %.20q…, %v; want %d bytes %.20q…, %v", len(got), got, err, len(want.line), want.line, want.err)
		}
		if cap(got) == len(got) {
			t.Errorf("no room for the newline after %.20q…: filterInput would copy the line", got)
		}
	}
}

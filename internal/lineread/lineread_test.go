package lineread

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// A line longer than the reader's buffer comes back whole (pieces joined
// in order), without its newline or CR, with the room asked for, and the
// next line follows; the last line comes with io.EOF.
func TestReadJoinsPieces(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 20_000) + "end" // 320 KB: five 64 KiB reads
	r := bufio.NewReaderSize(strings.NewReader(long+"\r\nnext\nlast"), 64<<10)
	for _, want := range []struct {
		line string
		err  error
	}{{long, nil}, {"next", nil}, {"last", io.EOF}} {
		got, err := Read(r, 1<<20, 1)
		if string(got) != want.line || err != want.err {
			t.Fatalf("Read = %d bytes %.20q…, %v; want %d bytes %.20q…, %v", len(got), got, err, len(want.line), want.line, want.err)
		}
		if cap(got) == len(got) {
			t.Errorf("no room for the newline after %.20q…", got)
		}
	}
}

// A line past the bound is consumed whole and reported; the next line is
// read as usual.
func TestReadTooLong(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 200_000)+"\nok\n"), 16)
	if _, err := Read(r, 100_000, 0); !errors.Is(err, ErrTooLong) {
		t.Fatalf("err = %v, want ErrTooLong", err)
	}
	if got, err := Read(r, 100_000, 0); string(got) != "ok" || err != nil {
		t.Fatalf("next line %q, %v", got, err)
	}
}

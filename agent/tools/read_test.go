package tools

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/message"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadText(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.txt":     "alpha\nbeta\ngamma\n",
		"crlf.txt":  "one\r\ntwo\r\n",
		"bom.txt":   "\xef\xbb\xbfhead\nbody\n",
		"empty.txt": "",
		"nonl.txt":  "last line",
		"big.txt":   numbered(9000),
	})
	ws := NewDiskWorkspace(dir)
	tool := NewRead(ws)
	cases := []struct {
		name string
		args map[string]any
		want []string
		not  []string
	}{
		{"whole", map[string]any{"path": "a.txt"}, []string{"     1\talpha\n     2\tbeta\n     3\tgamma"}, []string{"truncated", "offset="}},
		{"absolute", map[string]any{"path": filepath.Join(dir, "a.txt")}, []string{"     2\tbeta"}, nil},
		{"offset", map[string]any{"path": "a.txt", "offset": 2}, []string{"     2\tbeta\n     3\tgamma"}, []string{"alpha"}},
		{"offset+limit", map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, []string{"     2\tbeta", "[showing lines 2-2 of 3; call read with offset=3 to continue]"}, []string{"gamma"}},
		{"string numbers", map[string]any{"path": "a.txt", "offset": "3"}, []string{"     3\tgamma"}, []string{"beta"}},
		{"crlf shown without CR", map[string]any{"path": "crlf.txt"}, []string{"     1\tone\n     2\ttwo"}, []string{"\r"}},
		{"bom stripped", map[string]any{"path": "bom.txt"}, []string{"     1\thead"}, []string{"\ufeff"}},
		{"empty", map[string]any{"path": "empty.txt"}, []string{"empty"}, nil},
		{"no final newline", map[string]any{"path": "nonl.txt"}, []string{"     1\tlast line"}, nil},
		{"truncated by lines", map[string]any{"path": "big.txt"}, []string{"  2000\tline 2000", "[truncated: showing lines 1-2000 of 9000; call read with offset=2001 to continue]"}, []string{"line 2001\n"}},
		{"continue", map[string]any{"path": "big.txt", "offset": 8500}, []string{"  8500\tline 8500", "  9000\tline 9000"}, []string{"truncated"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := mustOK(t, run(t, tool, c.args))
			contains(t, out, c.want...)
			notContains(t, out, c.not...)
		})
	}
}

func TestReadTruncatesByBytesAndLongLines(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 3000)
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString(strings.Repeat("y", 1000) + "\n")
	}
	writeFiles(t, dir, map[string]string{"long.txt": "short\n" + long + "\nend\n", "wide.txt": b.String()})
	tool := NewRead(NewDiskWorkspace(dir))

	out := mustOK(t, run(t, tool, map[string]any{"path": "long.txt"}))
	contains(t, out, "[line truncated: 3000 chars]", "     3\tend", "longer than 2000 characters were cut")
	notContains(t, out, strings.Repeat("x", 2001))

	out = mustOK(t, run(t, tool, map[string]any{"path": "wide.txt"}))
	if len(out) > MaxOutputBytes+200 {
		t.Fatalf("output %d bytes, over the limit", len(out))
	}
	contains(t, out, "[truncated: showing lines 1-", "of 100; call read with offset=")
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.txt":       "alpha\n",
		"Readme.md":   "hi\n",
		"sub/x.go":    "package x\n",
		"bin.dat":     "ELF\x00\x01\x02",
		"latin1.txt":  "caf\xe9 au lait\n",
		"utf8cut.txt": strings.Repeat("a", binarySniffLen-1) + "é and more",
	})
	tool := NewRead(NewDiskWorkspace(dir))
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"missing", map[string]any{"path": "nope.txt"}, []string{"File not found: nope.txt", "ls", "find"}},
		{"missing suggests", map[string]any{"path": "README.md"}, []string{"Did you mean: Readme.md"}},
		{"directory", map[string]any{"path": "sub"}, []string{"sub is a directory", "ls"}},
		{"binary NUL", map[string]any{"path": "bin.dat"}, []string{"binary file"}},
		{"binary invalid utf8", map[string]any{"path": "latin1.txt"}, []string{"binary file"}},
		{"offset past end", map[string]any{"path": "a.txt", "offset": 5}, []string{"offset 5 is past the end", "1 line"}},
		{"no path", map[string]any{}, []string{"read needs a path"}},
		{"bad args", map[string]any{"path": 3}, []string{"Invalid arguments for read"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustErr(t, run(t, tool, c.args), c.want...)
		})
	}
	// A multi-byte rune cut by the 8 KB sniff window is still text.
	mustOK(t, run(t, tool, map[string]any{"path": "utf8cut.txt"}))
}

func TestReadImage(t *testing.T) {
	dir := t.TempDir()
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
	files := map[string]string{
		"pic.png":  png,
		"pic.jpg":  "\xff\xd8\xff\xe0\x00\x10JFIF\x00",
		"pic.gif":  "GIF89a\x01\x00\x01\x00",
		"pic.webp": "RIFF\x24\x00\x00\x00WEBPVP8 ",
		"misnamed": png,
	}
	writeFiles(t, dir, files)
	tool := NewRead(NewDiskWorkspace(dir))
	for name, mime := range map[string]string{"pic.png": "image/png", "pic.jpg": "image/jpeg", "pic.gif": "image/gif", "pic.webp": "image/webp", "misnamed": "image/png"} {
		r := run(t, tool, map[string]any{"path": name})
		mustOK(t, r)
		if len(r.Content) != 2 || r.Content[1].Type != message.TypeImage {
			t.Fatalf("%s: content %+v", name, r.Content)
		}
		img := r.Content[1]
		if img.MimeType != mime {
			t.Errorf("%s: mime %q, want %q", name, img.MimeType, mime)
		}
		data, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil || string(data) != files[name] {
			t.Errorf("%s: image data does not round-trip (%v)", name, err)
		}
		contains(t, r.Content[0].Text, name, mime)
	}
}

func TestReadImageTooLarge(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, MaxImageBytes+1)
	copy(big, "\x89PNG\r\n\x1a\n")
	if err := os.WriteFile(filepath.Join(dir, "huge.png"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	mustErr(t, run(t, NewRead(NewDiskWorkspace(dir)), map[string]any{"path": "huge.png"}), "Shrink it")
}

func TestReadSeesOverlay(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.go": "on disk\n"})
	ws := newOverlay(dir)
	ws.open(filepath.Join(dir, "a.go"), "unsaved buffer\n")
	ws.open(filepath.Join(dir, "new.go"), "only in editor\n")
	tool := NewRead(ws)
	contains(t, mustOK(t, run(t, tool, map[string]any{"path": "a.go"})), "unsaved buffer")
	contains(t, mustOK(t, run(t, tool, map[string]any{"path": "new.go"})), "only in editor")
}

func TestReadTilde(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFiles(t, home, map[string]string{"notes.txt": "from home\n"})
	out := mustOK(t, run(t, NewRead(NewDiskWorkspace(t.TempDir())), map[string]any{"path": "~/notes.txt"}))
	contains(t, out, "from home")
}

package server

import "testing"

func TestInstructionOf(t *testing.T) {
	for line, want := range map[string]string{
		"// zot: make this iterative":          "make this iterative",
		"    # zot: add a docstring  ":         "add a docstring",
		"-- zot: use a CTE":                    "use a CTE",
		";; zot: tail-recursive please":        "tail-recursive please",
		"/* zot: inline this */":               "inline this",
		"<!-- zot: add alt text -->":           "add alt text",
		"% ZOT: fix the citation":              "fix the citation",
		"(* zot: match exhaustively *)":        "match exhaustively",
		"x := 1 // zot: not a whole line":      "",
		"// zot:":                              "",
		"// zotx: nope":                        "",
		"// a comment that mentions zot: here": "",
		"zot: no comment leader":               "",
	} {
		if got := instructionOf(line); got != want {
			t.Errorf("instructionOf(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestInstructionLinesOnlyInRange(t *testing.T) {
	text := "# zot: one\r\nx\n# zot: three\n# zot: four"
	got := instructionLines(text, 1, 3)
	if len(got) != 2 || got[0].Line != 2 || got[0].Do != "three" || got[1].Line != 3 || got[1].Text != "# zot: four" {
		t.Fatalf("instructionLines = %+v", got)
	}
	if got := instructionLines(text, 0, 0); len(got) != 1 || got[0].Text != "# zot: one" {
		t.Fatalf("a CRLF line: %+v", got)
	}
	mixed := "a := 1 // zot: not whole // zot: x\n\n# Zot: yes\nzot:zot:\n"
	if got := instructionLines(mixed, 0, 4); len(got) != 1 || got[0].Line != 2 || got[0].Do != "yes" {
		t.Fatalf("mixed: %+v", got)
	}
	if got := instructionLines(text, 9, 12); got != nil {
		t.Fatalf("past the end: %+v", got)
	}
}

func TestWithoutLine(t *testing.T) {
	for _, c := range []struct {
		text, line string
		near       int
		want       string
		ok         bool
	}{
		{"a\n# zot: x\nb\n", "# zot: x", 1, "a\nb\n", true},
		{"a\n# zot: x\nb\n", "# zot: x", 5, "a\nb\n", true},               // moved by the edit
		{"# zot: x\na\n# zot: x\n", "# zot: x", 2, "# zot: x\na\n", true}, // the nearest of two
		{"a\r\n# zot: x\r\nb", "# zot: x", 1, "a\r\nb", true},             // CRLF
		{"a\n# zot: x", "# zot: x", 1, "a\n", true},                       // no final newline
		{"a\n# zot: x, changed\n", "# zot: x", 1, "", false},              // the model changed it
	} {
		got, ok := withoutLine(c.text, c.line, c.near)
		if got != c.want || ok != c.ok {
			t.Errorf("withoutLine(%q, %q, %d) = %q, %v; want %q, %v", c.text, c.line, c.near, got, ok, c.want, c.ok)
		}
	}
}

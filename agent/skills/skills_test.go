package skills

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillFile(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
}

// Every root is searched in order and the first skill of a name wins.
func TestDiscoverOrderFirstNameWins(t *testing.T) {
	cwd, zh, uh := t.TempDir(), t.TempDir(), t.TempDir()
	roots := Roots(cwd, zh, uh)
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, r.Dir)
	}
	want := []string{
		filepath.Join(cwd, ".zot", "skills"), filepath.Join(zh, "skills"),
		filepath.Join(cwd, ".claude", "skills"), filepath.Join(uh, ".claude", "skills"),
		filepath.Join(cwd, ".agents", "skills"), filepath.Join(uh, ".agents", "skills"),
	}
	if !reflect.DeepEqual(dirs, want) {
		t.Fatalf("roots:\n%v\nwant\n%v", dirs, want)
	}
	// "dup" in every root: each root's copy names its root; the first wins.
	for i, d := range want {
		write(t, filepath.Join(d, "dup", FileName), skillFile("dup", "from root "+string(rune('0'+i)), "body"))
	}
	write(t, filepath.Join(uh, ".agents", "skills", "last", FileName), skillFile("last", "only in the last root", "last body"))
	// A directory name differing from the frontmatter name: the name wins.
	write(t, filepath.Join(cwd, ".claude", "skills", "dir-name", FileName), skillFile("real-name", "named in the frontmatter", "x"))
	list, warns := Discover(roots)
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
	got := map[string]Skill{}
	for _, s := range list {
		got[s.Name] = s
	}
	if len(list) != 3 || got["dup"].Description != "from root 0" || got["dup"].Source != ".zot/skills (project)" ||
		got["last"].Body != "last body" || got["last"].Source != "~/.agents/skills" || got["real-name"].Description != "named in the frontmatter" {
		t.Fatalf("skills: %+v", list)
	}
	// Without the first root, the second wins.
	os.RemoveAll(want[0])
	list, _ = Discover(roots)
	for _, s := range list {
		if s.Name == "dup" && s.Description != "from root 1" {
			t.Fatalf("dup after removing the first root: %+v", s)
		}
	}
}

// A Claude Code–style SKILL.md: allowed-tools as a string or a list,
// permissions kept, the body after the frontmatter.
func TestParseClaudeStyle(t *testing.T) {
	s, w := Parse("a/SKILL.md", []byte("---\nname: pdf\ndescription: >\n  Extract text from PDFs.\n  Use for any .pdf.\nallowed-tools: Read, Bash(python:*)\npermissions:\n  bash: ask\n---\n\n# PDF\n\nRun scripts/extract.py.\n"))
	if w != nil {
		t.Fatal(w)
	}
	if s.Name != "pdf" || s.Description != "Extract text from PDFs. Use for any .pdf." || s.Body != "# PDF\n\nRun scripts/extract.py.\n" {
		t.Fatalf("%+v", s)
	}
	if !reflect.DeepEqual(s.AllowedTools, []string{"Read", "Bash(python:*)"}) {
		t.Fatalf("allowed-tools: %q", s.AllowedTools)
	}
	if p, ok := s.Permissions.(map[string]any); !ok || p["bash"] != "ask" {
		t.Fatalf("permissions: %#v", s.Permissions)
	}
	s, w = Parse("b/SKILL.md", []byte("---\r\nname: b\r\ndescription: d\r\nallowed-tools:\r\n  - read\r\n  - grep\r\n---\r\nbody\r\n"))
	if w != nil || !reflect.DeepEqual(s.AllowedTools, []string{"read", "grep"}) || s.Body != "body\n" {
		t.Fatalf("%+v %v", s, w)
	}
}

// A broken file is skipped with a warning naming its file and the line at
// fault.
func TestParseBrokenFrontmatterNamesLine(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		msg        string
	}{
		{"no frontmatter", "# just markdown\n", 1, "no YAML frontmatter"},
		{"not closed", "---\nname: x\ndescription: y\n", 1, "not closed"},
		{"bad yaml", "---\nname: x\ndescription: y\nallowed-tools: \"read\n---\nbody\n", 4, "invalid YAML frontmatter"},
		{"bad mapping", "---\nname: x\ndescription: a: b: c\n---\n", 3, "invalid YAML frontmatter"},
		{"wrong type", "---\nname: x\ndescription:\n  - a\n  - b\n---\n", 4, "invalid YAML frontmatter"},
		{"no description", "---\nname: x\n---\nbody\n", 2, "no description"},
		{"bad name", "---\ndescription: d\nname: has space\n---\n", 3, "letters, digits"},
		{"bad tools", "---\nname: x\ndescription: d\nallowed-tools:\n  - {a: 1}\n---\n", 5, "allowed-tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, w := Parse("/p/SKILL.md", []byte(tc.text))
			if w == nil {
				t.Fatal("no warning")
			}
			if w.Line != tc.line || !strings.Contains(w.Msg, tc.msg) || !strings.HasPrefix(w.String(), "skill /p/SKILL.md:") {
				t.Fatalf("warning %q (line %d), want line %d and %q", w, w.Line, tc.line, tc.msg)
			}
		})
	}
}

// Discover skips a broken skill with its warning and keeps the others; a
// later good copy of the same name is used.
func TestDiscoverSkipsBroken(t *testing.T) {
	cwd, uh := t.TempDir(), t.TempDir()
	write(t, filepath.Join(cwd, ".zot", "skills", "x", FileName), "---\nname: x\n---\n")
	write(t, filepath.Join(uh, ".claude", "skills", "x", FileName), skillFile("x", "the good one", "b"))
	write(t, filepath.Join(cwd, ".zot", "skills", "notes", "README.md"), "not a skill")
	list, warns := Discover(Roots(cwd, "", uh))
	if len(list) != 1 || list[0].Description != "the good one" {
		t.Fatalf("skills: %+v", list)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), filepath.Join(cwd, ".zot", "skills", "x", FileName)+":2: no description") {
		t.Fatalf("warnings: %v", warns)
	}
}

func TestPromptArguments(t *testing.T) {
	s := Skill{Body: "Review $ARGUMENTS carefully.\n"}
	if got := Prompt(s, " src/ "); got != "Review src/ carefully." {
		t.Fatalf("%q", got)
	}
	s.Body = "Review the diff.\n"
	if got := Prompt(s, "focus on tests"); got != "Review the diff.\n\nfocus on tests" {
		t.Fatalf("%q", got)
	}
	if got := Prompt(s, ""); got != "Review the diff." {
		t.Fatalf("%q", got)
	}
}

func TestManifest(t *testing.T) {
	if Manifest(nil) != "" {
		t.Fatal("a manifest without skills")
	}
	m := Manifest([]Skill{{Name: "a", Description: "does A"}, {Name: "b", Description: "does B"}})
	if !strings.HasPrefix(m, "# Available skills\n") || !strings.Contains(m, "\n- a: does A\n- b: does B") || !strings.Contains(m, "skill tool") {
		t.Fatalf("%s", m)
	}
}

// A rediscovery through the same Cache reads only what changed: an
// unchanged SKILL.md is stat'ed, not read; an edited one (size or
// modification time) is read and parsed again; a removed one is gone.
func TestCacheRereadsOnlyChanged(t *testing.T) {
	cwd := t.TempDir()
	root := filepath.Join(cwd, ".zot", "skills")
	write(t, filepath.Join(root, "a", FileName), skillFile("a", "first a", "body a"))
	write(t, filepath.Join(root, "b", FileName), skillFile("b", "first b", "body b"))
	var reads []string
	readFile = func(p string) ([]byte, error) {
		reads = append(reads, filepath.Base(filepath.Dir(p)))
		return os.ReadFile(p)
	}
	defer func() { readFile = os.ReadFile }()
	var c Cache
	descs := func() string {
		list, _ := c.Discover(Roots(cwd, "", ""))
		var out []string
		for _, s := range list {
			out = append(out, s.Name+"="+s.Description)
		}
		return strings.Join(out, " ")
	}
	if got := descs(); got != "a=first a b=first b" || strings.Join(reads, ",") != "a,b" {
		t.Fatalf("first discovery %q, reads %v", got, reads)
	}
	reads = nil
	if got := descs(); got != "a=first a b=first b" || len(reads) != 0 {
		t.Fatalf("unchanged: %q, reads %v", got, reads)
	}
	write(t, filepath.Join(root, "b", FileName), skillFile("b", "second b, longer", "body b"))
	old := time.Now().Add(-time.Hour) // same size, older time: still a change
	write(t, filepath.Join(root, "a", FileName), skillFile("a", "other a", "body a"))
	if err := os.Chtimes(filepath.Join(root, "a", FileName), old, old); err != nil {
		t.Fatal(err)
	}
	if got := descs(); got != "a=other a b=second b, longer" || strings.Join(reads, ",") != "a,b" {
		t.Fatalf("changed: %q, reads %v", got, reads)
	}
	os.RemoveAll(filepath.Join(root, "a"))
	if got := descs(); got != "b=second b, longer" {
		t.Fatalf("removed: %q", got)
	}
}

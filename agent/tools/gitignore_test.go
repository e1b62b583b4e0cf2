package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestGitignoreRules(t *testing.T) {
	cases := []struct {
		name    string
		rules   string
		path    string
		isDir   bool
		ignored bool
	}{
		{"basename any depth", "*.log", "a/b/x.log", false, true},
		{"basename no match", "*.log", "a/b/x.txt", false, false},
		{"comment", "#x", "#x", false, false},
		{"escaped hash", `\#x`, "#x", false, true},
		{"escaped bang", `\!x`, "!x", false, true},
		{"blank lines", "\n\n", "a", false, false},
		{"negation", "*.log\n!keep.log", "keep.log", false, false},
		{"negation then re-ignore", "*.log\n!keep.log\nkeep.log", "keep.log", false, true},
		{"dir only matches dir", "build/", "build", true, true},
		{"dir only skips file", "build/", "build", false, false},
		{"dir only nested", "build/", "src/build", true, true},
		{"anchored leading slash", "/root.txt", "root.txt", false, true},
		{"anchored leading slash not nested", "/root.txt", "sub/root.txt", false, false},
		{"anchored middle slash", "doc/frotz", "doc/frotz", false, true},
		{"anchored middle slash not nested", "doc/frotz", "a/doc/frotz", false, false},
		{"star does not cross slash", "a/*.go", "a/b/c.go", false, false},
		{"star in anchored", "a/*.go", "a/c.go", false, true},
		{"leading doublestar", "**/foo", "x/y/foo", false, true},
		{"leading doublestar top", "**/foo", "foo", false, true},
		{"leading doublestar path", "**/foo/bar", "x/foo/bar", false, true},
		{"trailing doublestar", "abc/**", "abc/x/y", false, true},
		{"trailing doublestar not the dir itself", "abc/**", "abc", true, false},
		{"middle doublestar zero dirs", "a/**/b", "a/b", false, true},
		{"middle doublestar many dirs", "a/**/b", "a/x/y/b", false, true},
		{"char class", "file[0-9].txt", "file7.txt", false, true},
		{"negated char class", "file[!0-9].txt", "file7.txt", false, false},
		{"negated char class match", "file[!0-9].txt", "filex.txt", false, true},
		{"question mark", "?.c", "a.c", false, true},
		{"trailing spaces dropped", "foo.txt   ", "foo.txt", false, true},
		{"escaped trailing space kept", `foo\ `, "foo ", false, true},
		{"crlf file", "*.tmp\r\n!a.tmp\r\n", "a.tmp", false, false},
		{"malformed pattern ignored", "[\n*.x", "a.x", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := ignoreStack{}.push(parseGitignore("", []byte(c.rules)))
			if got := st.ignored(c.path, c.isDir); got != c.ignored {
				t.Fatalf("rules %q path %q dir=%v: ignored=%v, want %v", c.rules, c.path, c.isDir, got, c.ignored)
			}
		})
	}
}

func TestGitignoreNestedPrecedence(t *testing.T) {
	st := ignoreStack{}.
		push(parseGitignore("", []byte("*.gen\n/top.txt\n"))).
		push(parseGitignore("sub", []byte("!keep.gen\n/local.txt\nonly-here\n")))
	cases := []struct {
		path    string
		ignored bool
	}{
		{"a.gen", true},
		{"sub/a.gen", true},
		{"sub/keep.gen", false}, // deeper file wins
		{"keep.gen", true},      // the nested rule does not reach up
		{"top.txt", true},
		{"sub/top.txt", false}, // anchored to the root file's directory
		{"sub/local.txt", true},
		{"local.txt", false},
		{"sub/x/only-here", true},
		{"only-here", false},
	}
	for _, c := range cases {
		if got := st.ignored(c.path, false); got != c.ignored {
			t.Errorf("%s: ignored=%v, want %v", c.path, got, c.ignored)
		}
	}
}

func TestWalkTree(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".gitignore":           "*.log\nbuild/\n!important.log\nsecret/\n",
		".git/config":          "x",
		".git/info/exclude":    "excluded.txt\n",
		"excluded.txt":         "",
		"a.go":                 "",
		"debug.log":            "",
		"important.log":        "",
		"build/out.bin":        "",
		"src/build/x":          "",
		"src/main.go":          "",
		"src/.gitignore":       "gen_*\n!gen_keep.go\n",
		"src/gen_a.go":         "",
		"src/gen_keep.go":      "",
		"secret/important.log": "", // inside an ignored dir: stays ignored
		".hidden":              "",
	})
	var got []string
	err := walkTree(context.Background(), NewDiskWorkspace(dir), dir, false, func(e walkEntry) error {
		p := e.rel
		if e.isDir {
			p += "/"
		}
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", ".hidden", "a.go", "important.log", "src/", "src/.gitignore", "src/gen_keep.go", "src/main.go"}
	if !slices.Equal(got, want) {
		t.Fatalf("walk:\n got %q\nwant %q", got, want)
	}

	// Starting in a subdirectory still applies the root's .gitignore.
	got = nil
	walkTree(context.Background(), NewDiskWorkspace(dir), filepath.Join(dir, "src"), false, func(e walkEntry) error {
		got = append(got, e.rel)
		return nil
	})
	if want := []string{"src/.gitignore", "src/gen_keep.go", "src/main.go"}; !slices.Equal(got, want) {
		t.Fatalf("walk from src: got %q want %q", got, want)
	}
}

// A walk that lists directories ahead visits what a plain walk visits, in
// the same order, through SkipDir and an early stop, and leaves no lister
// running.
func TestWalkTreeListAhead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	dir := t.TempDir()
	files := map[string]string{".gitignore": "ignored/\n*.tmp\n", "ignored/x.go": ""}
	for i := range 30 {
		for j := range 5 {
			files[fmt.Sprintf("d%02d/e%d/f.go", i, j)] = ""
			files[fmt.Sprintf("d%02d/e%d/g.tmp", i, j)] = ""
		}
		files[fmt.Sprintf("d%02d/top.txt", i)] = ""
	}
	files["d07/.gitignore"] = "e3/\n"
	writeFiles(t, dir, files)
	if err := os.Symlink(filepath.Join(dir, "d01"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	walk := func(listAhead bool, stopAt string, skip string) []string {
		var got []string
		err := walkTree(context.Background(), NewDiskWorkspace(dir), dir, listAhead, func(e walkEntry) error {
			got = append(got, e.rel)
			if e.rel == skip {
				return fs.SkipDir
			}
			if e.rel == stopAt {
				return errStopWalk
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// A cancelled walk of an earlier test may still have a lister ending.
	for deadline := time.Now().Add(10 * time.Second); listersRunning.Load() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d listers of earlier walks never ended", listersRunning.Load())
		}
		runtime.Gosched()
	}
	// Nothing else of the walks is left either.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, c := range []struct{ stopAt, skip string }{{"", ""}, {"", "d03"}, {"d05/e2/f.go", ""}, {"d00", ""}} {
		plain, ahead := walk(false, c.stopAt, c.skip), walk(true, c.stopAt, c.skip)
		if n := listersRunning.Load(); n != 0 {
			t.Errorf("stop at %q, skip %q: %d listers still running when the walk returned", c.stopAt, c.skip, n)
		}
		if !slices.Equal(plain, ahead) {
			t.Errorf("stop at %q, skip %q: listed ahead\n%q\nplain\n%q", c.stopAt, c.skip, ahead, plain)
		}
		if c.stopAt == "" && c.skip == "" && (len(plain) != 1+1+30*(1+1+5*2)-1 || slices.Contains(plain, "d07/e3/f.go")) {
			t.Errorf("the walk saw %d entries: %q", len(plain), plain)
		}
	}
}

// A cancelled walk returns though a lister is stuck listing a directory
// the walk never entered (a hung network mount, here a listDir that
// blocks); the lister ends once its read does.
func TestWalkTreeCancelledLeavesAStuckLister(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a/x.go": "", "slow/y.go": ""})
	entered, release := make(chan struct{}), make(chan struct{})
	defer func(old func(string) ([]os.DirEntry, error)) { listDir = old }(listDir)
	listDir = func(d string) ([]os.DirEntry, error) {
		if filepath.Base(d) == "slow" {
			close(entered)
			<-release
		}
		return os.ReadDir(d)
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the lister ends once its read returns
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() {
		returned <- walkTree(ctx, NewDiskWorkspace(dir), dir, true, func(e walkEntry) error {
			<-entered // a lister is in slow now
			cancel()
			return errStopWalk
		})
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the cancelled walk waited for the stuck lister")
	}
	close(release)
}

func TestGitignoreReadThroughWorkspace(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".gitignore": "", "a.tmp": "", "b.txt": ""})
	ws := newOverlay(dir)
	ws.open(filepath.Join(dir, ".gitignore"), "*.tmp\n") // unsaved edit
	var got []string
	walkTree(context.Background(), ws, dir, false, func(e walkEntry) error {
		got = append(got, e.rel)
		return nil
	})
	if want := []string{".gitignore", "b.txt"}; !slices.Equal(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestGlob(t *testing.T) {
	cases := []struct {
		pattern, path string
		match         bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true},
		{"*.go", "main.go.txt", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/x/a.go", false},
		{"src/**/*.go", "src/a.go", true},
		{"src/**/*.go", "src/x/y/a.go", true},
		{"src/**", "src/x/y", true},
		{"**/test/*", "a/test/b", true},
		{"*.{ts,tsx}", "x/y.tsx", true},
		{"*.{ts,tsx}", "x/y.js", false},
		{"{cmd,pkg}/**/*.go", "pkg/a/b.go", true},
		{"{a,{b,c}}.txt", "c.txt", true},
		{"{x}.txt", "{x}.txt", true},
		{"./src/*.go", "src/a.go", true},
		{"Makefile", "sub/Makefile", true},
		{"[!a]*.go", "b.go", true},
		{"[!a]*.go", "a.go", false},
	}
	for _, c := range cases {
		set, err := compileGlobSet(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := set.match(c.path); got != c.match {
			t.Errorf("glob %q on %q = %v, want %v", c.pattern, c.path, got, c.match)
		}
	}
	if _, err := compileGlobSet("[abc"); err == nil {
		t.Error("unterminated class should not compile")
	}
}

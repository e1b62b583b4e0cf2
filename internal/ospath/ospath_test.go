package ospath

import "testing"

func TestFromURIOnWindows(t *testing.T) {
	cases := []struct{ uri, want string }{
		{"file:///c%3A/Users/Ana/proj/main.go", `C:\Users\Ana\proj\main.go`}, // VS Code
		{"file:///C:/Users/Ana/proj/main.go", `C:\Users\Ana\proj\main.go`},   // Neovim, gopls
		{"file:///d%3A/My%20Code/a%23b.go", `D:\My Code\a#b.go`},
		{"file:///c%3A", `C:\`},
		{"file:///c%3A/", `C:\`},
		{"file://server/share/dir/x.txt", `\\server\share\dir\x.txt`},
		{"file://localhost/C:/x", `C:\x`},
		{"file://c:/x/y", `C:\x\y`},
		{"file:///C:/a/../b", `C:\b`},
	}
	for _, c := range cases {
		got, err := FromURIOn("windows", c.uri)
		if err != nil || got != c.want {
			t.Errorf("FromURIOn(windows, %q) = %q, %v; want %q", c.uri, got, err, c.want)
		}
	}
}

func TestFromURIOnUnix(t *testing.T) {
	cases := []struct{ uri, want string }{
		{"file:///home/ana/proj/main.go", "/home/ana/proj/main.go"},
		{"file:///home/ana/My%20Code/a%23b.go", "/home/ana/My Code/a#b.go"},
		{"file://localhost/tmp/x", "/tmp/x"},
		{"file:///Users/ana/c%3A", "/Users/ana/c:"},
	}
	for _, goos := range []string{"linux", "darwin"} {
		for _, c := range cases {
			got, err := FromURIOn(goos, c.uri)
			if err != nil || got != c.want {
				t.Errorf("FromURIOn(%s, %q) = %q, %v; want %q", goos, c.uri, got, err, c.want)
			}
		}
	}
}

func TestFromURIRejects(t *testing.T) {
	for _, c := range []struct{ goos, uri string }{
		{"linux", "untitled:Untitled-1"},
		{"linux", "git:/home/a/x.go?ref"},
		{"linux", "file://server/share/x"},
		{"linux", "file:relative/x"},
		{"windows", "file:c:/x"},
		{"windows", "http://example.invalid/x"},
		{"linux", "%zz"},
	} {
		if got, err := FromURIOn(c.goos, c.uri); err == nil {
			t.Errorf("FromURIOn(%s, %q) = %q, want an error", c.goos, c.uri, got)
		}
	}
}

func TestToURIOn(t *testing.T) {
	cases := []struct{ goos, path, want string }{
		{"windows", `C:\Users\Ana\proj\main.go`, "file:///C:/Users/Ana/proj/main.go"},
		{"windows", `c:\My Code\a#b.go`, "file:///C:/My%20Code/a%23b.go"},
		{"windows", `C:\`, "file:///C:/"},
		{"windows", `\\server\share\x.txt`, "file://server/share/x.txt"},
		{"linux", "/home/ana/My Code/a#b.go", "file:///home/ana/My%20Code/a%23b.go"},
		{"darwin", "/Users/ana/x", "file:///Users/ana/x"},
	}
	for _, c := range cases {
		if got := ToURIOn(c.goos, c.path); got != c.want {
			t.Errorf("ToURIOn(%s, %q) = %q, want %q", c.goos, c.path, got, c.want)
		}
		// And back: the path (with the drive letter as Windows writes it).
		back, err := FromURIOn(c.goos, c.want)
		wantBack := c.path
		if c.goos == "windows" && wantBack[1] == ':' {
			wantBack = string(wantBack[0]&^0x20) + wantBack[1:]
		}
		if err != nil || back != wantBack {
			t.Errorf("FromURIOn(%s, %q) = %q, %v; want %q", c.goos, c.want, back, err, wantBack)
		}
	}
}

func TestWithinOn(t *testing.T) {
	cases := []struct {
		goos, dir, path string
		want            bool
	}{
		{"windows", `C:\Users\Ana\proj`, `C:\Users\Ana\proj\src\a.go`, true},
		{"windows", `C:\Users\Ana\proj`, `c:\users\ana\PROJ\src\a.go`, true},
		{"windows", `C:\Users\Ana\proj`, `C:/Users/Ana/proj/a.go`, true},
		{"windows", `C:\Users\Ana\proj`, `C:\Users\Ana\proj`, true},
		{"windows", `C:\Users\Ana\proj`, `C:\Users\Ana\project\a.go`, false},
		{"windows", `C:\Users\Ana\proj`, `D:\Users\Ana\proj\a.go`, false},
		{"windows", `C:\`, `C:\x`, true},
		{"darwin", "/Users/ana/proj", "/users/ANA/proj/a.go", true},
		{"darwin", "/Users/ana/proj", "/Users/ana/projX", false},
		{"linux", "/home/ana/proj", "/home/ana/proj/a.go", true},
		{"linux", "/home/ana/proj", "/home/ana/PROJ/a.go", false},
		{"linux", "/home/ana/proj", "/home/ana/proj2/a.go", false},
		{"linux", "/", "/etc/passwd", true},
		// Folding must not let a multi-byte name match a shorter prefix.
		{"darwin", "/Users/ana/é", "/Users/ana/e\u0301x", false},
	}
	for _, c := range cases {
		if got := WithinOn(c.goos, c.dir, c.path); got != c.want {
			t.Errorf("WithinOn(%s, %q, %q) = %v, want %v", c.goos, c.dir, c.path, got, c.want)
		}
	}
}

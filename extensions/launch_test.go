package extensions

import (
	"errors"
	"strings"
	"testing"
)

func fakeExecEnv(files []string, path map[string]string) execEnv {
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	return execEnv{
		isFile: func(p string) bool { return has[p] },
		lookPath: func(n string) (string, error) {
			if p, ok := path[n]; ok {
				return p, nil
			}
			return "", errors.New("not found")
		},
	}
}

// How each kind of exec line starts on Windows, checked on any OS.
func TestLaunchOnWindows(t *testing.T) {
	dir := `C:\Users\ana\.zot\extensions\hello`
	onPath := map[string]string{
		"pwsh": `C:\Program Files\PowerShell\7\pwsh.exe`,
		"py":   `C:\Windows\py.exe`,
		"node": `C:\Program Files\nodejs\node.exe`,
		"npx":  `C:\Program Files\nodejs\npx.cmd`,
	}
	files := []string{dir + `\hello.exe`, dir + `\run.cmd`, dir + `\tool.ps1`, dir + `\main.py`, dir + `\bin\server.bat`}
	cases := []struct {
		exec     string
		args     []string
		wantProg string
		wantArgs string
	}{
		{"hello", nil, dir + `\hello.exe`, ""},
		{"hello.exe", []string{"-v"}, dir + `\hello.exe`, "-v"},
		{"run.cmd", []string{"a"}, dir + `\run.cmd`, "a"},
		{"run", nil, dir + `\run.cmd`, ""},
		{"./bin/server", nil, dir + `\bin\server.bat`, ""},
		{"tool.ps1", []string{"x"}, onPath["pwsh"], `-NoProfile -NonInteractive -ExecutionPolicy Bypass -File ` + dir + `\tool.ps1 x`},
		{"main.py", nil, onPath["py"], `-3 ` + dir + `\main.py`},
		{"python3", []string{"main.py"}, onPath["py"], "-3 main.py"},
		{"npx", []string{"my-ext"}, onPath["npx"], "my-ext"},
		{"node", []string{"index.js"}, onPath["node"], "index.js"},
		{`D:\exts\x.exe`, nil, `D:\exts\x.exe`, ""},
	}
	env := fakeExecEnv(files, onPath)
	for _, c := range cases {
		p, pre, err := resolveExec("windows", dir, c.exec, env)
		if err != nil {
			t.Errorf("%s: %v", c.exec, err)
			continue
		}
		prog, args, err := launchArgs("windows", p, append(pre, c.args...), env)
		if err != nil || prog != c.wantProg || strings.Join(args, " ") != c.wantArgs {
			t.Errorf("exec %q %q starts %q %q (%v), want %q %q", c.exec, c.args, prog, strings.Join(args, " "), err, c.wantProg, c.wantArgs)
		}
	}
}

func TestLaunchOnWindowsNamesWhatIsMissing(t *testing.T) {
	dir := `C:\ext`
	env := fakeExecEnv([]string{dir + `\tool.ps1`, dir + `\main.py`}, nil)
	for exec, want := range map[string]string{"tool.ps1": "pwsh", "main.py": "py", "python3": "not on $PATH"} {
		p, pre, err := resolveExec("windows", dir, exec, env)
		if err == nil {
			_, _, err = launchArgs("windows", p, pre, env)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("exec %q: err = %v, want one naming %q", exec, err, want)
		}
	}
}

// Unix is unchanged: scripts run by their shebang, python3 is python3.
func TestLaunchOnUnix(t *testing.T) {
	dir := "/home/ana/.zot/extensions/hello"
	env := fakeExecEnv([]string{dir + "/run.sh", dir + "/main.py"}, map[string]string{"python3": "/usr/bin/python3", "py": "/usr/bin/py"})
	for _, c := range []struct{ exec, wantProg, wantArgs string }{
		{"run.sh", dir + "/run.sh", ""},
		{"./main.py", dir + "/main.py", ""},
		{"python3", "/usr/bin/python3", "main.py"},
	} {
		args := []string{}
		if c.exec == "python3" {
			args = []string{"main.py"}
		}
		p, pre, err := resolveExec("linux", dir, c.exec, env)
		if err != nil {
			t.Fatal(err)
		}
		prog, got, _ := launchArgs("linux", p, append(pre, args...), env)
		if prog != c.wantProg || strings.Join(got, " ") != c.wantArgs {
			t.Errorf("exec %q starts %q %q, want %q %q", c.exec, prog, got, c.wantProg, c.wantArgs)
		}
	}
	if _, _, err := resolveExec("linux", dir, "nosuch", env); err == nil {
		t.Error("a missing exec resolved")
	}
}

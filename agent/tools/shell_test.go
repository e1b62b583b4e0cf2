package tools

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
)

// fakeShellEnv is a machine with the given environment, PATH entries and
// files.
func fakeShellEnv(env map[string]string, path map[string]string, files ...string) shellEnv {
	isFile := map[string]bool{}
	for _, f := range files {
		isFile[f] = true
	}
	return shellEnv{
		getenv: func(k string) string { return env[k] },
		lookPath: func(name string) (string, error) {
			if p, ok := path[name]; ok {
				return p, nil
			}
			return "", errors.New("not found")
		},
		isFile: func(p string) bool { return isFile[p] },
	}
}

func TestFindShellWindows(t *testing.T) {
	pf := map[string]string{"ProgramFiles": `C:\Program Files`, "SystemRoot": `C:\Windows`, "LOCALAPPDATA": `C:\Users\ana\AppData\Local`}
	cases := []struct {
		name     string
		env      map[string]string
		path     map[string]string
		files    []string
		wantPath string
		wantName string
	}{
		{"Git Bash next to git on PATH",
			pf, map[string]string{"git": `D:\Tools\Git\cmd\git.exe`, "bash": `C:\Windows\System32\bash.exe`, "pwsh": `C:\pwsh\pwsh.exe`},
			[]string{`D:\Tools\Git\bin\bash.exe`},
			`D:\Tools\Git\bin\bash.exe`, "Git Bash"},
		{"Git Bash beside mingw64's git",
			pf, map[string]string{"git": `D:\Git\mingw64\bin\git.exe`},
			[]string{`D:\Git\bin\bash.exe`},
			`D:\Git\bin\bash.exe`, "Git Bash"},
		{"Git Bash in Program Files without git on PATH",
			pf, nil, []string{`C:\Program Files\Git\bin\bash.exe`},
			`C:\Program Files\Git\bin\bash.exe`, "Git Bash"},
		{"Git Bash installed per user",
			pf, nil, []string{`C:\Users\ana\AppData\Local\Programs\Git\bin\bash.exe`},
			`C:\Users\ana\AppData\Local\Programs\Git\bin\bash.exe`, "Git Bash"},
		{"ZOT_GIT_BASH_PATH wins",
			map[string]string{"ZOT_GIT_BASH_PATH": `E:\msys64\usr\bin\bash.exe`, "ProgramFiles": `C:\Program Files`},
			nil, []string{`E:\msys64\usr\bin\bash.exe`, `C:\Program Files\Git\bin\bash.exe`},
			`E:\msys64\usr\bin\bash.exe`, "Git Bash"},
		{"WSL's bash is not Git Bash: pwsh",
			pf, map[string]string{"bash": `C:\Windows\System32\bash.exe`, "pwsh": `C:\Program Files\PowerShell\7\pwsh.exe`, "powershell": `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`},
			nil,
			`C:\Program Files\PowerShell\7\pwsh.exe`, "PowerShell 7 (pwsh)"},
		{"Windows PowerShell on PATH",
			pf, map[string]string{"powershell": `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`},
			nil,
			`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "Windows PowerShell"},
		{"Windows PowerShell where Windows keeps it",
			map[string]string{"SystemRoot": `C:\WINDOWS`}, nil, nil,
			`C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe`, "Windows PowerShell"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sh := findShell("windows", fakeShellEnv(c.env, c.path, c.files...))
			if sh.path != c.wantPath || sh.name != c.wantName {
				t.Fatalf("findShell = %q (%s), want %q (%s)", sh.path, sh.name, c.wantPath, c.wantName)
			}
			if want := c.wantName != "Git Bash"; sh.powershell != want {
				t.Fatalf("powershell = %v, want %v", sh.powershell, want)
			}
			if !strings.Contains(sh.description(), c.wantName) {
				t.Fatalf("the description does not name %s:\n%s", c.wantName, sh.description())
			}
		})
	}
}

func TestFindShellUnix(t *testing.T) {
	sh := findShell("linux", fakeShellEnv(nil, map[string]string{"bash": "/usr/bin/bash"}))
	if sh.path != "/usr/bin/bash" || sh.powershell {
		t.Fatalf("findShell = %+v, want /usr/bin/bash", sh)
	}
	if got := sh.argv("echo hi"); strings.Join(got, " ") != "-c echo hi" {
		t.Fatalf("argv = %q", got)
	}
	if d := sh.description(); !strings.HasPrefix(d, "Run a shell command with bash -c") || strings.Contains(d, "Windows") {
		t.Fatalf("description: %s", d)
	}
	sh = findShell("darwin", fakeShellEnv(nil, nil))
	if sh.path != "sh" || !strings.HasPrefix(sh.description(), "Run a shell command with sh -c") {
		t.Fatalf("without bash: %+v", sh)
	}
}

func TestPowerShellArgvEncodesTheCommandVerbatim(t *testing.T) {
	sh := shell{path: "pwsh.exe", name: "PowerShell 7 (pwsh)", powershell: true}
	cmd := `Write-Output "a $env:X` + "`" + `" 'é✓𝄞'; exit 3`
	argv := sh.argv(cmd)
	if len(argv) != 4 || argv[0] != "-NoProfile" || argv[1] != "-NonInteractive" || argv[2] != "-EncodedCommand" {
		t.Fatalf("argv = %q", argv)
	}
	raw, err := base64.StdEncoding.DecodeString(argv[3])
	if err != nil || len(raw)%2 != 0 {
		t.Fatalf("not base64 of UTF-16: %v", err)
	}
	u := make([]uint16, len(raw)/2)
	for i := range u {
		u[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
	}
	script := string(utf16.Decode(u))
	if !strings.HasSuffix(script, "\n"+cmd) || !strings.Contains(script, "OutputEncoding = [System.Text.Encoding]::UTF8") {
		t.Fatalf("decoded script = %q", script)
	}
	if !strings.Contains(sh.description(), "PowerShell") || strings.Contains(sh.description(), "cmd &") {
		t.Fatalf("description: %s", sh.description())
	}
	if !strings.Contains(string(sh.schema()), "with PowerShell") {
		t.Fatalf("schema: %s", sh.schema())
	}
}

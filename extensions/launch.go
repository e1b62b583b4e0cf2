package extensions

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"strings"
)

// execEnv is what resolving an exec line looks at, injected so the Windows
// rules are tested on Linux.
type execEnv struct {
	isFile   func(string) bool
	lookPath func(string) (string, error)
}

func hostExecEnv() execEnv {
	return execEnv{
		isFile: func(p string) bool {
			st, err := os.Stat(p)
			return err == nil && !st.IsDir()
		},
		lookPath: exec.LookPath,
	}
}

// windowsExts are the extensions tried, in order, for an exec named
// without one in the extension's directory on Windows (as PATHEXT does
// for commands on PATH), plus the scripts zot knows how to start.
var windowsExts = []string{".exe", ".cmd", ".bat", ".ps1", ".py"}

// resolveExec finds the program an exec line names on goos: absolute paths
// stay, paths with a separator are relative to dir, a bare name is a file
// in dir if one exists, else looked up on PATH. On Windows a name without
// an extension also matches name.exe, .cmd, .bat, .ps1 or .py, and
// python3/python, when not on PATH, is the py launcher (the python.org
// installer's default): it returns "py" and the arguments to put first.
func resolveExec(goos, dir, e string, env execEnv) (string, []string, error) {
	win := goos == "windows"
	join := func(d, f string) string {
		if win {
			j := strings.ReplaceAll(d+"/"+f, `\`, "/")
			unc := strings.HasPrefix(j, "//")
			j = path.Clean(j)
			if unc {
				j = "/" + j
			}
			return strings.ReplaceAll(j, "/", `\`)
		}
		return path.Join(d, f)
	}
	try := func(p string) (string, bool) {
		if env.isFile(p) {
			return p, true
		}
		if win && path.Ext(strings.ReplaceAll(p, `\`, "/")) == "" {
			for _, x := range windowsExts {
				if env.isFile(p + x) {
					return p + x, true
				}
			}
		}
		return "", false
	}
	switch {
	case isAbsOn(goos, e):
		if p, ok := try(e); ok {
			return p, nil, nil
		}
		return e, nil, nil
	case strings.ContainsAny(e, `/\`) || e == "." || e == "..":
		if p, ok := try(join(dir, e)); ok {
			return p, nil, nil
		}
		return join(dir, e), nil, nil
	}
	if p, ok := try(join(dir, e)); ok {
		return p, nil, nil
	}
	if p, err := env.lookPath(e); err == nil {
		return p, nil, nil
	}
	if win && (e == "python3" || e == "python") {
		if p, err := env.lookPath("py"); err == nil {
			return p, []string{"-3"}, nil
		}
	}
	return "", nil, fmt.Errorf("exec %q: not in the extension directory and not on $PATH", e)
}

// isAbsOn is filepath.IsAbs for goos.
func isAbsOn(goos, p string) bool {
	if goos != "windows" {
		return strings.HasPrefix(p, "/")
	}
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z'
}

// launchArgs is the program and arguments that start a resolved exec on
// goos. Windows cannot run a PowerShell or Python script by itself: .ps1
// runs under pwsh (else Windows PowerShell) with -File, .py under the py
// launcher (else python). .exe, .cmd and .bat start directly (Windows
// runs batch files through cmd.exe).
func launchArgs(goos, execPath string, args []string, env execEnv) (string, []string, error) {
	if goos != "windows" {
		return execPath, args, nil
	}
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(execPath, `\`, "/")))
	with := func(pre ...string) []string {
		return append(append(append([]string{}, pre...), execPath), args...)
	}
	switch ext {
	case ".ps1":
		for _, ps := range []string{"pwsh", "powershell"} {
			if p, err := env.lookPath(ps); err == nil {
				return p, with("-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File"), nil
			}
		}
		return "", nil, fmt.Errorf("%s is a PowerShell script, and neither pwsh nor powershell is on PATH", execPath)
	case ".py":
		if p, err := env.lookPath("py"); err == nil {
			return p, with("-3"), nil
		}
		for _, py := range []string{"python3", "python"} {
			if p, err := env.lookPath(py); err == nil {
				return p, with(), nil
			}
		}
		return "", nil, fmt.Errorf("%s is a Python script, and neither py nor python is on PATH", execPath)
	}
	return execPath, args, nil
}

// Command is the program and arguments that start the extension in dir on
// this machine (see resolveExec and launchArgs).
func (m Manifest) Command(dir string) (string, []string, error) {
	if m.Pi != nil {
		return m.piCommand()
	}
	env := hostExecEnv()
	p, pre, err := resolveExec(runtime.GOOS, dir, m.Exec, env)
	if err != nil {
		return "", nil, err
	}
	return launchArgs(runtime.GOOS, p, append(pre, m.Args...), env)
}

package tools

import (
	"encoding/base64"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"unicode/utf16"
)

// shell is the program the bash tool runs the model's commands with.
type shell struct {
	path string // the executable
	// name is what the tool description calls it: "bash", "sh",
	// "Git Bash", "PowerShell 7 (pwsh)", "Windows PowerShell".
	name       string
	powershell bool // PowerShell syntax; otherwise a POSIX shell (-c)
}

// argv is the argument list (after the program) that runs command.
// PowerShell gets it as -EncodedCommand (base64 of UTF-16LE), so no quote,
// $ or backtick in it is mangled by Windows' command-line quoting, and
// its output is UTF-8 without progress bars.
func (s shell) argv(command string) []string {
	if !s.powershell {
		return []string{"-c", command}
	}
	script := "$ProgressPreference = 'SilentlyContinue'; [Console]::OutputEncoding = [System.Text.Encoding]::UTF8; $OutputEncoding = [System.Text.Encoding]::UTF8\n" + command
	u := utf16.Encode([]rune(script))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return []string{"-NoProfile", "-NonInteractive", "-EncodedCommand", base64.StdEncoding.EncodeToString(b)}
}

// shellEnv is what findShell looks at: the environment, PATH lookups and
// the file system, injected so the Windows choice is tested on Linux.
type shellEnv struct {
	getenv   func(string) string
	lookPath func(string) (string, error)
	isFile   func(string) bool
}

func hostShellEnv() shellEnv {
	return shellEnv{
		getenv:   os.Getenv,
		lookPath: exec.LookPath,
		isFile: func(p string) bool {
			st, err := os.Stat(p)
			return err == nil && st.Mode().IsRegular()
		},
	}
}

func hostShell() shell { return findShell(runtime.GOOS, hostShellEnv()) }

// findShell picks the shell on goos. Unix: bash, else sh. Windows, as
// Claude Code does: Git for Windows' bash.exe ($ZOT_GIT_BASH_PATH, else
// next to git.exe on PATH, else in its default install directories) —
// never C:\Windows\System32\bash.exe, which is WSL's and runs commands in
// a Linux VM that does not see the workspace's Windows paths — else
// PowerShell 7 (pwsh), else Windows PowerShell, which every Windows has.
func findShell(goos string, e shellEnv) shell {
	if goos != "windows" {
		if p, err := e.lookPath("bash"); err == nil {
			return shell{path: p, name: "bash"}
		}
		return shell{path: "sh", name: "sh"}
	}
	if p := e.getenv("ZOT_GIT_BASH_PATH"); p != "" && e.isFile(p) {
		return shell{path: p, name: "Git Bash"}
	}
	var candidates []string
	if git, err := e.lookPath("git"); err == nil {
		// <root>\cmd\git.exe or <root>\bin\git.exe; <root>\mingw64\bin\git.exe.
		d := winDir(winDir(git))
		candidates = append(candidates, winJoin(d, `bin\bash.exe`), winJoin(winDir(d), `bin\bash.exe`))
	}
	for _, v := range []string{"ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"} {
		if d := e.getenv(v); d != "" {
			candidates = append(candidates, winJoin(d, `Git\bin\bash.exe`))
		}
	}
	if d := e.getenv("LOCALAPPDATA"); d != "" {
		candidates = append(candidates, winJoin(d, `Programs\Git\bin\bash.exe`))
	}
	for _, c := range candidates {
		if e.isFile(c) {
			return shell{path: c, name: "Git Bash"}
		}
	}
	if p, err := e.lookPath("pwsh"); err == nil {
		return shell{path: p, name: "PowerShell 7 (pwsh)", powershell: true}
	}
	if p, err := e.lookPath("powershell"); err == nil {
		return shell{path: p, name: "Windows PowerShell", powershell: true}
	}
	root := e.getenv("SystemRoot")
	if root == "" {
		root = `C:\Windows`
	}
	return shell{path: winJoin(root, `System32\WindowsPowerShell\v1.0\powershell.exe`), name: "Windows PowerShell", powershell: true}
}

// winDir and winJoin are filepath.Dir and filepath.Join for Windows paths,
// usable on any OS.
func winDir(p string) string {
	p = strings.TrimRight(p, `\/`)
	if i := strings.LastIndexAny(p, `\/`); i >= 0 {
		return p[:i]
	}
	return p
}

func winJoin(dir, rel string) string {
	return strings.TrimRight(dir, `\/`) + `\` + rel
}

// description is the bash tool's description for this shell: the model is
// told which shell, and so which syntax, it has.
func (s shell) description() string {
	if s.powershell {
		return "Run a PowerShell command (" + s.name + ") in the workspace root and return its output (stdout and stderr merged)." + `

- This machine runs Windows and has no bash: write PowerShell (Get-ChildItem, Select-String, $env:NAME, ; between statements; && and || work in PowerShell 7 only). Programs on PATH (git, go, npm) run as usual.
- Each call starts a fresh PowerShell: Set-Location, variables and functions do not carry over. Put commands that depend on each other in one call.
- The command reads files from disk. Your write and edit changes are on disk before it runs; changes the user typed in their editor and has not saved are not written (they stay unsaved in the editor), so for those files the command sees the saved text plus your changes while read shows the editor's text. If your edits to a file overlap the user's unsaved changes, that file stays as saved, without your edits, and the result says so.
- timeout is in seconds (default 120). On timeout or cancellation the command and every process it started are killed.
- Output streams while the command runs. The result keeps the last 2000 lines or 50 KB, whichever is smaller; when output is cut, the note at the end gives the path of a file holding all of it (read it with read, or search it with grep).
- A non-zero exit status makes the result an error that states the exit code.
- stdin is empty: interactive commands (editors, pagers, prompts, Read-Host) will not work; pass flags such as --yes or --no-pager. Pagers are disabled via PAGER=cat.
- Processes started in the background (Start-Process, Start-Job) are not waited for; redirect their output to a file or it is lost. They are killed, with everything they started, when your turn ends (when you answer the user), so they do not outlive the task.
- Prefer the read, edit, write, grep, find and ls tools over Get-Content, Set-Content, Select-String, Get-ChildItem.`
	}
	how, where := s.name+" -c", ""
	if s.name == "Git Bash" {
		how = "Git Bash (bash -c)"
		where = "\n- This machine runs Windows; the shell is Git for Windows' bash with its Unix tools (ls, grep, sed, find). Write Windows paths as C:/Users/… or /c/Users/…; Windows programs on PATH (git, go, npm) run as usual."
	}
	return "Run a shell command with " + how + " in the workspace root and return its output (stdout and stderr merged)." + where + `

- Each call starts a fresh shell: cd, variables and functions do not carry over. Chain commands with && or ; in one call when they depend on each other.
- The command reads files from disk. Your write and edit changes are on disk before it runs; changes the user typed in their editor and has not saved are not written (they stay unsaved in the editor), so for those files the command sees the saved text plus your changes while read shows the editor's text. If your edits to a file overlap the user's unsaved changes, that file stays as saved, without your edits, and the result says so.
- timeout is in seconds (default 120). On timeout or cancellation the command and every process it started ` + s.groupWord() + ` are killed.
- Output streams while the command runs. The result keeps the last 2000 lines or 50 KB, whichever is smaller; when output is cut, the note at the end gives the path of a file holding all of it (read it with read, or search it with grep).
- A non-zero exit status makes the result an error that states the exit code.
- stdin is empty: interactive commands (editors, pagers, prompts) will not work; pass flags such as --yes or --no-pager. Pagers are disabled via PAGER=cat.
- Background jobs (cmd &) are not waited for; redirect their output to a file (cmd > /tmp/log 2>&1 &) or it is lost. They are killed, with everything they started, when your turn ends (when you answer the user), so they do not outlive the task.
- Prefer the read, edit, write, grep, find and ls tools over cat, sed, echo >, grep, find and ls.`
}

// groupWord says how the command's processes are held together.
func (s shell) groupWord() string {
	if s.name == "Git Bash" {
		return "(its job object)"
	}
	return "in its process group"
}

// schema is the bash tool's input schema for this shell.
func (s shell) schema() []byte {
	how := "bash -c"
	switch {
	case s.powershell:
		how = "PowerShell"
	case s.name == "sh":
		how = "sh -c"
	}
	return []byte(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command to run with ` + how + `"},
    "timeout": {"type": "integer", "minimum": 1, "description": "Timeout in seconds (default 120)"}
  },
  "required": ["command"]
}`)
}

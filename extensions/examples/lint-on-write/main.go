// Command lint-on-write checks every file the agent writes or edits and
// appends what the checker found to the tool's result, so the model sees
// (and fixes) a syntax error or a formatting problem right away. It is a
// tool_result hook: the result stays a success; only findings are added.
//
// Checkers by file extension (the first word must be on PATH, else the
// file is skipped): .go gofmt -l -e, .py python3 -m py_compile, .sh bash
// -n, .json python3 -m json.tool. LINT_ON_WRITE_CMD overrides them all:
// a command line in which {file} is replaced by the file's path.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/zot-editors/zot/extensions/sdk"
)

var checkers = map[string][]string{
	".go":   {"gofmt", "-l", "-e", "{file}"},
	".py":   {"python3", "-m", "py_compile", "{file}"},
	".sh":   {"bash", "-n", "{file}"},
	".json": {"python3", "-m", "json.tool", "{file}"},
}

// maxFindings bounds what is appended to a result.
const maxFindings = 8 << 10

func main() {
	e := sdk.New("lint-on-write", "1.0.0")
	e.OnToolResult(func(tool string, args json.RawMessage, r sdk.ToolResult) *sdk.ToolResult {
		if (tool != "write" && tool != "edit") || r.IsError {
			return nil
		}
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(args, &a) != nil || a.Path == "" {
			return nil
		}
		findings := check(resolve(e.Hello().Cwd, a.Path))
		if findings == "" {
			return nil
		}
		r.Content = append(r.Content, sdk.TextBlock("\n\nlint-on-write found problems in "+a.Path+":\n"+findings))
		return &r
	})
	if err := e.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "lint-on-write:", err)
		os.Exit(1)
	}
}

func resolve(cwd, p string) string {
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(h, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return p
}

// check runs the file's checker and returns its findings ("" when clean).
func check(path string) string {
	argv := checkers[strings.ToLower(filepath.Ext(path))]
	if cmd := os.Getenv("LINT_ON_WRITE_CMD"); cmd != "" {
		argv = strings.Fields(cmd)
	}
	if len(argv) == 0 {
		return ""
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return ""
	}
	args := make([]string, len(argv)-1)
	for i, a := range argv[1:] {
		args[i] = strings.ReplaceAll(a, "{file}", path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.Dir = filepath.Dir(path)
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if ctx.Err() != nil {
		return fmt.Sprintf("%s did not finish within 20s", argv[0])
	}
	// gofmt -l prints the file's name when it is not formatted.
	if argv[0] == "gofmt" && err == nil && text != "" {
		text = "not gofmt-formatted (run gofmt -w " + filepath.Base(path) + ")"
	}
	if argv[0] == "python3" && len(args) > 1 && args[1] == "json.tool" && err == nil {
		return "" // json.tool prints the document when it is valid
	}
	if err == nil && text == "" {
		return ""
	}
	if text == "" {
		text = err.Error()
	}
	if len(text) > maxFindings {
		text = text[:maxFindings] + "\n… (cut)"
	}
	return strings.ReplaceAll(text, path, filepath.Base(path))
}

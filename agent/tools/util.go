package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Output limits shared by the tools. Whatever is hit first wins.
const (
	// MaxOutputLines is the most lines a tool result carries.
	MaxOutputLines = 2000
	// MaxOutputBytes is the most bytes a tool result carries (50 KB).
	MaxOutputBytes = 50 * 1024
	// MaxLineLength is the most characters of one line read shows.
	MaxLineLength = 2000
	// MaxGrepLineLength is the most characters of one line grep shows.
	MaxGrepLineLength = 500
	// binarySniffLen is how much of a file the binary check looks at.
	binarySniffLen = 8 * 1024
)

// ResolvePath turns a path the model gave into an absolute, cleaned path:
// `~` and `~/…` expand to the home directory, relative paths resolve
// against ws.Root().
func ResolvePath(ws Workspace, p string) string {
	p = strings.TrimSpace(p)
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if p == "" {
		p = "."
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws.Root(), p)
	}
	return filepath.Clean(p)
}

// displayPath shows p relative to root when it lies inside root, else as is.
func displayPath(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return filepath.ToSlash(rel)
	}
	return p
}

// isBinary reports whether data looks binary: a NUL byte or invalid UTF-8
// in its first 8 KB (a rune cut by the 8 KB boundary does not count).
func isBinary(data []byte) bool {
	if len(data) > binarySniffLen {
		data = data[:binarySniffLen]
		// Drop a trailing rune the cut may have split.
		for i := 1; i <= utf8.UTFMax && i <= len(data); i++ {
			if utf8.RuneStart(data[len(data)-i]) {
				if !utf8.FullRune(data[len(data)-i:]) {
					data = data[:len(data)-i]
				}
				break
			}
		}
	}
	// IndexByte is vectorised; a loop over the bytes took 45% of grep's
	// CPU over many small files.
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

// cutLine shortens s to max characters, adding a marker that says so.
func cutLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + fmt.Sprintf("… [line truncated: %d chars]", utf8.RuneCountInString(s))
		}
		n++
	}
	return s
}

// formatSize renders a byte count for people and models.
func formatSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

// plural renders "1 line", "2 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, word[:len(word)-1])
	}
	if strings.HasSuffix(word, "h") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// countLines counts the lines of text (a final line without a newline
// counts; an empty text has none).
func countLines(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	n := strings.Count(string(data), "\n")
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// decodeArgs unmarshals a tool's JSON arguments into v and, on failure,
// returns an error result that shows the model the expected shape.
func decodeArgs(tool string, raw json.RawMessage, v any, schema json.RawMessage) (Result, bool) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return ErrorResult(fmt.Sprintf("Invalid arguments for %s: %v. The arguments must match this JSON schema: %s", tool, err, schema)), false
	}
	return Result{}, true
}

// flexInt is an integer argument that also accepts a numeric string
// ("10") or a whole float (10.0), as models sometimes send those.
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" || s == `""` {
		return nil
	}
	s = strings.Trim(s, `"`)
	if n, err := strconv.Atoi(s); err == nil {
		*f = flexInt(n)
		return nil
	}
	if x, err := strconv.ParseFloat(s, 64); err == nil && x == float64(int(x)) {
		*f = flexInt(int(x))
		return nil
	}
	return fmt.Errorf("expected an integer, got %s", b)
}

// flexBool is a boolean argument that also accepts "true"/"false".
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	switch s {
	case "null", "":
		return nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("expected true or false, got %s", b)
	}
	*f = flexBool(v)
	return nil
}

// toolInfo is the shared implementation of the Tool metadata methods.
type toolInfo struct {
	name        string
	description string
	schema      json.RawMessage
	args        reflect.Type // the struct the arguments decode into
}

// declare names a tool, its description, its JSON schema and the struct
// A its arguments decode into. The schema is written by hand for the
// model's sake (descriptions, minimums); a test checks it against A, so
// the two cannot drift: every property is a field of the same JSON type,
// and every field is a property unless its `lenient` tag says why not.
func declare[A any](name, description string, schema json.RawMessage) toolInfo {
	return toolInfo{name, description, schema, reflect.TypeFor[A]()}
}

func (t toolInfo) Name() string            { return t.name }
func (t toolInfo) Description() string     { return t.description }
func (t toolInfo) Schema() json.RawMessage { return t.schema }
func (t toolInfo) declared() toolInfo      { return t }

package tools

import (
	"fmt"
	"strings"
)

// Core are zot's own tool names: a built-in of these names wins over an
// extension tool of the same name, as zot documents. The other built-ins
// (Replaceable: ls, grep, find) are ours: a zot extension that registers
// one of those names expects its own tool to run, so it wins.
var (
	Core        = []string{"read", "write", "edit", "bash", "skill"}
	Replaceable = []string{"ls", "grep", "find"}
)

// IsCore reports whether name is one of zot's own tool names.
func IsCore(name string) bool {
	for _, n := range Core {
		if n == name {
			return true
		}
	}
	return false
}

// Builtins returns the built-in tools over ws, in the order they are
// offered to the model: read, write, edit, bash, ls, grep, find.
func Builtins(ws Workspace) []Tool {
	return []Tool{
		NewRead(ws),
		NewWrite(ws),
		NewEdit(ws),
		NewBash(ws),
		NewLs(ws),
		NewGrep(ws),
		NewFind(ws),
	}
}

// Select picks tools by name, in the order of names (as in --tools
// read,bash); blanks and repeats are ignored. An unknown name is an error
// that lists the valid ones.
func Select(all []Tool, names []string) ([]Tool, error) {
	byName := make(map[string]Tool, len(all))
	valid := make([]string, 0, len(all))
	for _, t := range all {
		if _, dup := byName[t.Name()]; !dup {
			valid = append(valid, t.Name())
		}
		byName[t.Name()] = t
	}
	var out []Tool
	seen := make(map[string]bool)
	var unknown []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		t, ok := byName[n]
		if !ok {
			unknown = append(unknown, fmt.Sprintf("%q", n))
			continue
		}
		out = append(out, t)
	}
	if len(unknown) > 0 {
		word := "tool"
		if len(unknown) > 1 {
			word = "tools"
		}
		return nil, fmt.Errorf("unknown %s %s; valid tools are: %s", word, strings.Join(unknown, ", "), strings.Join(valid, ", "))
	}
	return out, nil
}

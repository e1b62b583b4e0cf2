package main

import (
	"path"
	"strings"
)

// Danger patterns, quoted in the refusal.
const (
	patternRmRf = "rm -rf"
	patternSudo = "sudo"
)

// danger reports whether a bash command matches a danger pattern: it
// contains "rm -rf" literally, runs rm with both a recursive and a force
// flag (rm -fr, rm -r -f, rm -Rf, rm --recursive --force, xargs rm -rf
// ...), or runs sudo as a command (sudo ls, echo x | sudo tee f,
// env X=1 sudo ...). "echo sudo" or "grep -r rm ." pass.
func danger(command string) (pattern string, blocked bool) {
	if strings.Contains(command, patternRmRf) {
		return patternRmRf, true
	}
	for _, words := range simpleCommands(command) {
		if len(words) > 0 && commandWord(words) == patternSudo {
			return patternSudo, true
		}
		for i, w := range words {
			if path.Base(w) == "rm" && recursiveForce(words[i+1:]) {
				return patternRmRf, true
			}
		}
	}
	return "", false
}

// simpleCommands splits a command line at shell separators into the
// words of each simple command. Quoting is ignored: a guard errs on the
// side of looking at more words, not fewer.
func simpleCommands(command string) [][]string {
	split := strings.FieldsFunc(command, func(r rune) bool {
		switch r {
		case ';', '&', '|', '(', ')', '`', '\n', '{', '}', '!':
			return true
		}
		return false
	})
	var out [][]string
	for _, s := range split {
		s = strings.ReplaceAll(s, "$", " ")
		words := strings.Fields(s)
		for i, w := range words {
			words[i] = strings.Trim(w, `"'`)
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// commandWord is the program a simple command runs, looking past
// variable assignments and wrappers such as env, nohup, time or xargs.
func commandWord(words []string) string {
	wrappers := map[string]bool{"env": true, "nohup": true, "time": true, "exec": true,
		"command": true, "nice": true, "xargs": true, "builtin": true, "then": true, "do": true, "else": true}
	for _, w := range words {
		base := path.Base(w)
		switch {
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
			continue // X=1
		case wrappers[base], strings.HasPrefix(w, "-"):
			continue
		}
		return base
	}
	return ""
}

// recursiveForce reports whether rm's arguments include both a recursive
// and a force flag.
func recursiveForce(args []string) bool {
	var r, f bool
	for _, a := range args {
		switch {
		case a == "--":
			return r && f
		case a == "--recursive":
			r = true
		case a == "--force":
			f = true
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-"):
			r = r || strings.ContainsAny(a, "rR")
			f = f || strings.Contains(a, "f")
		}
	}
	return r && f
}

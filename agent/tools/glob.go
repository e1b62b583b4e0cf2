package tools

import (
	"fmt"
	"path"
	"strings"
)

// glob is a compiled slash-separated glob pattern. Within a segment `*`,
// `?`, `[a-z]`, `[!a-z]` and `\x` work as in path.Match; a `**` segment
// matches any number of directories (zero or more, or one or more when it
// ends the pattern: "dir/**" is everything inside dir, not dir itself).
type glob struct {
	segs []string
}

// compileGlob compiles one glob (no brace expansion).
func compileGlob(p string) (glob, error) {
	var g glob
	for s := range strings.SplitSeq(p, "/") {
		if s == "" {
			continue
		}
		if s != "**" {
			// Git and most shells spell a negated class [!…]; Go spells it [^…].
			s = strings.ReplaceAll(s, "[!", "[^")
			if _, err := path.Match(s, ""); err != nil {
				return glob{}, fmt.Errorf("bad glob %q: %v", p, err)
			}
		}
		// Consecutive ** are one **.
		if s == "**" && len(g.segs) > 0 && g.segs[len(g.segs)-1] == "**" {
			continue
		}
		g.segs = append(g.segs, s)
	}
	return g, nil
}

// match reports whether the slash-separated relative path matches.
func (g glob) match(rel string) bool {
	// "**/name" (any pattern without a slash) looks at the base name only:
	// the common case, without splitting the path.
	if len(g.segs) == 2 && g.segs[0] == "**" && g.segs[1] != "**" {
		return matchSeg(g.segs[1], rel[strings.LastIndexByte(rel, '/')+1:])
	}
	return matchSegs(g.segs, strings.Split(rel, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return len(name) > 0
			}
			for i := 0; i <= len(name); i++ {
				if matchSegs(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 || !matchSeg(pat[0], name[0]) {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func matchSeg(pat, name string) bool {
	if !strings.ContainsAny(pat, `*?[\`) {
		return pat == name
	}
	ok, _ := path.Match(pat, name)
	return ok
}

// globSet is a set of globs from one user pattern after brace expansion
// ("*.{ts,tsx}" is two globs). A pattern without a slash matches base
// names at any depth, as in `find -name`.
type globSet []glob

func compileGlobSet(p string) (globSet, error) {
	p = strings.TrimSpace(p)
	p = strings.TrimPrefix(p, "./")
	var set globSet
	for _, alt := range expandBraces(p) {
		if !strings.Contains(strings.TrimSuffix(alt, "/"), "/") {
			alt = "**/" + alt
		}
		g, err := compileGlob(alt)
		if err != nil {
			return nil, err
		}
		if len(g.segs) == 0 {
			return nil, fmt.Errorf("empty glob %q", p)
		}
		set = append(set, g)
	}
	return set, nil
}

func (s globSet) match(rel string) bool {
	for _, g := range s {
		if g.match(rel) {
			return true
		}
	}
	return false
}

// expandBraces expands shell-style alternatives: "a{b,c}d" → abd, acd.
// Nested braces work; an unbalanced brace is kept literally.
func expandBraces(p string) []string {
	depth, open := 0, -1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			// Split p[open+1:i] on top-level commas.
			var alts []string
			d, start := 0, open+1
			for j := open + 1; j < i; j++ {
				switch p[j] {
				case '\\':
					j++
				case '{':
					d++
				case '}':
					d--
				case ',':
					if d == 0 {
						alts = append(alts, p[start:j])
						start = j + 1
					}
				}
			}
			alts = append(alts, p[start:i])
			if len(alts) == 1 {
				// "{x}" is not an alternative; keep it literal and go on.
				continue
			}
			var out []string
			for _, a := range alts {
				out = append(out, expandBraces(p[:open]+a+p[i+1:])...)
			}
			return out
		}
	}
	return []string{p}
}

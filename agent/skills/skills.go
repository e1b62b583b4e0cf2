// Package skills finds SKILL.md files: task instructions with a YAML
// frontmatter (name, description, optional allowed-tools and
// permissions) and a markdown body, in the layout zot, Claude Code and
// other agents share, so skills written for one work unchanged.
package skills

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// FileName is a skill's file inside its directory.
const FileName = "SKILL.md"

// Skill is one discovered skill.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// AllowedTools and Permissions are read and shown as the skill
	// declares them; zot's permission modes still decide what runs.
	AllowedTools []string `json:"allowedTools,omitempty"`
	Permissions  any      `json:"permissions,omitempty"`
	Body         string   `json:"body"`   // the markdown after the frontmatter
	Path         string   `json:"path"`   // the SKILL.md file
	Source       string   `json:"source"` // which root it came from, e.g. ".claude/skills (project)"
}

// Dir is the skill's directory: paths in its body are relative to it.
func (s Skill) Dir() string { return filepath.Dir(s.Path) }

// Root is one directory of skill directories.
type Root struct {
	Dir    string
	Source string
}

// Roots are the places skills are looked for, first name wins:
// <cwd>/.zot/skills, $ZOT_HOME/skills, <cwd>/.claude/skills,
// ~/.claude/skills, <cwd>/.agents/skills, ~/.agents/skills. An empty cwd,
// zotHome or userHome leaves its roots out.
func Roots(cwd, zotHome, userHome string) []Root {
	var out []Root
	add := func(base string, rel, source string) {
		if base != "" {
			out = append(out, Root{Dir: filepath.Join(base, rel), Source: source})
		}
	}
	add(cwd, filepath.Join(".zot", "skills"), ".zot/skills (project)")
	add(zotHome, "skills", "$ZOT_HOME/skills")
	add(cwd, filepath.Join(".claude", "skills"), ".claude/skills (project)")
	add(userHome, filepath.Join(".claude", "skills"), "~/.claude/skills")
	add(cwd, filepath.Join(".agents", "skills"), ".agents/skills (project)")
	add(userHome, filepath.Join(".agents", "skills"), "~/.agents/skills")
	return out
}

// Warning is a SKILL.md that was skipped, and why.
type Warning struct {
	Path string
	Line int
	Msg  string
}

func (w Warning) String() string {
	return fmt.Sprintf("skill %s:%d: %s (skipped)", w.Path, w.Line, w.Msg)
}

// Discover reads <root>/<name>/SKILL.md under each root in order. The
// first skill of a name wins; a file with a broken frontmatter is skipped
// with a warning naming its file and line.
func Discover(roots []Root) ([]Skill, []Warning) {
	return new(Cache).Discover(roots)
}

// Cache keeps the SKILL.md files of the last discovery, parsed, by path,
// size and modification time: a rediscovery (every prompt) stats an
// unchanged skill instead of reading and parsing it again, and a missing
// root costs one failed open. The zero Cache is ready to use.
type Cache struct {
	mu    sync.Mutex
	files map[string]parsedFile
}

type parsedFile struct {
	size  int64
	mtime time.Time
	skill Skill
	warn  *Warning
}

// readFile is os.ReadFile; tests count the reads through it.
var readFile = os.ReadFile

// Discover is the package's Discover, reusing what is unchanged since the
// last call.
func (c *Cache) Discover(roots []Root) ([]Skill, []Warning) {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := c.files
	c.files = map[string]parsedFile{}
	var out []Skill
	var warns []Warning
	taken := map[string]bool{}
	seenDir := map[string]bool{}
	for _, r := range roots {
		// Read first: a root that does not exist (the usual case for
		// most of the six) costs no symlink walk.
		entries, err := os.ReadDir(r.Dir)
		if err != nil {
			continue
		}
		dir := filepath.Clean(r.Dir)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if seenDir[dir] { // cwd is the home directory: the same root twice
			continue
		}
		seenDir[dir] = true
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			path := filepath.Join(r.Dir, e.Name(), FileName)
			pf, ok := c.load(path, last)
			if !ok {
				continue // not a skill directory
			}
			if pf.warn != nil {
				warns = append(warns, *pf.warn)
				continue
			}
			s := pf.skill
			if s.Name == "" {
				s.Name = e.Name()
			}
			if taken[s.Name] {
				continue
			}
			taken[s.Name] = true
			s.Source = r.Source
			out = append(out, s)
		}
	}
	return out, warns
}

// load parses one SKILL.md, or takes it from the last discovery when its
// size and modification time are unchanged.
func (c *Cache) load(path string, last map[string]parsedFile) (parsedFile, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return parsedFile{}, false
	}
	if pf, ok := last[path]; ok && pf.size == fi.Size() && pf.mtime.Equal(fi.ModTime()) {
		c.files[path] = pf
		return pf, true
	}
	data, err := readFile(path)
	if err != nil {
		return parsedFile{}, false
	}
	s, w := Parse(path, data)
	pf := parsedFile{size: fi.Size(), mtime: fi.ModTime(), skill: s, warn: w}
	// Keyed by what the stat saw: a file changed between the stat and
	// the read is parsed again next time.
	c.files[path] = pf
	return pf, true
}

// frontmatter is the YAML head of a SKILL.md.
type frontmatter struct {
	Name         string    `yaml:"name"`
	Description  string    `yaml:"description"`
	AllowedTools yaml.Node `yaml:"allowed-tools"`
	Permissions  yaml.Node `yaml:"permissions"`
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// Parse reads one SKILL.md. The warning, when not nil, says why the file
// is not a skill, with the line of the file at fault.
func Parse(path string, data []byte) (Skill, *Warning) {
	warn := func(line int, format string, a ...any) (Skill, *Warning) {
		return Skill{}, &Warning{Path: path, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return warn(1, "no YAML frontmatter: start the file with a line ---, then name: and description:, then ---")
	}
	rest := text[len("---\n"):]
	end := strings.Index(rest, "\n---")
	var head, body string
	switch {
	case strings.HasPrefix(rest, "---"):
		head, body = "", rest[3:]
	case end >= 0:
		head, body = rest[:end+1], rest[end+len("\n---"):]
	default:
		return warn(1, "the frontmatter is not closed: end it with a line ---")
	}
	// The closing line is exactly ---; the body starts on the next line.
	if nl := strings.IndexByte(body, '\n'); nl >= 0 {
		if strings.TrimSpace(body[:nl]) != "" {
			return warn(2+strings.Count(head, "\n"), "the frontmatter's closing line must be --- alone")
		}
		body = body[nl+1:]
	} else {
		body = ""
	}
	var fm frontmatter
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		line := 2 // the frontmatter's first line
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			line = 1 + n
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = yamlLine.ReplaceAllString(msg, "")
		msg = strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(msg, "unmarshal errors:")), ":")), " ")
		return warn(line, "invalid YAML frontmatter: %s", msg)
	}
	fm.Name = strings.TrimSpace(fm.Name)
	if fm.Name != "" && !validName(fm.Name) {
		return warn(lineOf(head, "name:"), "name %q: use letters, digits, - and _ only", fm.Name)
	}
	if strings.TrimSpace(fm.Description) == "" {
		return warn(2, "no description: add description: saying when to use the skill")
	}
	s := Skill{Name: fm.Name, Description: strings.Join(strings.Fields(fm.Description), " "), Body: strings.TrimLeft(body, "\n"), Path: path}
	tools, err := toolList(&fm.AllowedTools)
	if err != nil {
		return warn(1+fm.AllowedTools.Line, "allowed-tools: %v", err)
	}
	s.AllowedTools = tools
	if fm.Permissions.Kind != 0 {
		var p any
		if err := fm.Permissions.Decode(&p); err == nil {
			s.Permissions = p
		}
	}
	return s, nil
}

// toolList reads allowed-tools as a list or a comma/space separated
// string (Claude Code writes both).
func toolList(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		return strings.FieldsFunc(n.Value, func(r rune) bool { return r == ',' || r == ' ' }), nil
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("each entry must be a tool name")
			}
			out = append(out, c.Value)
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be a list of tool names or a string")
}

func validName(s string) bool {
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// lineOf is the file line of the frontmatter line starting with key.
func lineOf(head, key string) int {
	for i, l := range strings.Split(head, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), key) {
			return i + 2
		}
	}
	return 2
}

// Manifest is the system prompt's list of skills: names and
// descriptions, the bodies on demand through the skill tool.
func Manifest(list []Skill) string {
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Available skills\n\nSkills are instructions for particular tasks. When a task matches a skill's description, call the skill tool with the skill's name before you start, and follow the instructions it returns.\n")
	for _, s := range list {
		fmt.Fprintf(&b, "\n- %s: %s", s.Name, s.Description)
	}
	return b.String()
}

// Prompt is what /skill:<name> args sends: the skill's body, with
// $ARGUMENTS replaced by args, or args appended when the body has no
// $ARGUMENTS.
func Prompt(s Skill, args string) string {
	args = strings.TrimSpace(args)
	body := strings.TrimSpace(s.Body)
	if strings.Contains(body, "$ARGUMENTS") {
		return strings.ReplaceAll(body, "$ARGUMENTS", args)
	}
	if args == "" {
		return body
	}
	return body + "\n\n" + args
}

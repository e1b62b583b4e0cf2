package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
)

const pdfSkill = `---
name: pdf-report
description: Summarise a PDF report. Use whenever the user mentions a PDF.
allowed-tools: Read, Bash(python:*)
---

# PDF reports

1. Run scripts/extract.py on the file.
2. Summarise it in three bullet points, the figures first.
`

// toolNames are the tool names of the i-th model request.
func toolNames(t *testing.T, e *env, i int) []string {
	t.Helper()
	var body struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		System any `json:"system"`
	}
	if err := json.Unmarshal([]byte(requestText(t, e, i)), &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range body.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// A Claude Code–style skill in <cwd>/.claude/skills is offered in the
// system prompt's "Available skills", and the model loads its body through
// the skill tool.
func TestPrintClaudeSkillLoadedThroughSkillTool(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("skill", map[string]any{"name": "pdf-report"}),
		llmtest.TextReply("Here are three bullets."),
	)
	e.write(".claude/skills/pdf/SKILL.md", pdfSkill)
	// A broken one beside it is skipped with a warning naming file and line.
	e.write(".agents/skills/broken/SKILL.md", "---\nname: broken\n---\nno description\n")
	home := t.TempDir() // no skills of the developer's own
	cmd := e.command(e.args("-p", "summarise q3.pdf")...)
	cmd.Env = append(cmd.Env, "HOME="+home)
	out, err := cmd.Output()
	errOut := ""
	if ee, ok := err.(interface{ Stderr() []byte }); ok {
		errOut = string(ee.Stderr())
	}
	if err != nil || !strings.Contains(string(out), "Here are three bullets.") {
		t.Fatalf("err %v out %q stderr %s", err, out, errOut)
	}
	first := requestText(t, e, 0)
	if !strings.Contains(first, "# Available skills") || !strings.Contains(first, "- pdf-report: Summarise a PDF report. Use whenever the user mentions a PDF.") {
		t.Fatalf("the system prompt lacks the skill manifest: %s", first)
	}
	if strings.Contains(first, "Run scripts/extract.py") {
		t.Fatal("the body is in the system prompt; it must come through the skill tool")
	}
	if names := strings.Join(toolNames(t, e, 0), ","); !strings.HasPrefix(names, "read,write,edit,bash,skill,") {
		t.Fatalf("tools: %s", names)
	}
	second := requestText(t, e, 1)
	skillPath := filepath.Join(e.cwd, ".claude", "skills", "pdf", "SKILL.md")
	for _, want := range []string{"Run scripts/extract.py on the file.", "Base directory: " + filepath.Dir(skillPath), "Allowed tools: Read, Bash(python:*)"} {
		if !strings.Contains(second, jsonEscape(want)) {
			t.Fatalf("the skill tool's result lacks %q: %s", want, second)
		}
	}
	if strings.Contains(first, "broken") {
		t.Fatal("the broken skill was offered")
	}
}

// The warning for a broken SKILL.md names the file and line; --no-skill
// turns skills off: no manifest, no skill tool, no warning.
func TestSkillWarningAndNoSkill(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("one"), llmtest.TextReply("two"))
	e.write(".zot/skills/good/SKILL.md", "---\nname: good\ndescription: a good skill\n---\nbody\n")
	e.write(".zot/skills/broken/SKILL.md", "---\nname: broken\ndescription: ok\nallowed-tools: \"unclosed\n---\n")
	_, errOut, code := e.runZot(e.args("-p", "hi")...)
	broken := filepath.Join(e.cwd, ".zot", "skills", "broken", "SKILL.md")
	if code != 0 || !strings.Contains(errOut, "zot: skill "+broken+":4: invalid YAML frontmatter") {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	if !strings.Contains(requestText(t, e, 0), "- good: a good skill") {
		t.Fatal("the good skill is not offered")
	}
	_, errOut, code = e.runZot(e.args("-p", "hi", "--no-skill")...)
	if code != 0 || strings.Contains(errOut, "skill") {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	if body := requestText(t, e, 1); strings.Contains(body, "Available skills") || strings.Contains(body, `"name":"skill"`) {
		t.Fatalf("--no-skill still offers skills: %s", body)
	}
}

// Over RPC: /skills lists them, /skill:<name> args sends the body as the
// prompt.
func TestRPCSkillCommands(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("reviewed"))
	e.write(".claude/skills/review/SKILL.md", "---\nname: review\ndescription: Review code for bugs\n---\nReview $ARGUMENTS for bugs; list them by severity.\n")
	p := e.startRPC([]string{"HOME=" + t.TempDir()})
	p.send(map[string]any{"id": "l", "type": "command", "name": "skills"})
	r := p.response("l")
	if d, _ := r["data"].(map[string]any)["display"].(string); !strings.Contains(d, "review — Review code for bugs  [.claude/skills (project)]") {
		t.Fatalf("/skills: %v", r)
	}
	p.send(map[string]any{"id": "s", "type": "command", "name": "skill:review", "args": "main.go"})
	frames := p.until(isType("done"))
	if d, _ := frames[0]["data"].(map[string]any); frames[0]["id"] != "s" || d["action"] != "prompt" || d["started"] != true {
		t.Fatalf("/skill:review: %v", frames[0])
	}
	if um := toJSON(find(frames, "user_message")); !strings.Contains(um, "Review main.go for bugs; list them by severity.") {
		t.Fatalf("prompt sent: %s", um)
	}
	p.send(map[string]any{"id": "x", "type": "command", "name": "skill:nope"})
	if r := p.response("x"); r["success"] != false || !strings.Contains(r["error"].(string), `no skill named "nope"`) {
		t.Fatalf("unknown skill: %v", r)
	}
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

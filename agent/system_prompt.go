package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/zot-editors/zot/agent/skills"
	"github.com/zot-editors/zot/agent/tools"
)

const basePrompt = `You are zot, a coding agent working in the user's project. You read, search and change files and run commands with the tools you are given.
- Read before you edit; make the smallest change that does the job; keep the project's style.
- Use edit for changes to existing files and write only for new files or full rewrites.
- Run tests or builds with bash when they exist, and report honestly what passed and what did not.
- Be brief: say what you did and what is left, not what you are about to do.`

// contextFiles are project instructions read into the system prompt.
var contextFiles = []string{"AGENTS.md", "CLAUDE.md"}

func (r *Runtime) systemPrompt(toolset []tools.Tool) string {
	manifest := ""
	for _, t := range toolset {
		if t.Name() == "skill" {
			manifest = skills.Manifest(r.Skills())
		}
	}
	if r.cfg.SystemPrompt != "" {
		out := r.cfg.SystemPrompt
		if manifest != "" {
			out += "\n\n" + manifest
		}
		if r.cfg.AppendSystemPrompt != "" {
			out += "\n\n" + r.cfg.AppendSystemPrompt
		}
		return out
	}
	var b strings.Builder
	b.WriteString(basePrompt)
	if len(toolset) > 0 {
		b.WriteString("\n\nTools: ")
		b.WriteString(names(toolset))
	}
	b.WriteString("\n\nWorking directory: ")
	b.WriteString(r.cfg.CWD)
	b.WriteString("\nPlatform: " + runtime.GOOS)
	b.WriteString("\nDate: " + time.Now().Format("2006-01-02"))
	for _, name := range contextFiles {
		data, err := os.ReadFile(filepath.Join(r.cfg.CWD, name))
		if err == nil && len(data) > 0 {
			b.WriteString("\n\n# Project instructions (" + name + ")\n\n")
			b.Write(data)
		}
	}
	if manifest != "" {
		b.WriteString("\n\n")
		b.WriteString(manifest)
	}
	if r.cfg.AppendSystemPrompt != "" {
		b.WriteString("\n\n")
		b.WriteString(r.cfg.AppendSystemPrompt)
	}
	return b.String()
}

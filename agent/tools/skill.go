package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zot-editors/zot/agent/skills"
)

const skillDescription = `Load a skill: the full instructions of one of the skills listed under "Available skills" in the system prompt.

- Call it with the skill's name before starting a task the skill's description covers, then follow the instructions it returns.
- Paths in a skill are relative to its directory, which the result names.`

var skillSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "The skill's name, as listed under Available skills"}
  },
  "required": ["name"]
}`)

type skillTool struct {
	toolInfo
	list func() []skills.Skill
}

// NewSkill returns the skill tool; list gives the skills of this run.
func NewSkill(list func() []skills.Skill) Tool {
	return &skillTool{declare[skillArgs]("skill", skillDescription, skillSchema), list}
}

type skillArgs struct {
	Name string `json:"name"`
}

func (t *skillTool) Run(ctx context.Context, call Call) Result {
	var a skillArgs
	if r, ok := decodeArgs(t.name, call.Args, &a, t.schema); !ok {
		return r
	}
	name := strings.TrimSpace(a.Name)
	all := t.list()
	var names []string
	for _, s := range all {
		if s.Name == name {
			var b strings.Builder
			fmt.Fprintf(&b, "Skill %q (%s)\nBase directory: %s\n", s.Name, s.Path, s.Dir())
			if len(s.AllowedTools) > 0 {
				fmt.Fprintf(&b, "Allowed tools: %s\n", strings.Join(s.AllowedTools, ", "))
			}
			b.WriteString("\n")
			b.WriteString(s.Body)
			return TextResult(b.String())
		}
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return ErrorResult(fmt.Sprintf("no skill named %q: there are no skills", name))
	}
	return ErrorResult(fmt.Sprintf("no skill named %q; the skills are: %s", name, strings.Join(names, ", ")))
}

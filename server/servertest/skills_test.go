package servertest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// zot/skills lists the skills with their bodies (editors preview them),
// zot/commands offers each as skill:<name>, and /skill:<name> args runs
// the body as the prompt.
func TestSkillsOverLSP(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("reviewed"))
	dir := filepath.Join(e.root, ".claude", "skills", "review")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: review\ndescription: Review code for bugs\n---\nReview $ARGUMENTS for bugs.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ed := e.start(func(c *servertest.Config) { c.Env = append(c.Env, "HOME="+t.TempDir()) })
	var sk struct {
		Skills []map[string]any `json:"skills"`
	}
	ed.MustCall("zot/skills", nil, &sk)
	if len(sk.Skills) != 1 || sk.Skills[0]["name"] != "review" || sk.Skills[0]["body"] != "Review $ARGUMENTS for bugs.\n" ||
		sk.Skills[0]["source"] != ".claude/skills (project)" || sk.Skills[0]["path"] != filepath.Join(dir, "SKILL.md") {
		t.Fatalf("zot/skills: %v", sk)
	}
	var cmds struct {
		Commands []map[string]any `json:"commands"`
	}
	ed.MustCall("zot/commands", nil, &cmds)
	found := false
	for _, c := range cmds.Commands {
		if c["name"] == "skill:review" && c["source"] == "skill" && c["description"] == "Review code for bugs" {
			found = true
		}
	}
	if !found {
		t.Fatalf("zot/commands lacks skill:review: %v", cmds)
	}
	var res map[string]any
	ed.MustCall("zot/command", map[string]any{"name": "/skill:review", "args": "main.go"}, &res)
	if res["action"] != "prompt" || res["prompt"] != "Review main.go for bugs." || res["runId"] == nil {
		t.Fatalf("/skill:review: %v", res)
	}
	evs := ed.WaitDone(res["runId"].(string))
	if um := servertest.Find(evs, "user_message"); !strings.Contains(servertest.ResultText(um), "Review main.go for bugs.") {
		t.Fatalf("user_message: %v", um)
	}
	ed.MustCall("zot/command", map[string]any{"name": "skills"}, &res)
	if d, _ := res["display"].(string); !strings.Contains(d, "review — Review code for bugs") {
		t.Fatalf("/skills: %v", res)
	}
}

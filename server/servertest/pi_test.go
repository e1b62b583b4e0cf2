package servertest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/testenv"
	"github.com/zot-editors/zot/server/servertest"
)

// piPaths are the source tree's pi runtime and example re-writes; the
// test skips (testenv) without node or the runtime's node_modules.
func piPaths(t *testing.T) (runtimeDir, examples string) {
	t.Helper()
	testenv.NeedCommand(t, "node", "pi extensions")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	runtimeDir = filepath.Join(root, "extensions", "pi", "runtime")
	if _, err := os.Stat(filepath.Join(runtimeDir, "node_modules", "sucrase")); err != nil {
		testenv.Skip(t, "the pi runtime's node_modules are not installed (make pi-runtime)")
	}
	return runtimeDir, filepath.Join(root, "extensions", "testdata", "piext", "examples")
}

// pi extensions under zot lsp, named by the editor
// (initializationOptions.ext): permission-gate's dialog reaches the editor
// as zot/ui/request with the extension's text, and the editor's No blocks
// the command; plan-mode (on by --flag plan) shows its status and, after
// the model's plan, its widget.
func TestLSPPiExtensions(t *testing.T) {
	rt, examples := piPaths(t)
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}),
		llmtest.TextReply("Plan:\n1. look around\n2. fix it"),
	)
	os.MkdirAll(filepath.Join(e.root, "keep"), 0o755)
	cfg := e.config("--flag", "plan")
	cfg.Env = append(cfg.Env, extensions.EnvPiRuntime+"="+rt)
	cfg.ZotUI = true
	cfg.InitOptions = map[string]any{"ext": []string{filepath.Join(examples, "permission-gate.ts"), filepath.Join(examples, "plan-mode.ts")}}
	ed := servertest.Start(t, cfg)
	var asked []map[string]any
	ed.UI = func(p map[string]any) map[string]any {
		asked = append(asked, p)
		return map[string]any{"value": "No"}
	}
	ed.Initialize(nil)
	waitExt(ed, "permission-gate", "loaded")
	waitExt(ed, "plan-mode", "loaded")
	last := func(method string, match func(map[string]any) bool) func() bool {
		return func() bool {
			for _, n := range ed.Notes(method) {
				var p map[string]any
				json.Unmarshal(n.Params, &p)
				if match(p) {
					return true
				}
			}
			return false
		}
	}
	ed.Wait("plan-mode's status", last("zot/ui/status", func(p map[string]any) bool {
		return p["extension"] == "plan-mode" && p["key"] == "plan-mode" && p["text"] == "⏸ plan"
	}))
	// Guards run in load order: the gate (named first) asks, and its No
	// blocks before plan mode's own rule is consulted.
	evs := ed.WaitDone(ed.Prompt("clean up").RunID)
	var res servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			res = ev
		}
	}
	if res == nil || res["is_error"] != true || !strings.Contains(servertest.ResultText(res), "Blocked by user") {
		t.Fatalf("the gate's No: %v", res)
	}
	if _, err := os.Stat(filepath.Join(e.root, "keep")); err != nil {
		t.Fatal("the blocked command ran")
	}
	if len(asked) != 1 || asked[0]["extension"] != "permission-gate" || asked[0]["kind"] != "select" || !strings.Contains(jsonString(asked[0]), "Dangerous command:") || !strings.Contains(jsonString(asked[0]), "rm -rf keep") {
		t.Fatalf("zot/ui/request: %v", asked)
	}
	ed.Wait("plan-mode's widget", last("zot/ui/widget", func(p map[string]any) bool {
		return p["extension"] == "plan-mode" && jsonString(p["lines"]) == `["☐ 1. look around","☐ 2. fix it"]`
	}))
}

// ctx.ui.custom from a pi command is a panel in the editor: the command
// answers open_panel with the component's lines, the editor's keys reach
// its handleInput and its re-renders are zot/panel/render, and done()
// closes the panel and resolves the extension's await with the value.
func TestLSPPiCustomPanel(t *testing.T) {
	rt, _ := piPaths(t)
	e := newEnv(t)
	ext := filepath.Join(t.TempDir(), "picker.ts")
	os.WriteFile(ext, []byte(`import { matchesKey } from "@mariozechner/pi-tui";
export default function (pi: any) {
	pi.registerCommand("pick", {
		description: "pick one",
		handler: async (_args: string, ctx: any) => {
			await Promise.resolve(); // the panel is the command's after an await too
			const v = await ctx.ui.custom((tui: any, _theme: any, _kb: any, done: (v: string) => void) => {
				const items = ["alpha", "beta"];
				let at = 0;
				return {
					render: () => items.map((x, i) => (i === at ? "> " : "  ") + x),
					handleInput(data: string) {
						if (matchesKey(data, "down")) at = Math.min(at + 1, items.length - 1);
						if (matchesKey(data, "enter")) done(items[at]);
						tui.requestRender();
					},
				};
			});
			ctx.ui.notify("picked: " + v, "info");
		},
	});
}
`), 0o644)
	cfg := e.config("--ext", ext)
	cfg.Env = append(cfg.Env, extensions.EnvPiRuntime+"="+rt)
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	waitExt(ed, "picker", "loaded")
	var r struct {
		Action  string `json:"action"`
		PanelID string `json:"panelId"`
	}
	ed.MustCall("zot/command", map[string]any{"name": "pick"}, &r)
	if r.Action != "open_panel" || r.PanelID == "" {
		t.Fatalf("/pick: %+v", r)
	}
	lines := func(p json.RawMessage) string {
		var v struct {
			Lines []string `json:"lines"`
		}
		json.Unmarshal(p, &v)
		return strings.Join(v.Lines, "|")
	}
	open := ed.WaitNote("zot/panel/open", nil)
	if lines(open.Params) != "> alpha|  beta" {
		t.Fatalf("zot/panel/open: %s", open.Params)
	}
	ed.Notify("zot/panel/key", map[string]any{"panelId": r.PanelID, "key": "down"})
	ed.WaitNote("zot/panel/render", func(p json.RawMessage) bool { return lines(p) == "  alpha|> beta" })
	ed.Notify("zot/panel/key", map[string]any{"panelId": r.PanelID, "key": "enter"})
	ed.WaitNote("zot/panel/close", func(p json.RawMessage) bool { return strings.Contains(string(p), r.PanelID) })
	ed.WaitNote("zot/notify", func(p json.RawMessage) bool { return strings.Contains(string(p), "picked: beta") })
}

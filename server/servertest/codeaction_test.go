package servertest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/uri"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// The standard-LSP tier: an editor that knows nothing of zot (no
// experimental.zot) lists code actions and runs them as commands.

func plainEditor(tweaks ...func(*servertest.Config)) func(*servertest.Config) {
	return func(c *servertest.Config) {
		c.Plain = true
		for _, f := range tweaks {
			f(c)
		}
	}
}

type codeAction struct {
	Title       string            `json:"title"`
	Kind        string            `json:"kind"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
	Command     *struct {
		Title     string            `json:"title"`
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	} `json:"command"`
	Data json.RawMessage `json:"data"`
}

func lspRange(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": map[string]int{"line": l1, "character": c1}, "end": map[string]int{"line": l2, "character": c2}}
}

func listActions(t *testing.T, ed *servertest.Editor, rel string, rng map[string]any, ctx map[string]any) []codeAction {
	t.Helper()
	if ctx == nil {
		ctx = map[string]any{"diagnostics": []any{}}
	}
	var acts []codeAction
	ed.MustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": ed.URI(rel)}, "range": rng, "context": ctx}, &acts)
	return acts
}

func titles(acts []codeAction) []string {
	var out []string
	for _, a := range acts {
		out = append(out, a.Title)
	}
	return out
}

func actionNamed(t *testing.T, acts []codeAction, title string) codeAction {
	t.Helper()
	for _, a := range acts {
		if a.Title == title {
			return a
		}
	}
	t.Fatalf("no action %q among %q", title, titles(acts))
	return codeAction{}
}

// run executes an action's command and returns the run it started.
func runAction(t *testing.T, ed *servertest.Editor, a codeAction) servertest.RunStarted {
	t.Helper()
	if a.Command == nil {
		t.Fatalf("action %q has no command", a.Title)
	}
	var r servertest.RunStarted
	ed.MustCall("workspace/executeCommand", map[string]any{"command": a.Command.Command, "arguments": a.Command.Arguments}, &r)
	if r.RunID == "" {
		t.Fatalf("executeCommand started no run")
	}
	return r
}

func modelPosts(llm *llmtest.Server) int {
	n := 0
	for _, r := range llm.Requests() {
		if r.Method == "POST" {
			n++
		}
	}
	return n
}

// The list comes without a model call: the instruction line, a fix per
// diagnostic, the built-in actions and the project's own, filtered by
// `only`; the initialize result announces the provider and the commands.
func TestCodeActionsListedWithoutTheModel(t *testing.T) {
	e := newEnv(t)
	var init struct {
		Capabilities struct {
			CodeActionProvider struct {
				CodeActionKinds []string `json:"codeActionKinds"`
				ResolveProvider bool     `json:"resolveProvider"`
			} `json:"codeActionProvider"`
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	cfg := e.config()
	cfg.Plain = true
	cfg.Env = append(cfg.Env, "HOME="+t.TempDir()) // no skills of the user's: the list is exact
	cfg.InitOptions = map[string]any{"codeActions": []map[string]string{{"title": "zot: translate comments", "prompt": "Translate the comments of {{selection}} in {{file}}"}}}
	ed := servertest.Start(t, cfg)
	ed.Initialize(&init)
	if c := init.Capabilities; c.CodeActionProvider.ResolveProvider || strings.Join(c.ExecuteCommandProvider.Commands, " ") != "zot.codeAction zot.abort" || len(c.CodeActionProvider.CodeActionKinds) == 0 {
		t.Fatalf("capabilities: %+v", c)
	}
	ed.Open("main.go", "package main\n\n# zot: make it iterative\nfunc f() {}\n")
	diag := map[string]any{"range": lspRange(3, 5, 3, 6), "severity": 1, "source": "compiler", "message": "f is unused\nsecond line"}
	acts := listActions(t, ed, "main.go", lspRange(2, 3, 3, 0), map[string]any{"diagnostics": []any{diag}})
	want := "zot: run this instruction|zot: fix this: f is unused|zot: explain|zot: add tests|zot: document|zot: refactor|zot: translate comments"
	if got := strings.Join(titles(acts), "|"); got != want {
		t.Fatalf("actions:\n got %s\nwant %s", got, want)
	}
	fix := actionNamed(t, acts, "zot: fix this: f is unused")
	if fix.Kind != "quickfix" || len(fix.Diagnostics) != 1 || !strings.Contains(string(fix.Diagnostics[0]), "f is unused") || fix.Command.Command != "zot.codeAction" {
		t.Fatalf("fix action: %+v", fix)
	}
	// Only the quick fixes.
	only := listActions(t, ed, "main.go", lspRange(3, 0, 3, 0), map[string]any{"diagnostics": []any{diag}, "only": []string{"quickfix"}})
	if got := strings.Join(titles(only), "|"); got != "zot: fix this: f is unused" {
		t.Fatalf("only quickfix: %s", got)
	}
	// Asked by the editor on its own (a light bulb), only what is about
	// this place.
	auto := listActions(t, ed, "main.go", lspRange(2, 3, 3, 0), map[string]any{"diagnostics": []any{diag}, "triggerKind": 2})
	if got := strings.Join(titles(auto), "|"); got != "zot: run this instruction|zot: fix this: f is unused" {
		t.Fatalf("automatic trigger: %s", got)
	}
	// Off the instruction line, none is offered.
	if acts := listActions(t, ed, "main.go", lspRange(3, 0, 3, 0), nil); strings.Contains(strings.Join(titles(acts), "|"), "instruction") {
		t.Fatalf("instruction offered off its line: %q", titles(acts))
	}
	if n := modelPosts(e.llm); n != 0 {
		t.Fatalf("listing code actions made %d model requests", n)
	}
	// Bad input: errors that say what to fix.
	if err := ed.Call("textDocument/codeAction", map[string]any{"range": lspRange(0, 0, 0, 0)}, nil); err == nil || !strings.Contains(err.Message, `"textDocument.uri" is required`) {
		t.Fatalf("codeAction without uri: %v", err)
	}
	if err := ed.Call("workspace/executeCommand", map[string]any{"command": "zot.nope"}, nil); err == nil || !strings.Contains(err.Message, "must be zot.codeAction or zot.abort") {
		t.Fatalf("unknown command: %v", err)
	}
	if err := ed.Call("workspace/executeCommand", map[string]any{"command": "zot.codeAction", "arguments": []any{map[string]any{"action": "fix", "uri": ed.URI("main.go")}}}, nil); err == nil || !strings.Contains(err.Message, "arguments[0].diagnostic") {
		t.Fatalf("fix without diagnostic: %v", err)
	}
}

// A project action with a bad entry fails initialize, naming the field.
func TestCodeActionsConfigErrors(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	cfg.InitOptions = map[string]any{"codeActions": []map[string]string{{"title": "x"}}}
	ed := servertest.Start(t, cfg)
	err := ed.Call("initialize", map[string]any{"processId": nil, "rootUri": string(uri.File(e.root)), "capabilities": map[string]any{}, "initializationOptions": cfg.InitOptions}, nil)
	if err == nil || !strings.Contains(err.Message, `"initializationOptions.codeActions[0].prompt" is required`) {
		t.Fatalf("initialize: %v", err)
	}
}

// A fix runs a prompt with the diagnostic; its edit lands in the buffer
// through workspace/applyEdit and stays unsaved (the disk is untouched
// until the editor saves); the short answer is a showMessage.
func TestFixEditsTheBufferNotTheDisk(t *testing.T) {
	e := newEnv(t, editReply("calc.py", "return a - b", "return a + b"), llmtest.TextReply("Fixed the sign."))
	ed := e.start(plainEditor())
	orig := "def add(a, b):\n    return a - b\n"
	ed.WriteFile("calc.py", orig)
	ed.Open("calc.py", orig)
	diag := map[string]any{"range": lspRange(1, 4, 1, 16), "severity": 1, "source": "pytest", "code": "E1", "message": "add(1, 2) returned -1, expected 3"}
	acts := listActions(t, ed, "calc.py", lspRange(1, 4, 1, 4), map[string]any{"diagnostics": []any{diag}})
	run := runAction(t, ed, actionNamed(t, acts, "zot: fix this: add(1, 2) returned -1, expected 3"))
	ed.WaitDone(run.RunID)
	if buf, _ := ed.Buffer("calc.py"); buf != "def add(a, b):\n    return a + b\n" {
		t.Fatalf("buffer = %q", buf)
	}
	if got := ed.ReadFile("calc.py"); got != orig {
		t.Fatalf("the disk changed behind the editor: %q", got)
	}
	if n := len(ed.Requests("workspace/applyEdit")); n != 1 {
		t.Fatalf("%d applyEdit requests", n)
	}
	ed.WaitNote("window/showMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "zot: Fixed the sign.") })
	first := e.llm.Requests()[0]
	body := string(first.Raw)
	for _, want := range []string{"Fix this problem reported by pytest (E1) at line 2: add(1, 2) returned -1, expected 3", "calc.py", "return a - b"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the prompt lacks %q:\n%s", want, body)
		}
	}
}

// The instruction line: its action runs the instruction, and the line
// goes when the edit lands; without an edit the line stays.
func TestInstructionLineRemovedWhenTheEditLands(t *testing.T) {
	e := newEnv(t,
		editReply("main.go", "x := 1", "y := 1"), llmtest.TextReply("Renamed."),
		llmtest.TextReply("Which x do you mean?"))
	ed := e.start(plainEditor())
	text := "package main\n\nfunc f() {\n\t// zot: rename x to y\n\tx := 1\n}\n"
	ed.WriteFile("main.go", text)
	ed.Open("main.go", text)
	acts := listActions(t, ed, "main.go", lspRange(3, 5, 3, 5), nil)
	run := runAction(t, ed, actionNamed(t, acts, "zot: run this instruction"))
	ed.WaitDone(run.RunID)
	if buf, _ := ed.Buffer("main.go"); buf != "package main\n\nfunc f() {\n\ty := 1\n}\n" {
		t.Fatalf("buffer = %q", buf)
	}
	if got := ed.ReadFile("main.go"); got != text {
		t.Fatalf("the disk changed behind the editor: %q", got)
	}
	if body := string(e.llm.Requests()[0].Raw); !strings.Contains(body, "rename x to y") || !strings.Contains(body, "zot removes that line") {
		t.Fatalf("the prompt: %s", body)
	}

	// No edit: the instruction stays for another try.
	text2 := "// zot: rename x\nx = 1\n"
	ed.Open("b.py", text2)
	acts = listActions(t, ed, "b.py", lspRange(0, 0, 0, 0), nil)
	run = runAction(t, ed, actionNamed(t, acts, "zot: run this instruction"))
	ed.WaitDone(run.RunID)
	if buf, _ := ed.Buffer("b.py"); buf != text2 {
		t.Fatalf("buffer without an edit = %q", buf)
	}
	ed.WaitNote("window/showMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "Which x do you mean?") })
}

// A long answer is a markdown transcript under $ZOT_HOME/transcripts,
// opened with window/showDocument; a client without it gets the answer's
// beginning and the path in a showMessage.
func TestLongAnswerTranscript(t *testing.T) {
	long := strings.Repeat("This code adds two numbers. ", 30)
	for _, show := range []bool{true, false} {
		t.Run(map[bool]string{true: "showDocument", false: "showMessage"}[show], func(t *testing.T) {
			e := newEnv(t, llmtest.TextReply(long))
			ed := e.start(plainEditor(func(c *servertest.Config) { c.ShowDocument = show }))
			ed.Open("calc.py", "def add(a, b):\n    return a + b\n")
			acts := listActions(t, ed, "calc.py", lspRange(0, 0, 2, 0), nil)
			ed.WaitDone(runAction(t, ed, actionNamed(t, acts, "zot: explain")).RunID)
			files, _ := filepath.Glob(filepath.Join(e.home, "transcripts", "*.md"))
			if len(files) != 1 {
				t.Fatalf("transcripts: %v", files)
			}
			b, _ := os.ReadFile(files[0])
			if md := string(b); !strings.HasPrefix(md, "# zot: explain\n") || !strings.Contains(md, strings.TrimSpace(long)) || !strings.Contains(md, "> Explain this code") {
				t.Fatalf("transcript:\n%s", md)
			}
			docs := ed.Requests("window/showDocument")
			if show {
				if len(docs) != 1 || !strings.Contains(string(docs[0].Params), string(uri.File(files[0]))) {
					t.Fatalf("showDocument: %v", docs)
				}
				return
			}
			if len(docs) != 0 {
				t.Fatalf("showDocument to a client without it: %v", docs)
			}
			ed.WaitNote("window/showMessage", func(p json.RawMessage) bool {
				return strings.Contains(string(p), "The whole answer: "+jsonEscape(files[0])) && strings.Contains(string(p), "…")
			})
		})
	}
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// A client that resolves the command lazily gets it from
// codeAction/resolve; one that resolves only edits gets it in the list.
func TestCodeActionResolve(t *testing.T) {
	t.Run("command", func(t *testing.T) {
		e := newEnv(t)
		ed := e.start(plainEditor(func(c *servertest.Config) { c.CodeActionResolve = []string{"command"} }))
		ed.Open("a.txt", "hello\n")
		acts := listActions(t, ed, "a.txt", lspRange(0, 0, 0, 0), nil)
		a := actionNamed(t, acts, "zot: explain")
		if a.Command != nil || len(a.Data) == 0 {
			t.Fatalf("lazy action: %+v", a)
		}
		var resolved codeAction
		ed.MustCall("codeAction/resolve", a, &resolved)
		if resolved.Command == nil || resolved.Command.Command != "zot.codeAction" || !strings.Contains(string(resolved.Command.Arguments[0]), `"action":"explain"`) {
			t.Fatalf("resolved: %+v", resolved)
		}
	})
	t.Run("edit", func(t *testing.T) {
		e2 := newEnv(t)
		ed2 := e2.start(plainEditor(func(c *servertest.Config) { c.CodeActionResolve = []string{"edit"} }))
		ed2.Open("a.txt", "hello\n")
		if a := actionNamed(t, listActions(t, ed2, "a.txt", lspRange(0, 0, 0, 0), nil), "zot: explain"); a.Command == nil {
			t.Fatalf("an edit-only resolver got no command: %+v", a)
		}
	})
}

// Cancelling the progress of a code action aborts its run.
func TestCodeActionProgressCancel(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Hang: true})
	ed := e.start(plainEditor())
	ed.Open("a.txt", "hello\n")
	run := runAction(t, ed, actionNamed(t, listActions(t, ed, "a.txt", lspRange(0, 0, 0, 0), nil), "zot: refactor"))
	ed.WaitEvent(run.RunID, "assistant_start")
	begin := ed.WaitNote("$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"begin"`) })
	var p struct {
		Token string `json:"token"`
	}
	json.Unmarshal(begin.Params, &p)
	ed.Notify("window/workDoneProgress/cancel", map[string]any{"token": p.Token})
	if te := servertest.Find(ed.WaitDone(run.RunID), "turn_end"); te["stop"] != "aborted" {
		t.Fatalf("turn_end: %v", te)
	}
	ed.WaitNote("window/showMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "zot: refactor: aborted") })
}

// In ask mode a plain client (no zot/reviewEdit) is asked with
// window/showMessageRequest, naming the file and the size of the change;
// a rejected edit leaves the buffer and the instruction line as they were.
func TestCodeActionAskModeAsksWithTheFile(t *testing.T) {
	for _, choice := range []string{"Apply", "Reject"} {
		t.Run(choice, func(t *testing.T) {
			e := newEnv(t, editReply("calc.py", "return a - b", "return a + b"), llmtest.TextReply("Done."))
			ed := e.start(plainEditor(askMode(false)))
			var asked []string
			ed.Choose = func(msg string, actions []string) string {
				asked = append(asked, msg+" "+strings.Join(actions, "|"))
				return choice
			}
			text := "def add(a, b):\n    # zot: fix the sign\n    return a - b\n"
			ed.Open("calc.py", text)
			acts := listActions(t, ed, "calc.py", lspRange(1, 0, 1, 0), nil)
			ed.WaitDone(runAction(t, ed, actionNamed(t, acts, "zot: run this instruction")).RunID)
			if len(asked) != 1 || asked[0] != "zot wants to change calc.py (+1 −1 lines). Apply the change? Apply|Reject" {
				t.Fatalf("asked: %q", asked)
			}
			want := "def add(a, b):\n    return a + b\n"
			if choice == "Reject" {
				want = text
			}
			if buf, _ := ed.Buffer("calc.py"); buf != want {
				t.Fatalf("buffer = %q", buf)
			}
		})
	}
}

// A second action waits behind the first and says so; zot.abort ends the
// first, and the second runs.
func TestCodeActionQueuedAndAbort(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Hang: true}, llmtest.TextReply("Second."))
	ed := e.start(plainEditor())
	ed.Open("a.txt", "hello\n")
	acts := listActions(t, ed, "a.txt", lspRange(0, 0, 0, 0), nil)
	first := runAction(t, ed, actionNamed(t, acts, "zot: explain"))
	ed.WaitEvent(first.RunID, "assistant_start")
	second := runAction(t, ed, actionNamed(t, acts, "zot: document"))
	if !second.Queued {
		t.Fatalf("second run not queued: %+v", second)
	}
	ed.WaitNote("window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "zot: document: queued behind 1 run(s)")
	})
	ed.MustCall("workspace/executeCommand", map[string]any{"command": "zot.abort"}, nil)
	if te := servertest.Find(ed.WaitDone(first.RunID), "turn_end"); te["stop"] != "aborted" {
		t.Fatalf("first turn_end: %v", te)
	}
	ed.WaitDone(second.RunID)
	ed.WaitNote("window/showMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "zot: Second.") })
}

// $ZOT_HOME/code-actions.json adds actions in every workspace; a file that
// is not valid is a warning naming it, and its actions are not offered.
func TestHomeCodeActions(t *testing.T) {
	t.Run("valid", func(t *testing.T) {
		e := newEnv(t)
		os.WriteFile(filepath.Join(e.home, "code-actions.json"), []byte(`[{"title": "zot: to English", "prompt": "Translate {{selection}}", "kind": "refactor.rewrite.zot"}]`), 0o644)
		ed := e.start(plainEditor())
		ed.Open("a.txt", "hallo\n")
		a := actionNamed(t, listActions(t, ed, "a.txt", lspRange(0, 0, 0, 5), nil), "zot: to English")
		if a.Kind != "refactor.rewrite.zot" {
			t.Fatalf("kind: %q", a.Kind)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		e := newEnv(t)
		path := filepath.Join(e.home, "code-actions.json")
		os.WriteFile(path, []byte(`[{"title": "zot: no prompt"}]`), 0o644)
		ed := e.start(plainEditor())
		ed.WaitNote("window/showMessage", func(p json.RawMessage) bool {
			return strings.Contains(string(p), jsonEscape(path)) && strings.Contains(string(p), `[0].prompt\" is required`)
		})
		ed.Open("a.txt", "hallo\n")
		if got := strings.Join(titles(listActions(t, ed, "a.txt", lspRange(0, 0, 0, 0), nil)), "|"); strings.Contains(got, "no prompt") {
			t.Fatalf("an invalid action is offered: %s", got)
		}
	})
}

// A skill is a code action: it runs on the selection with the skill's
// instructions as the prompt (listing still needs no model call); a
// skill that is gone by the time the action runs is an error naming it.
func TestSkillCodeAction(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("Reviewed."))
	dir := filepath.Join(e.root, ".zot", "skills", "review")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: review\ndescription: Review code for bugs\n---\nReview this code for off-by-one bugs.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ed := e.start(plainEditor())
	src := "def last(xs):\n    return xs[len(xs)]\n"
	ed.Open("calc.py", src)
	acts := listActions(t, ed, "calc.py", lspRange(1, 0, 1, 22), nil)
	a := actionNamed(t, acts, "zot: skill review")
	if n := modelPosts(e.llm); n != 0 {
		t.Fatalf("listing made %d model requests", n)
	}
	run := runAction(t, ed, a)
	ed.WaitDone(run.RunID)
	body := string(e.llm.Requests()[0].Raw)
	for _, want := range []string{"Review this code for off-by-one bugs.", "calc.py", "return xs[len(xs)]"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the prompt lacks %q:\n%s", want, body)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err := ed.Call("workspace/executeCommand", map[string]any{"command": a.Command.Command, "arguments": a.Command.Arguments}, nil)
	if err == nil || !strings.Contains(err.Message, `names no skill ("review")`) {
		t.Fatalf("a skill gone since the list: %v", err)
	}
}

// In ask mode a plain client that can open documents is shown the whole
// change (a unified diff, opened with window/showDocument) before it is
// asked; the question names the file it opened.
func TestCodeActionAskModeShowsTheWholeChange(t *testing.T) {
	e := newEnv(t, editReply("calc.py", "return a - b", "return a + b"), llmtest.TextReply("Done."))
	var asked []string
	ed := e.start(plainEditor(askMode(false), func(c *servertest.Config) { c.ShowDocument = true }))
	ed.Choose = func(msg string, actions []string) string {
		asked = append(asked, msg)
		return "Reject"
	}
	text := "def add(a, b):\n    # zot: fix the sign\n    return a - b\n"
	ed.Open("calc.py", text)
	acts := listActions(t, ed, "calc.py", lspRange(1, 0, 1, 0), nil)
	ed.WaitDone(runAction(t, ed, actionNamed(t, acts, "zot: run this instruction")).RunID)
	files, _ := filepath.Glob(filepath.Join(e.home, "transcripts", "*.diff"))
	if len(files) != 1 {
		t.Fatalf("proposal files: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if d := string(b); !strings.Contains(d, "-    return a - b") || !strings.Contains(d, "+    return a + b") || !strings.HasPrefix(d, "--- calc.py\n+++ calc.py (zot's proposal)\n") {
		t.Fatalf("the proposal:\n%s", d)
	}
	docs := ed.Requests("window/showDocument")
	if len(docs) != 1 || !strings.Contains(string(docs[0].Params), string(uri.File(files[0]))) {
		t.Fatalf("showDocument: %v", docs)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "The whole change is open: "+files[0]) {
		t.Fatalf("asked: %q", asked)
	}
	if buf, _ := ed.Buffer("calc.py"); buf != text {
		t.Fatalf("rejected, yet the buffer changed: %q", buf)
	}
}

// zot's own clients (experimental.zot) are not offered the standard tier:
// a language client registers every announced command as an editor
// command, and VS Code's extension has its own zot.abort.
func TestStandardTierOnlyForPlainClients(t *testing.T) {
	e := newEnv(t)
	ed := servertest.Start(t, e.config())
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	ed.Initialize(&init)
	for _, k := range []string{"codeActionProvider", "executeCommandProvider"} {
		if v, ok := init.Capabilities[k]; ok {
			t.Errorf("zot's own client was offered %s: %s", k, v)
		}
	}
	if _, ok := init.Capabilities["experimental"]; !ok {
		t.Fatalf("no experimental.zot in %v", init.Capabilities)
	}
}

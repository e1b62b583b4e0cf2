package examples_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zot-editors/zot/extensions/examples/examplestest"
	"github.com/zot-editors/zot/extensions/sdk/sdktest"
	"github.com/zot-editors/zot/extensions/wire"
)

// proc is one example running as a subprocess, driven like the host does.
type proc struct {
	*sdktest.Host
	dir      string
	manifest examplestest.Manifest
}

// spawn starts the extension in dir as the host would: exec (relative
// to the manifest) with the manifest's args, stdin/stdout as the wire.
func spawn(t *testing.T, dir string) *proc {
	t.Helper()
	m := examplestest.ReadManifest(t, dir)
	cmd := exec.Command(filepath.Join(dir, m.Exec), m.Args...)
	cmd.Dir = dir
	return &proc{Host: sdktest.Spawn(t, cmd), dir: dir, manifest: m}
}

// handshake answers hello (data_dir = dataDir), checks hello matches the
// manifest, and returns the frames after hello up to and including ready.
func (p *proc) handshake(t *testing.T, dataDir string) []wire.Frame {
	t.Helper()
	ack := sdktest.Ack(t)
	ack.ExtensionDir, ack.DataDir = p.dir, dataDir
	hello, frames := p.Handshake(ack)
	if hello.Name != p.manifest.Name || hello.Version == "" {
		t.Fatalf("hello %+v does not match the manifest (name %q)", hello, p.manifest.Name)
	}
	return frames
}

func TestHello(t *testing.T) {
	t.Parallel()
	p := spawn(t, examplestest.Build(t, "hello"))
	regs := p.handshake(t, t.TempDir())
	want := []string{"register_command:hello", "register_command:hello-insert", "register_command:hello-display"}
	if got := sdktest.Registered(regs); !slices.Equal(got, want) {
		t.Fatalf("registrations %v, want %v", got, want)
	}
	for _, f := range regs[:3] {
		if f.Description == "" {
			t.Errorf("/%s has no description", f.Name)
		}
	}
	if f := p.Command("1", "hello", ""); f.Action != wire.ActionPrompt || !strings.Contains(f.Prompt, "Greet me") {
		t.Fatalf("/hello %+v", f)
	}
	if f := p.Command("2", "hello", "Ada"); f.Action != wire.ActionPrompt || !strings.Contains(f.Prompt, "Greet Ada") {
		t.Fatalf("/hello Ada %+v", f)
	}
	if f := p.Command("3", "hello-insert", "world"); f.Action != wire.ActionInsert || f.Insert != "Hello, world!" {
		t.Fatalf("/hello-insert %+v", f)
	}
	if f := p.Command("4", "hello-display", ""); f.Action != wire.ActionDisplay ||
		!strings.Contains(f.Display, "zot test") || !strings.Contains(f.Display, "anthropic/test-model") {
		t.Fatalf("/hello-display %+v", f)
	}
	p.Shutdown()
}

func TestGuard(t *testing.T) {
	t.Parallel()
	p := spawn(t, examplestest.Build(t, "guard"))
	regs := p.handshake(t, t.TempDir())
	if len(regs) != 2 || regs[0].Type != wire.TypeSubscribe || !slices.Equal(regs[0].Intercept, []string{wire.EventToolCall}) {
		t.Fatalf("guard registrations %+v", regs)
	}
	for _, c := range []struct{ command, pattern string }{
		{"rm -rf /", `"rm -rf"`},
		{"cd build && rm -fr .", `"rm -rf"`},
		{"sudo apt-get install foo", `"sudo"`},
		{"make && sudo make install", `"sudo"`},
	} {
		args, _ := json.Marshal(map[string]string{"command": c.command})
		f := p.InterceptToolCall("b-"+c.command, "bash", string(args))
		if !f.Block || !strings.Contains(f.Reason, c.pattern) || f.ModifiedArgs != nil {
			t.Errorf("%q: %+v, want a block quoting %s", c.command, f, c.pattern)
		}
	}
	for _, c := range []struct{ tool, args string }{
		{"bash", `{"command":"ls -la"}`},
		{"bash", `{"command":"rm -r build"}`},
		{"bash", `{"command":"echo sudo"}`},
		{"read", `{"path":"rm -rf"}`}, // only bash is judged
	} {
		f := p.InterceptToolCall("a-"+c.args, c.tool, c.args)
		if f.Block || f.Reason != "" || f.ModifiedArgs != nil || f.ReplaceText != nil {
			t.Errorf("%s %s: %+v, want a plain pass-through", c.tool, c.args, f)
		}
	}
	// Unknown frames and events the guard does not observe are ignored.
	p.SendRaw("garbage\n" + `{"type":"event","event":"turn_start","step":1}` + "\n" + `{"type":"mystery"}` + "\n")
	if f := p.InterceptToolCall("last", "bash", `{"command":"sudo -i"}`); !f.Block {
		t.Fatalf("after garbage: %+v", f)
	}
	p.Shutdown()
}

var (
	todoView    = regexp.MustCompile(`^(› |  )([□✓]) (.*)$`)
	todoMatches = func(t *testing.T, f wire.Frame, want ...string) {
		t.Helper()
		var lines []string
		if f.OpenPanel != nil {
			if f.OpenPanel.ID != "todos-main" || f.OpenPanel.Title == "" || f.OpenPanel.Footer == "" {
				t.Fatalf("panel %+v", f.OpenPanel)
			}
			lines = f.OpenPanel.Lines
		} else {
			if f.PanelID != "todos-main" || f.Title == "" || f.Footer == "" {
				t.Fatalf("render %+v", f)
			}
			lines = f.Lines
		}
		if !slices.Equal(lines, want) {
			t.Fatalf("panel lines\n%q\nwant\n%q", lines, want)
		}
		for _, l := range lines {
			if !todoView.MatchString(l) && !strings.Contains(l, "no todos") {
				t.Fatalf("line %q", l)
			}
		}
	}
)

func TestTodo(t *testing.T) {
	t.Parallel()
	dir := examplestest.Build(t, "todo")
	data := t.TempDir()

	p := spawn(t, dir)
	regs := p.handshake(t, data)
	if got := sdktest.Registered(regs); !slices.Equal(got, []string{"register_tool:todo", "register_command:todos"}) {
		t.Fatalf("registrations %v", got)
	}
	if !json.Valid(regs[0].Schema) || !strings.Contains(string(regs[0].Schema), `"enum"`) {
		t.Fatalf("todo schema %s", regs[0].Schema)
	}

	// The tool.
	if f := p.Tool("l0", "todo", `{"action":"list"}`); f.IsError || sdktest.Text(f) != "no todos" {
		t.Fatalf("empty list %+v", f)
	}
	if f := p.Tool("a1", "todo", `{"action":"add","text":"buy milk"}`); f.IsError || sdktest.Text(f) != "added #1: buy milk" {
		t.Fatalf("add %+v", f)
	}
	if f := p.Tool("a2", "todo", `{"action":"add","text":"write tests"}`); f.IsError || sdktest.Text(f) != "added #2: write tests" {
		t.Fatalf("add %+v", f)
	}
	if f := p.Tool("c1", "todo", `{"action":"complete","id":1}`); f.IsError || sdktest.Text(f) != "completed #1: buy milk" {
		t.Fatalf("complete %+v", f)
	}
	if f := p.Tool("l1", "todo", `{"action":"list"}`); f.IsError || sdktest.Text(f) != "#1 [x] buy milk\n#2 [ ] write tests" {
		t.Fatalf("list %+v", f)
	}
	for _, bad := range []string{
		`{}`, `{"action":"explode"}`, `{"action":"add"}`, `{"action":"add","text":"  "}`,
		`{"action":"complete"}`, `{"action":"complete","id":"1"}`, `{"action":"complete","id":99}`,
		`{"action":"list","extra":true}`, `[]`,
	} {
		if f := p.Tool("bad", "todo", bad); !f.IsError {
			t.Errorf("args %s: %+v, want an error result", bad, f)
		}
	}

	// The panel: open, keys, re-renders, close.
	f := p.Command("o1", "todos", "")
	if f.Action != wire.ActionOpenPanel {
		t.Fatalf("/todos %+v", f)
	}
	todoMatches(t, f, "› ✓ buy milk", "  □ write tests")
	key := func(k, text string, want ...string) {
		t.Helper()
		p.Send(wire.Frame{Type: wire.TypePanelKey, PanelID: "todos-main", Key: k, Text: text})
		todoMatches(t, p.Expect(wire.TypePanelRender), want...)
	}
	key("down", "", "  ✓ buy milk", "› □ write tests")
	key("down", "", "  ✓ buy milk", "› □ write tests") // clamped
	key("rune", "x", "  ✓ buy milk", "› ✓ write tests")
	key("enter", "", "  ✓ buy milk", "› □ write tests")
	key("up", "", "› ✓ buy milk", "  □ write tests")
	key("rune", "a", "  ✓ buy milk", "  □ write tests", "› □ new item 3")
	key("left", "", "  ✓ buy milk", "  □ write tests", "› □ new item 3") // re-rendered unchanged
	key("rune", "d", "  ✓ buy milk", "› □ write tests")
	key("rune", "a", "  ✓ buy milk", "  □ write tests", "› □ new item 4")
	key("delete", "", "  ✓ buy milk", "› □ write tests")
	key("rune", "x", "  ✓ buy milk", "› ✓ write tests")
	p.Send(wire.Frame{Type: wire.TypePanelKey, PanelID: "todos-main", Key: "rune", Text: "q"})
	if f := p.Expect(wire.TypePanelClose); f.PanelID != "todos-main" {
		t.Fatalf("q: %+v", f)
	}
	// While open, a tool edit re-renders; after the host closes the
	// panel, it does not.
	todoMatches(t, p.Command("o2", "todos", ""), "  ✓ buy milk", "› ✓ write tests")
	p.Send(wire.Frame{Type: wire.TypeToolCall, ID: "a3", Name: "todo", Args: json.RawMessage(`{"action":"add","text":"ship it"}`)})
	todoMatches(t, p.Expect(wire.TypePanelRender), "  ✓ buy milk", "› ✓ write tests", "  □ ship it")
	if f := p.Expect(wire.TypeToolResult); f.ID != "a3" || sdktest.Text(f) != "added #5: ship it" {
		t.Fatalf("add while open %+v", f)
	}
	p.Send(wire.Frame{Type: wire.TypePanelClose, PanelID: "todos-main"})
	p.Send(wire.Frame{Type: wire.TypePanelKey, PanelID: "other", Key: "down"}) // not ours: ignored
	if f := p.Tool("c5", "todo", `{"action":"complete","id":5}`); f.IsError {
		t.Fatalf("complete %+v", f)
	}
	p.Shutdown()

	// Persistence: the file is whole JSON, no temp files are left, and a
	// restarted extension sees the same list.
	b, err := os.ReadFile(filepath.Join(data, "todos.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk struct {
		Items []struct {
			ID   int
			Text string
			Done bool
		}
	}
	if err := json.Unmarshal(b, &onDisk); err != nil || len(onDisk.Items) != 3 {
		t.Fatalf("todos.json %s: %v", b, err)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 1 {
		t.Fatalf("data dir holds %v", entries)
	}

	p = spawn(t, dir)
	p.handshake(t, data)
	if f := p.Tool("l2", "todo", `{"action":"list"}`); sdktest.Text(f) != "#1 [x] buy milk\n#2 [x] write tests\n#5 [x] ship it" {
		t.Fatalf("list after restart %q", sdktest.Text(f))
	}
	if f := p.Tool("a6", "todo", `{"action":"add","text":"next"}`); sdktest.Text(f) != "added #6: next" {
		t.Fatalf("ids continue after restart: %q", sdktest.Text(f))
	}
	todoMatches(t, p.Command("o3", "todos", ""), "› ✓ buy milk", "  ✓ write tests", "  ✓ ship it", "  □ next")
	p.Send(wire.Frame{Type: wire.TypePanelKey, PanelID: "todos-main", Key: "esc"})
	p.Expect(wire.TypePanelClose)
	p.Shutdown()
}

func TestPython(t *testing.T) {
	t.Parallel()
	p := spawn(t, examplestest.Build(t, "python"))
	regs := p.handshake(t, t.TempDir())
	if got := sdktest.Registered(regs); !slices.Equal(got, []string{"register_command:words", "register_tool:word_count"}) {
		t.Fatalf("registrations %v", got)
	}
	if !json.Valid(regs[1].Schema) {
		t.Fatalf("schema %s", regs[1].Schema)
	}
	if f := p.Command("1", "words", "the quick brown fox"); f.Action != wire.ActionDisplay || f.Display != "4 words, 19 characters" {
		t.Fatalf("/words %+v", f)
	}
	if f := p.Command("2", "words", ""); f.Action != wire.ActionDisplay || !strings.Contains(f.Display, "usage") {
		t.Fatalf("/words without text %+v", f)
	}
	if f := p.Tool("t1", "word_count", `{"text":"one two\nthree ünïcode"}`); f.IsError || sdktest.Text(f) != "4 words, 2 lines, 21 characters" {
		t.Fatalf("word_count %+v", f)
	}
	if f := p.Tool("t2", "word_count", `{"text":3}`); !f.IsError {
		t.Fatalf("bad args %+v", f)
	}
	p.SendRaw("not json\n" + `{"type":"tool_cancel","id":"t9"}` + "\n" + `{"type":"mystery"}` + "\n")
	big := strings.Repeat("word ", 400_000) // a 2 MB line
	if f := p.Tool("t3", "word_count", `{"text":"`+big+`"}`); sdktest.Text(f) != "400000 words, 1 lines, 2000000 characters" {
		t.Fatalf("big %q", sdktest.Text(f))
	}
	p.Shutdown()
}

func TestNode(t *testing.T) {
	t.Parallel()
	p := spawn(t, examplestest.Build(t, "node"))
	regs := p.handshake(t, t.TempDir())
	if got := sdktest.Registered(regs); !slices.Equal(got, []string{"register_command:clock", "register_tool:now"}) {
		t.Fatalf("registrations %v", got)
	}
	if f := p.Command("1", "clock", ""); f.Action != wire.ActionDisplay || !regexp.MustCompile(`\d{4}`).MatchString(f.Display) {
		t.Fatalf("/clock %+v", f)
	}
	if f := p.Command("2", "clock", "Mars/Olympus"); f.Error == "" {
		t.Fatalf("/clock with a bad zone %+v", f)
	}
	iso := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z \(.+\)$`)
	if f := p.Tool("t1", "now", `{}`); f.IsError || !iso.MatchString(sdktest.Text(f)) {
		t.Fatalf("now %+v", f)
	}
	if f := p.Tool("t2", "now", `{"timezone":"UTC"}`); f.IsError || !strings.Contains(sdktest.Text(f), "UTC") {
		t.Fatalf("now UTC %+v", f)
	}
	if f := p.Tool("t3", "now", `{"timezone":"Nowhere/Special"}`); !f.IsError {
		t.Fatalf("bad zone %+v", f)
	}
	p.SendRaw("not json\n" + `{"type":"event","event":"turn_end"}` + "\n")
	if f := p.Tool("t4", "now", `{"timezone":42}`); !f.IsError {
		t.Fatalf("bad args %+v", f)
	}
	p.Shutdown()
}

// Every example exits when the host closes its stdin without a shutdown
// (zot went away).
func TestExitOnEOF(t *testing.T) {
	t.Parallel()
	for _, name := range examplestest.Names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := spawn(t, examplestest.Build(t, name))
			p.handshake(t, t.TempDir())
			p.CloseInput()
			p.ExpectCleanEnd()
		})
	}
}

// The manifests are complete and every example has a README.
func TestManifests(t *testing.T) {
	for _, name := range examplestest.Names {
		dir := examplestest.Dir(name)
		m := examplestest.ReadManifest(t, dir)
		var raw map[string]any
		b, _ := os.ReadFile(filepath.Join(dir, "extension.json"))
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		if m.Version == "" || m.Language == "" || raw["description"] == "" || raw["enabled"] != true {
			t.Errorf("%s/extension.json incomplete: %s", name, b)
		}
		if !strings.HasPrefix(m.Exec, "./") {
			t.Errorf("%s: exec %q is not relative to the manifest", name, m.Exec)
		}
		if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if m.Language != "go" {
			if info, err := os.Stat(filepath.Join(dir, m.Exec)); err != nil || info.Mode()&0o111 == 0 {
				t.Errorf("%s: %s is not an executable file (%v)", name, m.Exec, err)
			}
		}
	}
}

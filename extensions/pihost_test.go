package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/internal/proctest"
)

// The shared pi runtime (pihost.go): every pi extension of a host runs in
// one Node process, and each stays its own extension.

// piCounter is a pi module with a tool NAME_count that counts its calls in
// module state and answers "TAG n"; its factory prints a line on stdout
// and one on stderr (its log), and extra is spliced into the factory.
func piCounter(name, tag, extra string) string {
	return `import { Type } from "@sinclair/typebox";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

let n = 0;
export default function (pi: ExtensionAPI) {
	console.log("stdout of ` + name + `");
	console.error("stderr of ` + name + `");
	pi.registerTool({
		name: "` + name + `_count",
		label: "count",
		description: "counts its calls",
		parameters: Type.Object({}),
		async execute() {
			n++;
			return { content: [{ type: "text", text: "` + tag + ` " + n }], details: {} };
		},
	});
` + extra + `
}
`
}

// startShared starts a host over the project's .pi/extensions (the files
// given), trusting the names in trust, with a front's session started.
func startShared(t *testing.T, e *env, files map[string]string, trust []string, mod func(*Options)) *Host {
	t.Helper()
	return startPi(t, e, "", files, trust, mod)
}

// startPi is startShared with $ZOT_PI_PROCESS set to mode.
func startPi(t *testing.T, e *env, mode string, files map[string]string, trust []string, mod func(*Options)) *Host {
	t.Helper()
	piRuntimeForTest(t)
	t.Setenv(EnvPiProcess, mode)
	t.Setenv(EnvPiHome, e.home)
	root := PiProjectRoot(e.cwd)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := e.start(func(o *Options) {
		o.InterceptTimeout = 2 * time.Second
		if mod != nil {
			mod(o)
		}
	})
	h.SetActions(fakeActions{})
	for _, n := range trust {
		if err := h.Trust(n); err != nil {
			t.Fatal(err)
		}
	}
	h.Observe(agent.Lifecycle{Event: "session_start", Reason: "startup"})
	return h
}

func startedCount(e *env, name string) int {
	return strings.Count(e.logOf(name), "started "+name+" (pid")
}

func TestPiSharedProcessKeepsExtensionsApart(t *testing.T) {
	e := newEnv(t)
	h := startShared(t, e, map[string]string{
		"alpha.ts": piCounter("alpha", "A", ""),
		"beta.ts":  piCounter("beta", "B", ""),
		"gamma.ts": piCounter("gamma", "G", ""),
	}, []string{"alpha", "beta"}, nil)
	eventually(t, "alpha and beta ready", func() bool {
		return toolNamed(h, "alpha_count") != nil && toolNamed(h, "beta_count") != nil
	})
	a, b, g := statusOf(h, "alpha"), statusOf(h, "beta"), statusOf(h, "gamma")
	if a.PID == 0 || a.PID != b.PID {
		t.Fatalf("alpha and beta are not in one process: %d, %d", a.PID, b.PID)
	}
	// Registrations are each extension's own.
	if strings.Join(a.Tools, ",") != "alpha_count" || strings.Join(b.Tools, ",") != "beta_count" {
		t.Fatalf("tools: alpha %v, beta %v", a.Tools, b.Tools)
	}
	// Trust too: gamma was not trusted, so it is not loaded.
	if g.State != StateUntrusted || toolNamed(h, "gamma_count") != nil {
		t.Fatalf("gamma: %+v", g)
	}
	if got := resultText(callTool(t, h, "alpha_count", `{}`)); got != "A 1" {
		t.Fatalf("alpha_count: %q", got)
	}
	if got := resultText(callTool(t, h, "beta_count", `{}`)); got != "B 1" {
		t.Fatalf("beta_count: %q", got)
	}
	// Each one's output is in its own log, none in the other's.
	eventually(t, "the logs", func() bool {
		return strings.Contains(e.logOf("alpha"), "stderr of alpha") && strings.Contains(e.logOf("beta"), "stdout of beta")
	})
	for _, c := range []struct{ log, own, other string }{{"alpha", "alpha", "beta"}, {"beta", "beta", "alpha"}} {
		l := e.logOf(c.log)
		if !strings.Contains(l, "stdout of "+c.own) || !strings.Contains(l, "stderr of "+c.own) || strings.Contains(l, "of "+c.other) {
			t.Errorf("ext-%s.log:\n%s", c.log, l)
		}
	}
	// Trusting gamma starts it in the same process.
	if err := h.Trust("gamma"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "gamma ready", func() bool { return toolNamed(h, "gamma_count") != nil })
	if pid := statusOf(h, "gamma").PID; pid != a.PID {
		t.Fatalf("gamma runs in %d, the others in %d", pid, a.PID)
	}
	if got := resultText(callTool(t, h, "gamma_count", `{}`)); got != "G 1" {
		t.Fatalf("gamma_count: %q", got)
	}
}

func TestPiSharedReloadLeavesTheOthers(t *testing.T) {
	e := newEnv(t)
	h := startShared(t, e, map[string]string{
		"alpha.ts": piCounter("alpha", "A1", ""),
		"beta.ts":  piCounter("beta", "B", ""),
	}, []string{"alpha", "beta"}, func(o *Options) { o.Watch = true })
	eventually(t, "both ready", func() bool {
		return toolNamed(h, "alpha_count") != nil && toolNamed(h, "beta_count") != nil
	})
	pid := statusOf(h, "alpha").PID
	callTool(t, h, "alpha_count", `{}`)
	callTool(t, h, "beta_count", `{}`)
	if got := resultText(callTool(t, h, "beta_count", `{}`)); got != "B 2" {
		t.Fatalf("beta_count: %q", got)
	}
	// A save reloads alpha alone: its module runs afresh (new code, its
	// count from zero), in the same process; beta keeps its state.
	if err := os.WriteFile(filepath.Join(PiProjectRoot(e.cwd), "alpha.ts"), []byte(piCounter("alpha", "A2", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.Trust("alpha"); err != nil { // a project file changed: trusted again
		t.Fatal(err)
	}
	eventually(t, "alpha reloaded", func() bool {
		return startedCount(e, "alpha") >= 2 && statusOf(h, "alpha").State == StateReady && toolNamed(h, "alpha_count") != nil
	})
	if got := resultText(callTool(t, h, "alpha_count", `{}`)); got != "A2 1" {
		t.Fatalf("alpha_count after the save: %q (want the new code, counting afresh)", got)
	}
	if got := resultText(callTool(t, h, "beta_count", `{}`)); got != "B 3" {
		t.Fatalf("beta_count after alpha's reload: %q (want its state kept)", got)
	}
	if n := startedCount(e, "beta"); n != 1 {
		t.Fatalf("beta started %d times:\n%s", n, e.logOf("beta"))
	}
	if p := statusOf(h, "alpha").PID; p != pid || statusOf(h, "beta").PID != pid {
		t.Fatalf("the process changed: %d → alpha %d, beta %d", pid, p, statusOf(h, "beta").PID)
	}
}

func TestPiSharedCrashRestartsEveryExtension(t *testing.T) {
	e := newEnv(t)
	crash := `	pi.registerTool({ name: "alpha_crash", label: "crash", description: "ends the process", parameters: Type.Object({}),
		async execute() { process.exit(3); } });`
	h := startShared(t, e, map[string]string{
		"alpha.ts": piCounter("alpha", "A", crash),
		"beta.ts":  piCounter("beta", "B", ""),
	}, []string{"alpha", "beta"}, nil)
	eventually(t, "both ready", func() bool {
		return toolNamed(h, "alpha_crash") != nil && toolNamed(h, "beta_count") != nil
	})
	pid := statusOf(h, "beta").PID
	callTool(t, h, "beta_count", `{}`)
	if r := callTool(t, h, "alpha_crash", `{}`); !r.IsError {
		t.Fatalf("alpha_crash: %+v", r)
	}
	eventually(t, "both restarted in a new process", func() bool {
		a, b := statusOf(h, "alpha"), statusOf(h, "beta")
		return a.State == StateReady && b.State == StateReady && a.Crashes == 1 && b.Crashes == 1 &&
			a.PID == b.PID && a.PID != pid && toolNamed(h, "beta_count") != nil
	})
	if proctest.Alive(pid) {
		t.Errorf("the crashed process %d is still there", pid)
	}
	if got := resultText(callTool(t, h, "beta_count", `{}`)); got != "B 1" {
		t.Fatalf("beta_count after the restart: %q", got)
	}
	if l := e.logOf("beta"); !strings.Contains(l, "the pi runtime (node, pid") {
		t.Errorf("beta's log does not say the shared process took it down:\n%s", l)
	}
}

func TestPiSharedHungGuardBlocks(t *testing.T) {
	e := newEnv(t)
	hang := `	pi.on("tool_call", () => new Promise(() => {}));`
	h := startShared(t, e, map[string]string{
		"alpha.ts": piCounter("alpha", "A", hang),
		"beta.ts":  piCounter("beta", "B", ""),
	}, []string{"alpha", "beta"}, func(o *Options) { o.InterceptTimeout = 300 * time.Millisecond })
	eventually(t, "both ready", func() bool {
		return toolNamed(h, "alpha_count") != nil && toolNamed(h, "beta_count") != nil && h.Intercepts("tool_call")
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	d := h.BeforeTool(ctx, agent.ToolCallInfo{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)})
	if !d.Block || !strings.Contains(d.Reason, "alpha") {
		t.Fatalf("a hung tool_call guard let the call through: %+v", d)
	}
	// The other extension in the process still answers.
	if got := resultText(callTool(t, h, "beta_count", `{}`)); got != "B 1" {
		t.Fatalf("beta_count: %q", got)
	}
}

func TestPiSharedUncaughtErrorRestartsOnlyThatExtension(t *testing.T) {
	e := newEnv(t)
	throwLater := `	pi.registerTool({ name: "alpha_throw", label: "throw", description: "throws later", parameters: Type.Object({}),
		async execute() { setTimeout(() => { throw new Error("alpha's timer broke"); }, 1); return { content: [{ type: "text", text: "armed" }] }; } });`
	h := startShared(t, e, map[string]string{
		"alpha.ts": piCounter("alpha", "A", throwLater),
		"beta.ts":  piCounter("beta", "B", ""),
	}, []string{"alpha", "beta"}, nil)
	eventually(t, "both ready", func() bool {
		return toolNamed(h, "alpha_throw") != nil && toolNamed(h, "beta_count") != nil
	})
	pid := statusOf(h, "beta").PID
	callTool(t, h, "beta_count", `{}`)
	callTool(t, h, "alpha_throw", `{}`)
	eventually(t, "alpha restarted", func() bool {
		a := statusOf(h, "alpha")
		return a.Crashes == 1 && a.State == StateReady && toolNamed(h, "alpha_throw") != nil
	})
	if !strings.Contains(e.logOf("alpha"), "alpha's timer broke") {
		t.Errorf("alpha's log lacks its error:\n%s", e.logOf("alpha"))
	}
	if got := resultText(callTool(t, h, "beta_count", `{}`)); got != "B 2" {
		t.Fatalf("beta_count: %q (want its state kept)", got)
	}
	if b := statusOf(h, "beta"); b.Crashes != 0 || b.PID != pid || statusOf(h, "alpha").PID != pid {
		t.Fatalf("beta %+v, alpha pid %d; the process was %d", b, statusOf(h, "alpha").PID, pid)
	}
}

// ZOT_PI_PROCESS=each keeps the layout from before: a Node process per pi
// module, its argv naming the extension.
func TestPiProcessEach(t *testing.T) {
	e := newEnv(t)
	h := startPi(t, e, "each", map[string]string{
		"alpha.ts": piCounter("alpha", "A", ""),
		"beta.ts":  piCounter("beta", "B", ""),
	}, []string{"alpha", "beta"}, nil)
	eventually(t, "both ready", func() bool {
		return toolNamed(h, "alpha_count") != nil && toolNamed(h, "beta_count") != nil
	})
	a, b := statusOf(h, "alpha").PID, statusOf(h, "beta").PID
	if a == 0 || a == b {
		t.Fatalf("alpha and beta share process %d (want one each)", a)
	}
	argv, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(a), "cmdline"))
	if runtime.GOOS == "linux" && !strings.Contains(string(argv), "host.js\x00alpha\x00") {
		t.Errorf("alpha's process: %q", argv)
	}
	if got := resultText(callTool(t, h, "beta_count", `{}`)); got != "B 1" {
		t.Fatalf("beta_count: %q", got)
	}
}

// The loader keeps the module semantics pi's jiti gives extensions:
// TypeScript and ESM mixed with CommonJS, a `.js` import that is really
// `.ts`, default-export interop both ways, an ESM-only package in the
// extension's node_modules, and the names the runtime provides.
func TestPiLoaderModuleSemantics(t *testing.T) {
	e := newEnv(t)
	root := PiProjectRoot(e.cwd)
	files := map[string]string{
		"mixed/index.ts": `import { Type } from "@sinclair/typebox";
import { z } from "zod";
import { Text } from "@mariozechner/pi-tui";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { twice } from "./util.js";
import legacy from "./legacy.cjs";
import esm, { named } from "./esm.mjs";
import shout from "shout";
const { plain } = require("./plain.js");

export default function (pi: ExtensionAPI) {
	const n: number = z.number().parse(21);
	pi.registerTool({
		name: "mixed_probe", label: "probe", description: "reports what loaded",
		parameters: Type.Object({}),
		async execute() {
			const parts = [twice(n), legacy.name, esm(), named, shout("pkg"), plain, typeof Text];
			return { content: [{ type: "text", text: parts.join(" ") }], details: {} };
		},
	});
}
`,
		"mixed/util.ts":                         "export function twice(x: number): number { return x * 2; }\n",
		"mixed/legacy.cjs":                      "module.exports = { name: \"cjs-default\" };\n",
		"mixed/esm.mjs":                         "export default function () { return \"esm-default\"; }\nexport const named = \"esm-named\";\n",
		"mixed/plain.js":                        "exports.plain = \"cjs-plain\";\n",
		"mixed/node_modules/shout/package.json": `{"name":"shout","version":"1.0.0","type":"module","main":"index.js"}`,
		"mixed/node_modules/shout/index.js":     "export default function shout(s) { return s.toUpperCase() + \"!\"; }\n",
	}
	for name, src := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := startShared(t, e, nil, []string{"mixed"}, nil)
	eventually(t, "mixed ready", func() bool { return toolNamed(h, "mixed_probe") != nil || statusOf(h, "mixed").State == StateFailed })
	if toolNamed(h, "mixed_probe") == nil {
		t.Fatalf("mixed did not load: %+v\n%s", statusOf(h, "mixed"), e.logOf("mixed"))
	}
	want := "42 cjs-default esm-default esm-named PKG! cjs-plain function"
	if got := resultText(callTool(t, h, "mixed_probe", `{}`)); got != want {
		t.Fatalf("mixed_probe: %q, want %q", got, want)
	}
}

// The loader's transform cache: a start finds a module's transform in
// ~/.cache/zot/pi-sucrase (here $XDG_CACHE_HOME) and does not redo it; a
// changed module is a different entry.
func TestPiLoaderCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	e := newEnv(t)
	h := startShared(t, e, map[string]string{"alpha.ts": piCounter("alpha", "A", "")}, []string{"alpha"}, nil)
	eventually(t, "alpha ready", func() bool { return toolNamed(h, "alpha_count") != nil })
	var entries []string
	eventually(t, "the transform cached", func() bool {
		entries, _ = filepath.Glob(filepath.Join(cache, "zot", "pi-sucrase", "*", "*.js"))
		return len(entries) > 0
	})
	// Tamper with the cached transform: a start that uses the cache says so.
	for _, f := range entries {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(strings.Replace(string(b), `"A "`, `"cached "`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alpha restarted", func() bool { return startedCount(e, "alpha") >= 2 && toolNamed(h, "alpha_count") != nil })
	if got := resultText(callTool(t, h, "alpha_count", `{}`)); got != "cached 1" {
		t.Fatalf("alpha_count after a restart: %q (want the cached transform's)", got)
	}
	// A changed module is transformed again.
	if err := os.WriteFile(filepath.Join(PiProjectRoot(e.cwd), "alpha.ts"), []byte(piCounter("alpha", "B", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.Trust("alpha"); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alpha restarted again", func() bool { return startedCount(e, "alpha") >= 3 && toolNamed(h, "alpha_count") != nil })
	if got := resultText(callTool(t, h, "alpha_count", `{}`)); got != "B 1" {
		t.Fatalf("alpha_count after a change: %q", got)
	}
}

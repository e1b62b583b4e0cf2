import { test } from "node:test";
import assert from "node:assert/strict";
import { ZotState } from "../../src/state";
import type { ZotEvent } from "../../src/lsp_ext";

const ev = (e: Record<string, unknown>) => e as unknown as ZotEvent;
const running = { state: "running" as const, version: "0.1.0" };

test("runs: events add a run, done ends it; a late prompt answer does not revive it", () => {
    const s = new ZotState();
    assert.deepEqual(s.onEvent(ev({ type: "turn_start", step: 1, runId: "run-1" })), { changed: true, idle: false });
    assert.equal(s.running, true);
    assert.deepEqual(s.onEvent(ev({ type: "text_delta", delta: "x", runId: "run-1" })), { changed: false, idle: false });
    assert.deepEqual(s.onEvent(ev({ type: "done", runId: "run-1" })), { changed: true, idle: true });
    assert.equal(s.running, false);
    // The zot/prompt answer arrives after the run's done.
    assert.equal(s.addRun("run-1"), false);
    assert.equal(s.running, false);
    assert.equal(s.addRun("run-2"), true);
    assert.equal(s.addRun("run-2"), false);
    assert.deepEqual(s.onEvent(ev({ type: "turn_start", step: 1, runId: "run-3" })), { changed: true, idle: false });
    assert.deepEqual(s.onEvent(ev({ type: "done", runId: "run-2" })), { changed: true, idle: false }, "run-3 still runs");
});

test("usage updates the status bar's cost", () => {
    const s = new ZotState();
    s.model = "m1";
    s.provider = "anthropic";
    s.mode = "ask";
    const u = { input: 1, output: 2, cache_read: 0, cache_write: 0, cost_usd: 0.01234 };
    assert.deepEqual(s.onEvent(ev({ type: "usage", ...u, cumulative: u, runId: "run-1" })).changed, true);
    const v = s.statusBar(running);
    assert.equal(v.text, "$(loading~spin) zot: m1");
    assert.match(v.tooltip, /^zot 0\.1\.0 — anthropic\/m1, ask mode · \$0\.0123 — working/);
    assert.equal(v.background, undefined);
});

test("status bar: starting, stopped with the problem, idle with a warning", () => {
    const s = new ZotState();
    assert.deepEqual(s.statusBar({ state: "starting" }), { text: "$(loading~spin) zot", tooltip: "zot: starting…" });
    assert.deepEqual(s.statusBar({ state: "error", problem: "no zot binary" }), {
        text: "$(error) zot",
        tooltip: "zot: no zot binary",
        background: "statusBarItem.errorBackground",
    });
    s.model = "m2";
    const v = s.statusBar({ state: "running", problem: "no API key" });
    assert.equal(v.text, "$(sparkle) zot: m2");
    assert.match(v.tooltip, /\nno API key$/);
    assert.equal(v.background, "statusBarItem.warningBackground");
});

test("server info and zot/state fill the state; clearRuns forgets runs", () => {
    const s = new ZotState();
    s.fromServerInfo({ protocolVersion: 1, version: "0.1.0", provider: "openai", model: "gpt", cwd: "/p", permissionMode: "readonly", commands: [{ name: "help", description: "", source: "builtin" }] });
    assert.deepEqual([s.provider, s.model, s.mode, s.commands.length], ["openai", "gpt", "readonly", 1]);
    s.fromState({ provider: "anthropic", model: "c", reasoning: "off", cwd: "/p", message_count: 2, busy: false, usage: { input: 0, output: 0, cache_read: 0, cache_write: 0, cost_usd: 0 }, permissionMode: "auto", queued: 0 });
    assert.deepEqual(s.chatStatus({ state: "running", version: "v" }), {
        connection: "running",
        message: "",
        actions: [],
        provider: "anthropic",
        model: "c",
        permissionMode: "auto",
        usage: { input: 0, output: 0, cache_read: 0, cache_write: 0, cost_usd: 0 },
        contextUsed: 0,
        version: "v",
    });
    s.addRun("run-9");
    s.clearRuns();
    assert.equal(s.running, false);
});

import { test } from "node:test";
import assert from "node:assert/strict";
import * as st from "../../src/webview/chat/state";
import type { ZotEvent } from "../../src/lsp_ext";

const run = "run-1";
const ev = (e: Record<string, unknown>) => ({ runId: run, ...e }) as ZotEvent;

function stream(s: st.ChatState, events: Record<string, unknown>[]) {
    for (const e of events) {
        st.applyEvent(s, ev(e));
    }
}

test("a run: user message, streamed answer, tool call with progress and result, done", () => {
    const s = st.createState();
    st.runStarted(s, run, false);
    assert.equal(st.isRunning(s), true);
    stream(s, [
        { type: "turn_start", step: 1 },
        { type: "user_message", content: [{ type: "text", text: "fix it" }], time: "" },
        { type: "assistant_start" },
        { type: "text_delta", delta: "Let me " },
        { type: "text_delta", delta: "look." },
    ]);
    const a = s.items[1] as st.AssistantItem;
    assert.equal(s.items[0].kind, "user");
    assert.equal(a.kind, "assistant");
    assert.equal(a.text, "Let me look.");
    assert.equal(a.streaming, true);
    stream(s, [
        { type: "usage", input: 10, output: 5, cache_read: 0, cache_write: 0, cost_usd: 0.01, cumulative: { input: 10, output: 5, cache_read: 0, cache_write: 0, cost_usd: 0.01 } },
        { type: "assistant_message", content: [{ type: "text", text: "Let me look." }, { type: "tool_call", id: "c1", name: "bash", args: {} }], time: "" },
        { type: "tool_call", id: "c1", name: "bash", args: { command: "ls" } },
        { type: "tool_progress", id: "c1", text: "a\n" },
        { type: "tool_progress", id: "c1", text: "b\n" },
    ]);
    assert.equal(a.streaming, false);
    const t = s.byId.get("t-c1") as st.ToolItem;
    assert.equal(t.status, "running");
    assert.equal(t.progress, "a\nb\n");
    stream(s, [
        { type: "tool_result", id: "c1", is_error: false, content: [{ type: "text", text: "a\nb" }] },
        { type: "turn_end", stop: "tool_use" },
        { type: "assistant_start" },
        { type: "text_delta", delta: "Done." },
        { type: "assistant_message", content: [{ type: "text", text: "Done." }], time: "" },
        { type: "turn_end", stop: "end_turn" },
        { type: "done" },
    ]);
    assert.equal(t.status, "done");
    assert.equal(t.result, "a\nb");
    assert.deepEqual(
        s.items.map((i) => i.kind),
        ["user", "assistant", "tool", "assistant"],
    );
    assert.equal(s.usage.cost_usd, 0.01);
    assert.equal(st.isRunning(s), false);
});

test("dirty tracking: only changed items render; reset after clear", () => {
    const s = st.createState();
    st.takeDirty(s);
    stream(s, [{ type: "assistant_start" }]);
    let d = st.takeDirty(s);
    assert.equal(d.reset, false);
    assert.equal(d.dirty.length, 1);
    for (let i = 0; i < 1000; i++) {
        stream(s, [{ type: "text_delta", delta: "x" }]);
    }
    d = st.takeDirty(s);
    assert.equal(d.dirty.length, 1, "a thousand deltas dirty one item once");
    assert.equal((d.dirty[0] as st.AssistantItem).text.length, 1000);
    assert.equal(st.takeDirty(s).dirty.length, 0);
    st.clear(s);
    d = st.takeDirty(s);
    assert.equal(d.reset, true);
    assert.equal(s.items.length, 0);
});

test("abort: the turn ends as aborted, running tools stop, the run is done", () => {
    const s = st.createState();
    st.runStarted(s, run, false);
    stream(s, [
        { type: "assistant_start" },
        { type: "text_delta", delta: "tok tok" },
        { type: "turn_end", stop: "aborted" },
        { type: "done" },
    ]);
    const kinds = s.items.map((i) => (i.kind === "notice" ? `notice:${i.level}:${i.text}` : i.kind));
    assert.deepEqual(kinds, ["assistant", "notice:warn:Stopped."]);
    assert.equal((s.items[0] as st.AssistantItem).streaming, false);
    assert.equal(st.isRunning(s), false);
});

test("zot gone during a run (crash during a review): the run ends, its tool stops; a restart's live run counts again", () => {
    const s = st.createState();
    st.setStatus(s, { connection: "running" });
    st.runStarted(s, run, false);
    stream(s, [
        { type: "assistant_start" },
        { type: "text_delta", delta: "Changing it." },
        { type: "tool_call", id: "c1", name: "edit", args: { path: "hello.txt" } },
    ]);
    assert.equal(st.isRunning(s), true);
    st.setStatus(s, { connection: "starting", message: "zot lsp stopped unexpectedly; restarting" });
    assert.equal(st.isRunning(s), false, "no run of the dead process is in progress");
    const tool = s.items.find((i) => i.kind === "tool") as st.ToolItem;
    assert.equal(tool.status, "error");
    assert.equal(tool.result, "stopped");
    assert.equal((s.items.find((i) => i.kind === "assistant") as st.AssistantItem).streaming, false);
    // The new process may number its runs the same way: its run counts.
    st.setStatus(s, { connection: "running" });
    st.runStarted(s, run, false);
    assert.equal(st.isRunning(s), true);
});

test("errors, queued runs and compaction show as notices", () => {
    const s = st.createState();
    st.runStarted(s, "run-1", false);
    st.runStarted(s, "run-2", true, 1);
    assert.match((s.items[0] as st.NoticeItem).text, /Queued/);
    st.applyEvent(s, { type: "error", message: "boom", runId: "run-1" });
    st.applyEvent(s, { type: "done", runId: "run-1" });
    assert.equal(st.isRunning(s), true, "run-2 still queued");
    st.applyEvent(s, { type: "compact_done", summary: "short", runId: "run-2" });
    st.applyEvent(s, { type: "done", runId: "run-2" });
    assert.equal(st.isRunning(s), false);
    const n = s.items.filter((i): i is st.NoticeItem => i.kind === "notice");
    assert.deepEqual(
        n.map((i) => i.level),
        ["info", "error", "info"],
    );
    assert.match(n[2].text, /short/);
});

test("long tool output keeps its tail", () => {
    const s = st.createState();
    stream(s, [{ type: "tool_call", id: "c", name: "bash", args: {} }]);
    for (let i = 0; i < 2000; i++) {
        stream(s, [{ type: "tool_progress", id: "c", text: `line ${i}\n` }]);
    }
    const t = s.byId.get("t-c") as st.ToolItem;
    assert.ok(t.progress.length <= st.MAX_PROGRESS + 1);
    assert.ok(t.progress.endsWith("line 1999\n"));
});

test("history: messages become items, tool results join their calls", () => {
    const s = st.createState();
    st.loadHistory(s, [
        { role: "user", content: [{ type: "text", text: "hi" }], time: "" },
        { role: "assistant", content: [{ type: "text", text: "reading" }, { type: "tool_call", id: "c9", name: "read", args: { path: "a.go" } }], time: "" },
        { role: "user", content: [{ type: "tool_result", call_id: "c9", is_error: true, content: [{ type: "text", text: "no such file" }] }], time: "" },
        { role: "assistant", content: [{ type: "text", text: "It is missing." }], time: "" },
    ]);
    assert.deepEqual(
        s.items.map((i) => i.kind),
        ["user", "assistant", "tool", "assistant"],
    );
    const t = s.byId.get("t-c9") as st.ToolItem;
    assert.equal(t.status, "error");
    assert.equal(t.result, "no such file");
    assert.equal(st.takeDirty(s).reset, true);
});

test("a run whose events (done included) arrive before the zot/prompt answer is not left running", () => {
    const s = st.createState();
    st.applyEvent(s, { type: "user_message", content: [{ type: "text", text: "hi" }], time: "", runId: "run-9" });
    st.applyEvent(s, { type: "error", message: "no key", runId: "run-9" });
    st.applyEvent(s, { type: "done", runId: "run-9" });
    st.runStarted(s, "run-9", false);
    assert.equal(st.isRunning(s), false);
});

test("thinking: deltas before the answer, the final message and history keep it", () => {
    const s = st.createState();
    st.runStarted(s, run, false);
    stream(s, [
        { type: "user_message", content: [{ type: "text", text: "why?" }], time: "" },
        { type: "assistant_start" },
        { type: "thinking_delta", text: "Consider " },
        { type: "thinking_delta", text: "the cause." },
    ]);
    const a = s.items[1] as st.AssistantItem;
    assert.equal(a.thinking, "Consider the cause.");
    assert.equal(a.text, "");
    assert.equal(a.streaming, true);
    stream(s, [
        { type: "text_delta", delta: "Because." },
        { type: "assistant_message", content: [{ type: "thinking", text: "Consider the cause." }, { type: "text", text: "Because." }], time: "" },
        { type: "turn_end", stop: "end_turn" },
        { type: "done" },
    ]);
    assert.equal(a.text, "Because.", "thinking never leaks into the answer");
    assert.equal(a.thinking, "Consider the cause.");

    st.loadHistory(s, [
        { role: "user", content: [{ type: "text", text: "why?" }], time: "" },
        { role: "assistant", content: [{ type: "thinking", text: "Hm." }, { type: "thinking", redacted: true, text: "" }, { type: "text", text: "Because." }], time: "" },
    ]);
    const h = s.items[1] as st.AssistantItem;
    assert.equal(h.text, "Because.");
    assert.equal(h.thinking, "Hm.\n\n(redacted by the provider)");
});

test("the user's own command (!cmd) is a card: its output streams, it ends with the output, or blocked with the extension's reason", () => {
    const s = st.createState();
    st.runStarted(s, run, false);
    stream(s, [
        { type: "user_bash_start", command: "make", exclude_from_context: false },
        { type: "user_bash_output", text: "cc a.c\n" },
    ]);
    const t = s.byId.get("t-ub-" + run) as st.ToolItem;
    assert.equal(t.name, "!");
    assert.equal(t.args, "make");
    assert.equal(t.status, "running");
    assert.equal(t.progress, "cc a.c\n");
    stream(s, [{ type: "user_bash", command: "make", exclude_from_context: false, output: "cc a.c", exit_code: 2, cancelled: false, truncated: false }, { type: "done" }]);
    assert.equal(t.status, "error");
    assert.equal(t.result, "cc a.c\n\nexit code 2");

    const r2 = "run-2";
    st.runStarted(s, r2, false);
    st.applyEvent(s, { type: "user_bash_start", command: "rm -rf /", exclude_from_context: true, runId: r2 });
    st.applyEvent(s, { type: "user_bash", command: "rm -rf /", exclude_from_context: true, blocked: true, reason: "no", extension: "guard", runId: r2 });
    const b = s.byId.get("t-ub-" + r2) as st.ToolItem;
    assert.equal(b.name, "!!");
    assert.equal(b.status, "error");
    assert.equal(b.result, "blocked by guard: no");
});

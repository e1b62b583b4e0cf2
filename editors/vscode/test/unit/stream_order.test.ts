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

// zot's order (docs/protocol.md r16): every tool_call of an answer, then
// turn_end, then the calls run and their results come in order.
test("several tool calls in zot's order: one card each, each finished by its own result", () => {
    const s = st.createState();
    st.runStarted(s, run, false);
    stream(s, [
        { type: "turn_start", step: 1 },
        { type: "user_message", content: [{ type: "text", text: "read both" }], time: "" },
        { type: "assistant_start" },
        { type: "text_delta", delta: "Reading both." },
        { type: "assistant_message", content: [{ type: "text", text: "Reading both." }], time: "" },
        { type: "tool_call", id: "a", name: "read", args: { path: "a.txt" } },
        { type: "tool_call", id: "b", name: "read", args: { path: "b.txt" } },
        { type: "turn_end", stop: "tool_use" },
    ]);
    const a = s.byId.get("t-a") as st.ToolItem;
    const b = s.byId.get("t-b") as st.ToolItem;
    assert.ok(a && b, "a card for each call before turn_end");
    assert.equal(a.status, "running");
    assert.equal(b.status, "pending", "b waits for a");
    stream(s, [
        { type: "tool_progress", id: "a", text: "…" },
        { type: "tool_result", id: "a", is_error: false, content: [{ type: "text", text: "alpha" }] },
    ]);
    assert.equal(a.status, "done");
    assert.equal(a.result, "alpha");
    assert.equal(b.status, "running", "b runs once a has its result");
    stream(s, [
        { type: "tool_result", id: "b", is_error: false, content: [{ type: "text", text: "beta" }] },
        { type: "turn_start", step: 2 },
        { type: "assistant_start" },
        { type: "text_delta", delta: "Both read." },
        { type: "assistant_message", content: [{ type: "text", text: "Both read." }], time: "" },
        { type: "turn_end", stop: "end_turn" },
        { type: "done" },
    ]);
    assert.equal(b.status, "done");
    assert.equal(b.result, "beta");
    assert.deepEqual(
        s.items.map((i) => i.kind),
        ["user", "assistant", "tool", "tool", "assistant"],
    );
    assert.equal(st.isRunning(s), false);
});

// A held answer (an extension intercepts assistant_message): the server
// streams only the rewritten text as one delta, and the chat shows it once.
test("a redacted answer: the chat shows the rewritten text once, no secret", () => {
    const s = st.createState();
    st.runStarted(s, run, false);
    stream(s, [
        { type: "turn_start", step: 1 },
        { type: "assistant_start" },
        { type: "text_delta", delta: "The key is [redacted], keep it." },
        { type: "assistant_message", content: [{ type: "text", text: "The key is [redacted], keep it." }], time: "" },
        { type: "turn_end", stop: "end_turn" },
        { type: "done" },
    ]);
    const texts = s.items.filter((i) => i.kind === "assistant").map((i) => i.text);
    assert.deepEqual(texts, ["The key is [redacted], keep it."]);
});

// A suppressed answer: no text delta, an assistant_message without text
// and the reason as an error notice; no empty answer is drawn.
test("a suppressed answer: no text, the reason shown", () => {
    const s = st.createState();
    st.runStarted(s, run, false);
    stream(s, [
        { type: "turn_start", step: 1 },
        { type: "assistant_start" },
        { type: "error", message: "assistant message suppressed: contains a secret" },
        { type: "assistant_message", content: [], time: "" },
        { type: "turn_end", stop: "end_turn" },
        { type: "done" },
    ]);
    const texts = s.items.filter((i) => i.kind === "assistant").map((i) => i.text);
    assert.ok(texts.every((t) => t === ""), "no answer text: " + JSON.stringify(texts));
    assert.ok(JSON.stringify(s.items).includes("contains a secret"), "the reason is shown: " + JSON.stringify(s.items));
});

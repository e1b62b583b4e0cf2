import { test, mock } from "node:test";
import assert from "node:assert/strict";
import type * as vscode from "vscode";
import { ChatViewProvider, type ChatHost } from "../../src/chatView";
import { FakeWebviewPanel, Uri } from "./fake/vscode";
import type { ZotEvent } from "../../src/lsp_ext";

const run = "run-1";
const ev = (e: Record<string, unknown>) => ({ runId: run, ...e }) as ZotEvent;

/** A chat view whose webview is ready; posted: what reached the webview. */
async function readyView() {
    const panel = new FakeWebviewPanel("zot.chat", "Chat", 1);
    const host = { snapshot: () => Promise.resolve([]) } as unknown as ChatHost;
    const chat = new ChatViewProvider(Uri.file("/ext"), host, () => {});
    chat.resolveWebviewView(panel as unknown as vscode.WebviewView);
    panel.receive({ type: "ready" });
    await new Promise((r) => setImmediate(r));
    panel.posted.length = 0;
    return { chat, posted: panel.posted as { type: string; events?: ZotEvent[]; firstDelta?: boolean }[] };
}

// The token the user waits for after Enter goes to the webview at once;
// the deltas after it wait for the batch timer (fake timers: no timer has
// fired when the first delta is posted).
test("an answer's first delta is posted at once, marked firstDelta; later deltas are batched", async () => {
    const { chat, posted } = await readyView();
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
        chat.event(ev({ type: "turn_start", step: 1 }));
        chat.event(ev({ type: "assistant_start" }));
        assert.equal(posted.length, 0, "events before the first delta wait");
        chat.event(ev({ type: "text_delta", delta: "Hel" }));
        assert.equal(posted.length, 1, "the first delta is posted before any timer fires");
        assert.deepEqual(
            posted[0].events?.map((e) => e.type),
            ["turn_start", "assistant_start", "text_delta"],
        );
        assert.equal(posted[0].firstDelta, true);

        chat.event(ev({ type: "text_delta", delta: "lo" }));
        chat.event(ev({ type: "text_delta", delta: " there" }));
        assert.equal(posted.length, 1, "later deltas wait for the batch");
        mock.timers.tick(16);
        assert.equal(posted.length, 2);
        assert.deepEqual(
            posted[1].events?.map((e) => (e.type === "text_delta" ? e.delta : e.type)),
            ["lo", " there"],
        );
        assert.equal(posted[1].firstDelta, undefined, "a batch is drawn on the next frame");

        // The next answer (after a tool call): its first delta at once again.
        chat.event(ev({ type: "assistant_start" }));
        chat.event(ev({ type: "thinking_delta", text: "hmm" }));
        assert.equal(posted.length, 3, "the next answer's first delta (thinking) is posted at once");
        assert.equal(posted[2].firstDelta, true);
        chat.event(ev({ type: "text_delta", delta: "Done." }));
        assert.equal(posted.length, 3);
        mock.timers.tick(16);
        assert.equal(posted.length, 4);
    } finally {
        mock.timers.reset();
        chat.dispose();
    }
});

// "/name args" typed in the webview asks the host for the argument's
// completions (zot/command/complete) and posts them back for that query.
test("an argQuery is answered with argItems from the host", async () => {
    const panel = new FakeWebviewPanel("zot.chat", "Chat", 1);
    const asked: string[] = [];
    const host = {
        snapshot: () => Promise.resolve([]),
        completeArgs: (name: string, args: string) => {
            asked.push(`${name} ${args}`);
            return Promise.resolve([{ value: "on" }, { value: "off", description: "writes allowed" }]);
        },
    } as unknown as ChatHost;
    const chat = new ChatViewProvider(Uri.file("/ext"), host, () => {});
    chat.resolveWebviewView(panel as unknown as vscode.WebviewView);
    panel.receive({ type: "ready" });
    await new Promise((r) => setImmediate(r));
    panel.posted.length = 0;
    panel.receive({ type: "argQuery", name: "plan", args: "o" });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(asked, ["plan o"]);
    assert.deepEqual(panel.posted, [{ type: "argItems", name: "plan", args: "o", completions: [{ value: "on" }, { value: "off", description: "writes allowed" }] }]);
});

// Sending empties the input: the host empties the draft it keeps on the
// send message itself (the webview posts no draft for it), after the
// request has gone; a draft typed right after the send is kept.
test("a send empties the kept draft after the request; a draft typed after it stays", async () => {
    const panel = new FakeWebviewPanel("zot.chat", "Chat", 1);
    const calls: string[] = [];
    const host = {
        snapshot: () => Promise.resolve([]),
        send: (text: string) => {
            calls.push(`send ${text}`);
            return Promise.resolve(true);
        },
        saveDraft: (text: string) => calls.push(`draft "${text}"`),
    } as unknown as ChatHost;
    const chat = new ChatViewProvider(Uri.file("/ext"), host, () => {});
    chat.resolveWebviewView(panel as unknown as vscode.WebviewView);
    const tick = () => new Promise((r) => setImmediate(r));
    try {
        panel.receive({ type: "ready" });
        await tick();
        panel.receive({ type: "draft", text: "hello" });
        panel.receive({ type: "send", text: "hello" });
        await tick();
        await tick();
        assert.deepEqual(calls, ['draft "hello"', "send hello", 'draft ""']);

        calls.length = 0;
        panel.receive({ type: "send", text: "again" });
        panel.receive({ type: "draft", text: "typed at once" });
        await tick();
        await tick();
        assert.deepEqual(calls, ["send again", 'draft "typed at once"'], "the later draft is not emptied");
    } finally {
        chat.dispose();
    }
});

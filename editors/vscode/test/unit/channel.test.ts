import { test, mock } from "node:test";
import assert from "node:assert/strict";
import { ChatChannel, ChannelLost, ZotError } from "../../src/webview/chat/channel";
import { FakeSocket } from "./fake/socket";
import type { ZotEvent } from "../../src/lsp_ext";

const methods = { prompt: "zot/prompt", event: "zot/event" };

async function opened(onEvents: (evs: ZotEvent[]) => void = () => {}, onClose: () => void = () => {}) {
    const ws = new FakeSocket();
    const p = ChatChannel.open(() => ws, methods, onEvents, onClose, 3000);
    ws.open();
    const ch = await p;
    assert.ok(ch, "open once the socket is");
    return { ws, ch };
}

test("a prompt goes out as zot/prompt and zot's answer comes back; events reach the chat in order", async () => {
    const events: string[] = [];
    const { ws, ch } = await opened((evs) => events.push(evs.map((ev) => (ev.type === "text_delta" ? ev.delta : ev.type)).join("+")));
    const answer = ch.prompt({ text: "hi", attachments: [] });
    assert.ok(answer, "sent on the open socket");
    assert.deepEqual(ws.sent, [{ jsonrpc: "2.0", id: 1, method: "zot/prompt", params: { text: "hi" } }]);
    ws.message({ jsonrpc: "2.0", method: "zot/event", params: { type: "assistant_start", runId: "run-1" } });
    ws.message({ jsonrpc: "2.0", method: "zot/event", params: { type: "text_delta", delta: "Hel", runId: "run-1" } });
    ws.message({ jsonrpc: "2.0", id: 1, result: { runId: "run-1", queued: false } });
    assert.deepEqual(await answer, { runId: "run-1", queued: false });
    assert.deepEqual(events, ["assistant_start", "Hel"]);

    // A batch (what waited at zot, one frame): its events in one call, in
    // order with the answer it holds.
    events.length = 0;
    const second = ch.prompt({ text: "more" });
    ws.onmessage?.({
        data: JSON.stringify([
            { jsonrpc: "2.0", method: "zot/event", params: { type: "text_delta", delta: "a", runId: "run-1" } },
            { jsonrpc: "2.0", method: "zot/event", params: { type: "text_delta", delta: "b", runId: "run-1" } },
            { jsonrpc: "2.0", id: 2, result: { runId: "run-2", queued: true, ahead: 1 } },
            { jsonrpc: "2.0", method: "zot/event", params: { type: "done", runId: "run-1" } },
        ]),
    } as MessageEvent);
    assert.deepEqual(await second, { runId: "run-2", queued: true, ahead: 1 });
    assert.deepEqual(events, ["a+b", "done"]);

    const refused = ch.prompt({ text: "again" });
    ws.message({ jsonrpc: "2.0", id: 3, error: { code: -32803, message: "zot/prompt: no model" } });
    await assert.rejects(refused!, (e: unknown) => e instanceof ZotError && e.message === "zot/prompt: no model");
});

// Never both sent: a prompt the socket took is reported when the socket
// closes before zot answers; one it cannot take is not sent (the chat
// sends it the other way).
test("a prompt lost with the socket is reported, not resent; after the close nothing is sent on it", async () => {
    let closes = 0;
    const { ws, ch } = await opened(undefined, () => closes++);
    const answer = ch.prompt({ text: "hi" });
    ws.drop();
    await assert.rejects(answer!, (e: unknown) => e instanceof ChannelLost && /may have been sent/.test(e.message));
    assert.equal(closes, 1);
    assert.equal(ch.open, false);
    assert.equal(ch.prompt({ text: "next" }), undefined, "not sent: the caller sends it the other way");
    assert.equal(ws.sent.length, 1);
    ws.drop();
    assert.equal(closes, 1, "closed once");
});

test("a socket that is refused or never opens: no channel (the chat goes on without it)", async () => {
    const refused = new FakeSocket();
    const p = ChatChannel.open(() => refused, methods, () => {}, () => {}, 3000);
    refused.onerror?.({} as Event);
    refused.onclose?.({} as CloseEvent);
    assert.equal(await p, undefined);

    assert.equal(await ChatChannel.open(() => { throw new Error("CSP"); }, methods, () => {}, () => {}, 3000), undefined);

    mock.timers.enable({ apis: ["setTimeout"] });
    try {
        const silent = new FakeSocket();
        const q = ChatChannel.open(() => silent, methods, () => {}, () => {}, 3000);
        mock.timers.tick(3000);
        assert.equal(await q, undefined);
        assert.equal(silent.closed, 1, "the late socket is closed");
        silent.open();
        assert.equal(silent.onopen, null, "and not used if it opens after all");
    } finally {
        mock.timers.reset();
    }
});

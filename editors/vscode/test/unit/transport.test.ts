import { test, mock } from "node:test";
import assert from "node:assert/strict";
import { ChatTransport, type ChannelState } from "../../src/webview/chat/transport";
import type { ChatToHost } from "../../src/webview/protocol";
import { FakeSocket } from "./fake/socket";

const methods = { prompt: "zot/prompt", event: "zot/event" };

/** A chat page: what it posted to the host, what it was told, in one ordered log. */
function pageLog() {
    const log: string[] = [];
    const posted: ChatToHost[] = [];
    const page = {
        post: (m: ChatToHost) => {
            posted.push(m);
            log.push(`host:${m.type}${m.type === "ready" && m.channel ? "(channel)" : ""}${m.type === "send" ? " " + m.text : ""}`);
        },
        events: () => log.push("events"),
        runStarted: (r: { runId: string }) => log.push(`runStarted ${r.runId}`),
        sendFailed: (text: string, error: string) => log.push(`sendFailed ${text}: ${error}`),
        state: (s: ChannelState) => log.push(`state:${s}`),
    };
    return { page, log, posted };
}

function transportWith(ws: FakeSocket, waitMs = 3000) {
    const p = pageLog();
    const t = new ChatTransport(p.page, { url: "ws://127.0.0.1:1/?token=t", methods, waitMs, socket: () => ws });
    return { ...p, t, started: t.start() };
}

const tick = () => new Promise((r) => setImmediate(r));

// The race that lost a `/mode ask` in CI: the page waits for its socket
// before it tells the host it is ready, and what the user sent meanwhile
// went to the host at once (its answer then drawn before the snapshot that
// wiped it). Now it waits, in order, and goes after ready, once.
test("while the socket connects, what the user sends waits; once it opens: ready first, then each message once, prompts on the socket", async () => {
    const ws = new FakeSocket();
    const { t, log, started } = transportWith(ws);
    t.send({ type: "send", text: "/mode ask" });
    t.send({ type: "send", text: "hello" });
    t.send({ type: "abort" });
    assert.deepEqual(log, ["state:connecting"], "nothing reaches the host or zot before the way is decided");
    assert.equal(ws.sent.length, 0);

    ws.open();
    await started;
    assert.deepEqual(log, ["state:connecting", "state:open", "host:ready(channel)", "host:send /mode ask", "host:draft", "host:abort"]);
    assert.deepEqual(
        ws.sent.map((m) => [m.method, (m.params as { text: string }).text]),
        [["zot/prompt", "hello"]],
        "the prompt went on the socket, once (the command to the host, which runs commands)",
    );
    ws.message({ jsonrpc: "2.0", id: ws.sent[0].id, result: { runId: "run-1", queued: false } });
    await tick();
    assert.equal(log.at(-1), "runStarted run-1");

    // Decided: later messages go at once.
    t.send({ type: "send", text: "/mode auto" });
    assert.equal(log.at(-1), "host:send /mode auto");
    assert.ok(t.onChannel);
});

test("a socket that fails or never opens: ready, then everything that waited goes to the host, once, in order", async () => {
    const refused = new FakeSocket();
    const a = transportWith(refused);
    a.t.send({ type: "send", text: "/mode ask" });
    a.t.send({ type: "send", text: "hello" });
    refused.onerror?.({} as Event);
    refused.onclose?.({} as CloseEvent);
    await a.started;
    assert.deepEqual(a.log, ["state:connecting", "state:failed", "host:ready", "host:send /mode ask", "host:send hello"]);
    assert.equal(refused.sent.length, 0);
    assert.equal(a.t.onChannel, false);

    mock.timers.enable({ apis: ["setTimeout"] });
    try {
        const silent = new FakeSocket();
        const b = transportWith(silent, 3000);
        b.t.send({ type: "send", text: "hello" });
        mock.timers.tick(2999);
        await tick();
        assert.deepEqual(b.log, ["state:connecting"], "still waiting for the socket");
        mock.timers.tick(1);
        await b.started;
        assert.deepEqual(b.log, ["state:connecting", "state:failed", "host:ready", "host:send hello"]);
        silent.open();
        assert.equal(silent.sent.length, 0, "a socket that opens late is not used");
    } finally {
        mock.timers.reset();
    }
});

test("a socket that dies: the prompt it took is reported (not resent); the chat asks the host for a snapshot and goes on over it", async () => {
    const ws = new FakeSocket();
    const { t, log, started, posted } = transportWith(ws);
    ws.open();
    await started;
    t.send({ type: "send", text: "hello" });
    assert.equal(ws.sent.length, 1);
    ws.drop();
    await tick();
    assert.deepEqual(log.slice(-3), ["state:closed", "host:ready", `sendFailed hello: the connection to zot closed before it answered: the message may have been sent (see the transcript)`]);
    assert.equal(posted.filter((m) => m.type === "send").length, 0, "never both: not sent again to the host");

    t.send({ type: "send", text: "again" });
    assert.equal(log.at(-1), "host:send again", "after the close, prompts go to the host");
    assert.equal(ws.sent.length, 1);
    assert.equal(t.onChannel, false);
});

test("no channel named by the page: ready at once, everything to the host", async () => {
    const p = pageLog();
    const t = new ChatTransport(p.page);
    t.send({ type: "send", text: "early" });
    await t.start();
    t.send({ type: "send", text: "hello" });
    assert.deepEqual(p.log, ["host:send early", "state:none", "host:ready", "host:send hello"]);
});

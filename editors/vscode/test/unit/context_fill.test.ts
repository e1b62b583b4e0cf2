import { test } from "node:test";
import assert from "node:assert/strict";
import { formatContext, statusText } from "../../src/webview/chat/render";
import { ZotState } from "../../src/state";
import type { ZotEvent } from "../../src/lsp_ext";

// The context window's fill beside the cost: what the last model call read
// (input and cache) of the model's window.
test("the last call's tokens of the window, beside the cost", () => {
    const s = new ZotState();
    const usage = (input: number, cacheRead: number) =>
        ({ runId: "r", type: "usage", input, output: 10, cache_read: cacheRead, cache_write: 0, cost_usd: 0.01, cumulative: { input: 100, output: 20, cache_read: 0, cache_write: 0, cost_usd: 0.02 } }) as unknown as ZotEvent;
    s.onEvent(usage(20_000, 30_000));
    const st = s.chatStatus({ state: "running" } as never);
    assert.equal(st.contextUsed, 50_000);
    assert.equal(statusText(st, false, 200_000), "↑ 100 ↓ 20 · $0.0200 · ctx 25% of 200k");
    assert.equal(statusText(st, false, undefined), "↑ 100 ↓ 20 · $0.0200", "no window known: no fill");
    s.onEvent({ runId: "r", type: "compact_done" } as unknown as ZotEvent);
    assert.equal(s.chatStatus({ state: "running" } as never).contextUsed, 0, "after a compaction the fill is unknown until the next call");
});

test("formatContext", () => {
    assert.equal(formatContext(0, 200_000), "");
    assert.equal(formatContext(1000, 0), "");
    assert.equal(formatContext(199_000, 200_000), "ctx 100% of 200k");
    assert.equal(formatContext(300_000, 200_000), "ctx 100% of 200k", "never past 100");
});

import { test } from "node:test";
import assert from "node:assert/strict";
import * as st from "../../src/webview/chat/state";
import { ItemRenderer } from "../../src/webview/chat/render";
import type { ZotEvent } from "../../src/lsp_ext";

const ev = (e: Record<string, unknown>) => ({ runId: "r1", ...e }) as ZotEvent;

// A run that failed (provider unreachable, rate limit) offers Retry on the
// error itself; an answer offers it on the answer; a new prompt takes it.
test("retryItem: the error that ended the run, else the last answer, none after a new prompt", () => {
    const s = st.createState();
    st.applyEvent(s, ev({ type: "user_message", content: [{ type: "text", text: "hi" }], time: "" }));
    st.applyEvent(s, ev({ type: "turn_start", step: 1 }));
    st.applyEvent(s, ev({ type: "turn_end", stop: "error", error: "anthropic: 429 rate limited" }));
    st.applyEvent(s, ev({ type: "error", message: "anthropic: 429 rate limited" }));
    const err = s.items[s.items.length - 1] as st.NoticeItem;
    assert.equal(err.kind, "notice");
    assert.equal(st.retryItem(s), err.id, "Retry on the error");

    // Another error notice (not a run's) does not take it.
    st.addNotice(s, "error", "Restore checkpoint: refused");
    assert.equal(st.retryItem(s), err.id);

    st.applyEvent(s, ev({ type: "user_message", content: [{ type: "text", text: "again" }], time: "" }));
    assert.equal(st.retryItem(s), undefined, "not once the user wrote again");
    st.applyEvent(s, ev({ type: "assistant_start" }));
    st.applyEvent(s, ev({ type: "assistant_message", content: [{ type: "text", text: "Hello." }], time: "" }));
    assert.equal(st.retryItem(s), s.items[s.items.length - 1].id, "the answer's Retry");
});

test("the error notice renders Retry when it is the retry item", () => {
    const s = st.createState();
    st.applyEvent(s, ev({ type: "error", message: "provider unreachable" }));
    const n = s.items[0];
    const r = new ItemRenderer();
    assert.ok(!r.html(n).includes('data-action="retry"'), "no Retry unless the view gives it");
    r.retryable = n.id;
    assert.ok(r.html(n).includes('data-action="retry"'), r.html(n));
});

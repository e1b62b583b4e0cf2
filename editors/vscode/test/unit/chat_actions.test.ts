// Attachments (chips), actions on answers and the review in the chat card:
// the pure parts of the webview and the commands behind them.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as st from "../../src/webview/chat/state";
import { atQueryAt, fuzzyFilter, parseContextBlock, splitUserContent } from "../../src/webview/chat/context";
import { ItemRenderer, renderToolDiff } from "../../src/webview/chat/render";
import * as commands from "../../src/commands";
import { fakeCtx } from "./fake/ctx";
import type { ZotEvent } from "../../src/lsp_ext";

const block = (attrs: string, body = "x") => `<context ${attrs}>\n${body}\n</context>`;

test("a context block's header becomes a chip (attributes unescaped); other text does not", () => {
    assert.deepEqual(parseContextBlock(block(`kind="file" label="calc.py" path="src/calc.py" uri="file:///w/src/calc.py"`)), {
        kind: "file",
        label: "calc.py",
        path: "src/calc.py",
        uri: "file:///w/src/calc.py",
        lines: undefined,
        server: undefined,
    });
    assert.equal(parseContextBlock(block(`kind="terminal" label="a &amp; b &#34;x&#34;"`))?.label, 'a & b "x"');
    assert.equal(parseContextBlock("<context kind=\"file\"> but not closed"), undefined);
    assert.equal(parseContextBlock("plain text"), undefined);
    const { text, chips } = splitUserContent([
        { type: "text", text: "why?" },
        { type: "text", text: block(`kind="selection" label="a.go:3-4" lines="3-4"`) },
    ]);
    assert.equal(text, "why?");
    assert.deepEqual(chips.map((c) => [c.kind, c.label, c.lines]), [["selection", "a.go:3-4", "3-4"]]);
});

test("@ completion: the word at the cursor; files by fuzzy match, the file name first", () => {
    assert.deepEqual(atQueryAt("look at @cal", 12), { start: 8, query: "cal" });
    assert.deepEqual(atQueryAt("@", 1), { start: 0, query: "" });
    assert.equal(atQueryAt("mail me@host", 12), undefined, "an @ inside a word is not a reference");
    assert.equal(atQueryAt("@calc and more", 14), undefined);
    const files = ["docs/calc-notes.md", "src/calc.py", "src/util/scale.py", "README.md", "lib/c/a/l/c.go"];
    const got = fuzzyFilter("calc", files);
    assert.equal(got[0], "src/calc.py");
    assert.ok(got.includes("lib/c/a/l/c.go"), "letters in order across directories match: " + got.join(", "));
    assert.ok(!got.includes("README.md"));
});

const ev = (e: Record<string, unknown>) => ({ runId: "run-1", ...e }) as ZotEvent;

test("a user message shows its chips and remembers its index; truncate drops it and what followed", () => {
    const s = st.createState();
    for (const e of [
        { type: "user_message", content: [{ type: "text", text: "one" }], time: "", messageIndex: 0 },
        { type: "assistant_message", content: [{ type: "text", text: "answer one" }], time: "" },
        { type: "done" },
        { type: "user_message", content: [{ type: "text", text: "two" }, { type: "text", text: block(`kind="file" label="calc.py"`) }], time: "", messageIndex: 2 },
        { type: "assistant_message", content: [{ type: "text", text: "answer two" }], time: "" },
    ]) {
        st.applyEvent(s, ev(e));
    }
    const u = s.items[2] as st.UserItem;
    assert.equal(u.text, "two", "the block is not shown as text");
    assert.deepEqual(u.chips.map((c) => c.label), ["calc.py"]);
    assert.equal(u.index, 2);
    assert.equal(st.lastAssistant(s)?.text, "answer two");
    assert.equal(st.truncate(s), true, "retry: the last prompt and its answer go");
    assert.deepEqual(s.items.map((i) => (i.kind === "user" || i.kind === "assistant" ? i.text : i.kind)), ["one", "answer one"]);
    assert.equal(st.truncate(s, 0), true, "resend of message 0");
    assert.equal(s.items.length, 0);
    assert.equal(st.truncate(s, 5), false);
    // History: indices from zot/messages, tool results are not prompts.
    st.loadHistory(s, [
        { role: "user", content: [{ type: "text", text: "a" }] },
        { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "read", args: {} }] },
        { role: "user", content: [{ type: "tool_result", call_id: "c1", is_error: false, content: [] }] },
        { role: "assistant", content: [{ type: "text", text: "b" }] },
        { role: "user", content: [{ type: "text", text: "c" }] },
    ] as never);
    assert.deepEqual(
        s.items.filter((i): i is st.UserItem => i.kind === "user").map((u) => [u.text, u.index]),
        [["a", 0], ["c", 4]],
    );
});

test("the edit card: a coloured diff, Open diff, and Accept / Reject while its review waits", () => {
    const diff = renderToolDiff("edit", { path: "a.txt", edits: [{ oldText: "hello world\n", newText: "hello zot\nbye\n" }] });
    assert.match(diff, /diff-del"><span class="diff-sign">−<\/span>hello world</);
    assert.match(diff, /diff-add"><span class="diff-sign">\+<\/span>hello zot</);
    assert.match(diff, /diff-add"><span class="diff-sign">\+<\/span>bye</);
    assert.equal(renderToolDiff("bash", { command: "ls" }), "");
    const s = st.createState();
    st.applyEvent(s, ev({ type: "tool_call", id: "t1", name: "edit", args: { path: "a.txt", edits: [{ oldText: "a", newText: "b" }] } }));
    const r = new ItemRenderer();
    const card = s.items[0];
    assert.doesNotMatch(r.html(card), /data-action="accept"/);
    assert.match(r.html(card), /data-action="diff"[^>]*>.*Open diff/);
    st.setReviewing(s, "t1", true);
    assert.match(r.html(card), /data-action="accept"[^>]*>.*Accept<\/button>/);
    assert.match(r.html(card), /data-action="reject"[^>]*>.*Reject<\/button>/);
    st.applyEvent(s, ev({ type: "tool_result", id: "t1", is_error: false, content: [{ type: "text", text: "ok" }] }));
    assert.doesNotMatch(r.html(card), /data-action="accept"/, "decided: no buttons");
});

test("messages: Copy on each, Edit on prompts zot can resend, Retry on the last answer only", () => {
    const s = st.createState();
    for (const e of [
        { type: "user_message", content: [{ type: "text", text: "q" }], time: "", messageIndex: 0 },
        { type: "assistant_message", content: [{ type: "text", text: "a" }], time: "" },
    ]) {
        st.applyEvent(s, ev(e));
    }
    const r = new ItemRenderer();
    assert.match(r.html(s.items[0]), /data-action="copy"/);
    assert.match(r.html(s.items[0]), /data-action="edit"/);
    assert.doesNotMatch(r.html(s.items[1]), /data-action="retry"/);
    r.retryable = s.items[1].id;
    assert.match(r.html(s.items[1]), /data-action="retry"/);
    const noIndex = st.addUser(s, "from an old event");
    assert.doesNotMatch(r.html(noIndex), /data-action="edit"/);
});

test("retry and resend: the chat drops the replaced messages before the request goes; the server's answer starts a run", async () => {
    // The new run's events may come before zot's answer: the cut must
    // already be in the chat when the request is sent.
    const seen: string[] = [];
    const t = fakeCtx({
        "zot/retry": () => {
            seen.push(JSON.stringify(t.posted.at(-1)));
            return { runId: "run-2", queued: false };
        },
        "zot/resend": () => {
            seen.push(JSON.stringify(t.posted.at(-1)));
            return { runId: "run-3", queued: false };
        },
    });
    await commands.retry(t.ctx);
    assert.equal(await commands.send(t.ctx, "better question", undefined, [{ kind: "file", uri: "file:///w/a.go" }], 0), true);
    assert.deepEqual(t.requests, [
        { method: "zot/retry", params: undefined },
        { method: "zot/resend", params: { messageIndex: 0, text: "better question", attachments: [{ kind: "file", uri: "file:///w/a.go" }] } },
    ]);
    const posted = t.posted.filter((m) => m.type === "truncate" || m.type === "runStarted");
    assert.deepEqual(posted, [
        { type: "truncate" },
        { type: "runStarted", runId: "run-2", queued: false, ahead: undefined },
        { type: "truncate", messageIndex: 0 },
        { type: "runStarted", runId: "run-3", queued: false, ahead: undefined },
    ]);
    assert.deepEqual(seen, ['{"type":"truncate"}', '{"type":"truncate","messageIndex":0}']);
});

test("retry and resend refused by zot: what was cut comes back, the text goes back into the input", async () => {
    const t = fakeCtx({
        "zot/retry": () => {
            throw new Error("zot/retry: a run is in progress");
        },
        "zot/resend": () => {
            throw new Error("zot/resend: messageIndex 4 is past the conversation's 2 messages");
        },
    });
    await commands.retry(t.ctx);
    assert.equal(await commands.send(t.ctx, "better question", undefined, undefined, 4), false);
    assert.deepEqual(
        t.posted.map((m) => m.type),
        ["truncate", "untruncate", "truncate", "untruncate", "sendFailed"],
    );
    assert.match(t.notices.map((n) => n.text).join("\n"), /a run is in progress/);
});

test("the chat's cut: a new run's events after it are kept; untruncate puts a refused cut back in place", () => {
    const s = st.createState();
    const texts = () => s.items.map((i) => (i.kind === "user" || i.kind === "assistant" ? i.text : i.kind));
    for (const e of [
        { type: "user_message", content: [{ type: "text", text: "one" }], time: "", messageIndex: 0 },
        { type: "assistant_message", content: [{ type: "text", text: "answer one" }], time: "" },
        { type: "user_message", content: [{ type: "text", text: "two" }], time: "", messageIndex: 2 },
        { type: "assistant_message", content: [{ type: "text", text: "answer two" }], time: "" },
        { type: "done" },
    ]) {
        st.applyEvent(s, ev(e));
    }
    // Resend of message 2: the cut, then the new run's events, then zot's answer.
    assert.equal(st.truncate(s, 2), true);
    st.applyEvent(s, ev({ runId: "run-2", type: "user_message", content: [{ type: "text", text: "two, better" }], time: "", messageIndex: 2 }));
    st.applyEvent(s, ev({ runId: "run-2", type: "assistant_message", content: [{ type: "text", text: "better answer" }], time: "" }));
    st.applyEvent(s, ev({ runId: "run-2", type: "done" }));
    st.runStarted(s, "run-2", false);
    assert.deepEqual(texts(), ["one", "answer one", "two, better", "better answer"]);
    st.untruncate(s);
    assert.deepEqual(texts(), ["one", "answer one", "two, better", "better answer"], "an accepted run's cut stays");
    // Refused: a notice came meanwhile; the cut goes back where it was.
    assert.equal(st.truncate(s), true);
    st.addNotice(s, "error", "zot/retry: refused");
    st.untruncate(s);
    assert.deepEqual(texts(), ["one", "answer one", "two, better", "better answer", "notice"]);
    assert.equal(s.byId.get(s.items[2].id), s.items[2]);
});

test("Zot: Prompt with a selection adds a selection chip to the chat instead of asking", async () => {
    const t = fakeCtx();
    const chip = { label: "main.go:2-2", attachment: { kind: "selection" as const, uri: "file:///ws/main.go", range: { start: { line: 1, character: 0 }, end: { line: 1, character: 14 } } } };
    await commands.promptCommand(t.ctx, () => chip);
    assert.deepEqual(t.requests, [], "nothing is sent yet");
    assert.deepEqual(t.posted.filter((m) => m.type === "addChip"), [{ type: "addChip", chip }]);
    assert.equal(t.reveals(), 1);
});

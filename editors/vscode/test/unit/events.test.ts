import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { resetFake, fake, FakeDocument, fireWillSave, fireClosed } from "./fake/vscode";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { RebasedWrites } from "../../src/rebased";
import { fakeCtx, stateAnswer } from "./fake/ctx";
import { installHandlers, onEvent, onMcpChanged, onNotify, onSessionChanged, onShowMessage, saveDocuments } from "../../src/events";
import type { ZotEvent } from "../../src/lsp_ext";

beforeEach(() => resetFake());

const ev = (e: Record<string, unknown>) => e as unknown as ZotEvent;

test("every server → client zot method gets a handler", () => {
    const t = fakeCtx();
    const methods: string[] = [];
    const lc = {
        onNotification: (type: { method: string }) => (methods.push(type.method), new vscode.Disposable(() => undefined)),
        onRequest: (type: { method: string }) => (methods.push(type.method), new vscode.Disposable(() => undefined)),
    };
    const ds = installHandlers(lc as never, t.ctx);
    assert.equal(ds.length, methods.length + 2, "the handlers, the extension UI they share, and the rebased writes");
    assert.deepEqual(methods.sort(), ["window/showMessage", "window/showMessageRequest", "zot/event", "zot/extensions/changed", "zot/input/get", "zot/input/set", "zot/mcp/changed", "zot/notify", "zot/panel/close", "zot/panel/open", "zot/panel/render", "zot/reviewEdit", "zot/save", "zot/session/changed", "zot/ui/request", "zot/ui/status", "zot/ui/widget"]);
});

test("window/showMessage: zot's cannot-start problem is not a second copy of the chat's banner; other messages are toasts", () => {
    const t = fakeCtx();
    const noKey = "zot cannot start: no API key for anthropic: set ANTHROPIC_API_KEY or pass --api-key; in the editor, set apiKey in initializationOptions";
    onShowMessage(t.ctx, { type: 1, message: noKey });
    assert.equal(fake.messages.length, 0, "the chat is in view: its banner has it");
    (t.chat as { visible: boolean }).visible = false;
    onShowMessage(t.ctx, { type: 1, message: noKey });
    assert.equal(fake.messages.length, 1);
    assert.match(fake.messages[0].message, /Set one with "Zot: Set API Key"/);
    assert.deepEqual(fake.messages[0].items, ["Set API Key", "Open Settings"]);
    onShowMessage(t.ctx, { type: 2, message: "zot: extensions could not start: x" });
    assert.deepEqual(fake.messages[1], { level: "warn", message: "zot: extensions could not start: x", items: [] });
});

test("zot/event goes to the chat; the end of the last run re-reads the state", async () => {
    const t = fakeCtx({ "zot/state": stateAnswer });
    onEvent(t.ctx, ev({ type: "turn_start", step: 1, runId: "run-1" }));
    assert.equal(t.state.running, true);
    assert.equal(t.statusBarDraws(), 1);
    onEvent(t.ctx, ev({ type: "text_delta", delta: "hi", runId: "run-1" }));
    assert.equal(t.statusBarDraws(), 1, "a delta does not redraw the status bar");
    assert.deepEqual(t.methods(), []);
    onEvent(t.ctx, ev({ type: "done", runId: "run-1" }));
    assert.equal(t.events.length, 3);
    assert.equal(t.state.running, false);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(t.methods(), ["zot/state"]);
    assert.equal(t.client.resumeSession, "sess-1");
});

test("zot/session/changed: the chat draws the conversation it is in now; a navigation's prompt goes to the input", async () => {
    const t = fakeCtx({ "zot/state": stateAnswer, "zot/messages": () => ({ messages: [{ role: "user", content: [{ type: "text", text: "one" }] }] }) });
    await onSessionChanged(t.ctx, { sessionId: "sess-2", messageCount: 1, reason: "tree", editorText: "two" });
    assert.deepEqual(t.methods(), ["zot/state", "zot/messages"]);
    assert.deepEqual(
        t.posted.filter((m) => m.type === "history" || m.type === "insert").map((m) => m.type),
        ["history", "insert"],
    );
    assert.deepEqual(t.posted.find((m) => m.type === "insert"), { type: "insert", text: "two" });
    assert.match(t.notices[0].text, /An extension moved the conversation in the session tree \(session sess-2, 1 messages\)/);

    const f = fakeCtx({ "zot/state": stateAnswer, "zot/messages": () => ({ messages: [] }) });
    await onSessionChanged(f.ctx, { sessionId: "sess-3", messageCount: 0, reason: "fork" });
    assert.equal(f.posted.some((m) => m.type === "insert"), false, "a fork has no prompt for the input");
    assert.match(f.notices[0].text, /forked the conversation into a new session/);

    const n = fakeCtx({ "zot/state": stateAnswer, "zot/messages": () => ({ messages: [] }) });
    await onSessionChanged(n.ctx, { sessionId: "sess-4", messageCount: 0, reason: "new" });
    assert.deepEqual(n.methods(), ["zot/state", "zot/messages"], "the new, empty session is drawn");
    assert.match(n.notices[0].text, /An extension started a new session \(session sess-4, 0 messages\)/);
});

test("zot/notify: in the chat; info also as a toast (warn and error come as showMessage)", () => {
    const t = fakeCtx();
    onNotify(t.ctx, { extension: "todo", level: "info", message: "saved" });
    onNotify(t.ctx, { extension: "todo", level: "warning", message: "slow" });
    onNotify(t.ctx, { extension: "", level: "error", message: "boom" });
    assert.deepEqual(t.notices, [
        { level: "info", text: "saved", extension: "todo" },
        { level: "warn", text: "slow", extension: "todo" },
        { level: "error", text: "boom", extension: "" },
    ]);
    assert.deepEqual(fake.messages, [{ level: "info", message: "[todo] saved", items: [] }]);
});

test("zot/save saves dirty buffers, opens others, and reports what failed", async () => {
    const dirty = new FakeDocument(vscode.Uri.file("/ws/a.go"), "a");
    dirty.isDirty = true;
    const refused = new FakeDocument(vscode.Uri.file("/ws/c.go"), "c");
    refused.isDirty = true;
    refused.saveResult = false;
    fake.documents.push(dirty, refused);
    fake.disk.set("file:///ws/b.go", "b");
    const res = await saveDocuments({ uris: ["file:///ws/a.go", "file:///ws/b.go", "file:///ws/c.go", "file:///ws/gone.go"] });
    assert.deepEqual(res.saved, ["file:///ws/a.go", "file:///ws/b.go"]);
    assert.deepEqual(res.failed?.map((f) => f.uri), ["file:///ws/c.go", "file:///ws/gone.go"]);
    assert.equal(res.failed?.[0].reason, "the editor did not save it");
    assert.match(res.failed?.[1].reason ?? "", /not found/);
    assert.equal(dirty.saves, 1);
    assert.equal(dirty.isDirty, false);
    assert.equal(fake.documents.length, 3, "b.go was opened");
    assert.deepEqual(await saveDocuments({ uris: ["file:///ws/a.go"] }), { saved: ["file:///ws/a.go"] }, "no failed field when all saved");
});

test("zot/save rebased: zot's text goes to the file, the buffer stays dirty, and the next save is not a conflict", async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zot-rebased-"));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "a.go");
    fs.writeFileSync(file, "package a\n", { mode: 0o750 });
    const known = new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 678)); // the mtime VS Code read
    fs.utimesSync(file, known, known);
    const doc = new FakeDocument(vscode.Uri.file(file), "// typed\npackage a\n");
    doc.isDirty = true;
    fake.documents.push(doc);
    const rebased = new RebasedWrites();
    t.after(() => rebased.dispose());
    const uri = vscode.Uri.file(file).toString();

    const res = await saveDocuments({ uris: [], rebased: [{ uri, text: "package a // zot\n" }] }, rebased);
    assert.deepEqual(res, { saved: [], written: [uri] });
    assert.equal(fs.readFileSync(file, "utf8"), "package a // zot\n", "zot's text on disk");
    assert.equal(fs.statSync(file).mode & 0o777, 0o750, "the file's mode kept");
    assert.equal(doc.saves, 0, "the buffer was not saved");
    assert.equal(doc.isDirty, true, "the buffer is still dirty");
    assert.notEqual(fs.statSync(file).mtimeMs, known.getTime(), "the write is a new mtime (make, watchers see it)");
    assert.deepEqual(fs.readdirSync(dir), ["a.go"], "no temp file left");

    // The user saves: the mtime VS Code knows is back, so its save is no conflict.
    await fireWillSave(doc);
    const restored = fs.statSync(file).mtimeMs;
    // VS Code compares whole milliseconds: not newer than what it read.
    assert.ok(Math.trunc(restored) <= known.getTime() && restored > known.getTime() - 1, `mtime ${restored}, VS Code read ${known.getTime()}`);

    // Only while the file holds zot's text: another writer's change keeps its mtime.
    await saveDocuments({ uris: [], rebased: [{ uri, text: "package a // zot 2\n" }] }, rebased);
    fs.writeFileSync(file, "someone else\n");
    const theirs = fs.statSync(file).mtimeMs;
    await fireWillSave(doc);
    assert.equal(fs.statSync(file).mtimeMs, theirs, "a change by someone else still gets VS Code's conflict question");

    // A closed document is forgotten.
    await saveDocuments({ uris: [], rebased: [{ uri, text: "package a // zot 3\n" }] }, rebased);
    fireClosed(doc);
    const after = fs.statSync(file).mtimeMs;
    await fireWillSave(doc);
    assert.equal(fs.statSync(file).mtimeMs, after);

    // What cannot be written is reported, not thrown.
    const gone = vscode.Uri.file(path.join(dir, "gone.go")).toString();
    const bad = await saveDocuments({ uris: [], rebased: [{ uri: gone, text: "x" }] }, rebased);
    assert.deepEqual(bad.failed?.map((f) => f.uri), [gone]);
    assert.equal(bad.written, undefined);
});

test("zot/mcp/changed: a failed or untrusted server says so in the chat, once per reason", () => {
    const t = fakeCtx();
    const srv = (state: string, lastError?: string) => ({ name: "db", scope: "project", transport: "stdio", command: "db", state, tools: [], lastError });
    onMcpChanged(t.ctx, { servers: [srv("starting")] });
    onMcpChanged(t.ctx, { servers: [srv("failed", "exited (exit status 3)")] });
    onMcpChanged(t.ctx, { servers: [srv("failed", "exited (exit status 3)")] });
    onMcpChanged(t.ctx, { servers: [srv("ready", "exited (exit status 3)")] });
    onMcpChanged(t.ctx, { servers: [srv("untrusted", "not trusted")] });
    assert.deepEqual(t.notices, [
        { level: "warn", text: "MCP server db: failed — exited (exit status 3)", extension: "mcp" },
        { level: "info", text: "MCP server db: untrusted — not trusted", extension: "mcp" },
    ]);
});

test("zot/mcp/changed: every change goes to the Zot view's MCP lines", () => {
    const t = fakeCtx();
    const srv = (state: string, tools: string[]) => ({ name: "db", scope: "project", transport: "stdio", command: "db", state, tools });
    onMcpChanged(t.ctx, { servers: [srv("starting", [])] });
    onMcpChanged(t.ctx, { servers: [srv("ready", ["mcp__db__query"])] });
    assert.deepEqual(t.posted, [
        { type: "mcp", servers: [srv("starting", [])], disabled: undefined },
        { type: "mcp", servers: [srv("ready", ["mcp__db__query"])], disabled: undefined },
    ]);
});

test("zot/input/set and zot/input/get reach the chat's input box (replace, paste; its text answered)", async () => {
    const t = fakeCtx();
    let text = "typed";
    const calls: string[] = [];
    const ctx = Object.assign(Object.create(t.ctx) as typeof t.ctx, {
        chatInput: {
            get: () => text,
            set: (s: string, mode: "replace" | "paste") => {
                calls.push(`${mode} ${s}`);
                text = mode === "paste" ? text + s : s;
            },
        },
    });
    const handlers = new Map<string, (p: unknown) => unknown>();
    const lc = {
        onNotification: (type: { method: string }, h: (p: unknown) => unknown) => (handlers.set(type.method, h), new vscode.Disposable(() => undefined)),
        onRequest: (type: { method: string }, h: (p: unknown) => unknown) => (handlers.set(type.method, h), new vscode.Disposable(() => undefined)),
    };
    installHandlers(lc as never, ctx);
    assert.deepEqual(await handlers.get("zot/input/get")!({ extension: "x" }), { text: "typed" });
    handlers.get("zot/input/set")!({ extension: "x", text: "draft", mode: "replace" });
    handlers.get("zot/input/set")!({ extension: "x", text: "!", mode: "paste" });
    assert.deepEqual(calls, ["replace draft", "paste !"]);
    assert.deepEqual(await handlers.get("zot/input/get")!({ extension: "x" }), { text: "draft!" });
});

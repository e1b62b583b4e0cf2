import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient";
import { resetFake, fake, FakeDocument } from "./fake/vscode";
import { fakeCtx, stateAnswer } from "./fake/ctx";
import * as commands from "../../src/commands";
import type { Ctx } from "../../src/ctx";
import { userProblem, CHAT_ACTIONS } from "../../src/problems";

beforeEach(() => resetFake());

test("a prompt goes to zot/prompt (// escapes a slash); the run counts as running and the chat hears it started", async () => {
    const t = fakeCtx({ "zot/prompt": () => ({ runId: "run-1", queued: true, ahead: 1 }) });
    await commands.send(t.ctx, "//etc/hosts: explain");
    assert.deepEqual(t.requests, [{ method: "zot/prompt", params: { text: "/etc/hosts: explain", context: undefined } }]);
    assert.equal(t.state.running, true);
    assert.deepEqual(t.posted, [{ type: "runStarted", runId: "run-1", queued: true, ahead: 1 }]);
    assert.ok(t.statusBarDraws() > 0);
});

test("a slash command goes to zot/command; display is shown; /model re-reads the state", async () => {
    const t = fakeCtx({
        "zot/command": () => ({ action: "display", display: "Model: m2" }),
        "zot/state": () => ({ ...stateAnswer(), model: "m2" }),
    });
    await commands.send(t.ctx, "/model m2");
    assert.deepEqual(t.requests.map((r) => [r.method, r.params]), [
        ["zot/command", { name: "model", args: "m2" }],
        ["zot/state", undefined],
    ]);
    assert.deepEqual(t.notices, [{ level: "display", text: "Model: m2", extension: undefined }]);
    assert.equal(t.state.model, "m2");
    assert.equal(t.client.resumeSession, "sess-1", "the session to resume after a crash is remembered");
    assert.deepEqual(t.posted.at(-1), { type: "status", status: t.state.chatStatus(t.client.connection) });
});

test("/clear empties the chat; /resume also reloads the transcript", async () => {
    const t = fakeCtx({
        "zot/command": (p) => ((p as { name: string }).name === "clear" ? { action: "display", display: "Cleared the conversation." } : { action: "display", display: "Resumed." }),
        "zot/state": stateAnswer,
        "zot/messages": () => ({ messages: [{ role: "user", content: [], time: "t" }] }),
    });
    await commands.runCommand(t.ctx, "clear", "");
    assert.deepEqual(t.posted.slice(0, 1), [{ type: "clear" }]);
    assert.equal(t.notices.filter((n) => n.text === "Cleared the conversation.").length, 2, "once as the result, once after the clear");
    assert.deepEqual(t.methods(), ["zot/command", "zot/state"]);
    await commands.runCommand(t.ctx, "resume", "latest");
    assert.deepEqual(t.methods().slice(2), ["zot/command", "zot/state", "zot/messages"]);
    assert.ok(t.posted.some((m) => m.type === "history" && m.messages.length === 1));
});

test("/skills picks a skill (description, body preview) and runs it as /skill:<name> args", async () => {
    const t = fakeCtx({
        "zot/skills": () => ({
            skills: [
                { name: "pdf", description: "Summarise PDFs", body: "# PDF\n\nRun extract.py.\n", path: "/p/.claude/skills/pdf/SKILL.md", source: ".claude/skills (project)" },
                { name: "review", description: "Review code", body: "Review $ARGUMENTS.", path: "/p/.zot/skills/review/SKILL.md", source: ".zot/skills (project)" },
            ],
        }),
        "zot/command": () => ({ action: "prompt", prompt: "Review main.go.", runId: "run-9", queued: false }),
    });
    fake.answers.push("review", "main.go");
    await commands.send(t.ctx, "/skills");
    const picked = fake.quickPicks[0] as { label: string; description: string; detail: string }[];
    assert.deepEqual(
        picked.map((i) => [i.label, i.description, i.detail]),
        [
            ["pdf", "Summarise PDFs", "PDF · Run extract.py."],
            ["review", "Review code", "Review $ARGUMENTS."],
        ],
    );
    assert.deepEqual(t.requests.map((r) => [r.method, r.params]), [
        ["zot/skills", undefined],
        ["zot/command", { name: "skill:review", args: "main.go" }],
    ]);
    assert.deepEqual(t.posted.at(-1), { type: "runStarted", runId: "run-9", queued: false });
});

test("a skill preview is the body's first text, flattened and cut", () => {
    assert.equal(commands.skillPreview("# Title\n\nline one\n  line two\n"), "Title · line one · line two");
    assert.equal(commands.skillPreview("x".repeat(300)).length, 200);
});

test("insert puts text in the input; a prompt command's run is tracked", async () => {
    const t = fakeCtx({ "zot/command": () => ({ action: "insert", insert: "/todos add ", runId: "run-4", queued: false }) });
    await commands.runCommand(t.ctx, "todos", "");
    assert.deepEqual(t.posted, [
        { type: "runStarted", runId: "run-4", queued: false },
        { type: "insert", text: "/todos add " },
    ]);
    assert.equal(t.state.running, true);
});

test("a command's error is shown in the chat, and as a message when the chat is hidden", async () => {
    const t = fakeCtx({ "zot/command": () => ({ action: "noop", error: "todo crashed" }) });
    t.chat.visible = false;
    await commands.runCommand(t.ctx, "todos", "");
    assert.deepEqual(t.notices, [{ level: "error", text: "/todos: todo crashed", extension: undefined }]);
    assert.deepEqual(fake.messages, [{ level: "error", message: "zot /todos: todo crashed", items: [] }]);
});

test("a message that cannot be sent goes back to the input, its error shown once", async () => {
    const t = fakeCtx({
        "zot/command": () => {
            throw new ResponseError(-32602, 'zot/command: "name" names no command ("nope")');
        },
        "zot/prompt": () => {
            throw new ResponseError(-32001, "zot cannot start: no API key for anthropic: set ANTHROPIC_API_KEY or pass --api-key");
        },
    });
    // Not zot's known problem: the error goes inline, with the text back.
    assert.equal(await commands.send(t.ctx, "/nope"), false);
    assert.deepEqual(t.posted, [{ type: "sendFailed", text: "/nope", error: '/nope: zot/command: "name" names no command ("nope")' }]);
    // zot's problem (the banner shows it with its fix): only the text back.
    t.posted.length = 0;
    t.client.connection.problem = "zot cannot start: no API key for anthropic: set ANTHROPIC_API_KEY or pass --api-key";
    assert.equal(await commands.send(t.ctx, "hi there"), false);
    assert.deepEqual(t.posted, [{ type: "sendFailed", text: "hi there", error: undefined }]);
    assert.deepEqual(t.notices, [], "no second copy of the error in the chat");
    assert.deepEqual(fake.messages, [], "no toast while the chat is visible");
    assert.equal(t.state.running, false);
    // The palette's prompt (not the chat) still reports inline.
    await commands.prompt(t.ctx, "hi");
    assert.equal(t.notices.length, 1);
});

test("zot's problems are told in the user's terms, with the button that fixes them", () => {
    const p = userProblem("zot cannot start: no API key for anthropic: set ANTHROPIC_API_KEY or pass --api-key (…); in the editor, set apiKey in initializationOptions");
    assert.match(p.text, /no API key for anthropic\. Set one with "Zot: Set API Key".* ANTHROPIC_API_KEY/);
    assert.doesNotMatch(p.text, /initializationOptions/);
    assert.deepEqual(p.actions.map((a) => a.label), ["Set API Key", "Open Settings"]);
    const bin = userProblem('zot: cannot start "/nope/zot lsp" (spawn ENOENT). Install zot or set "zot.serverPath" to the zot binary.');
    assert.deepEqual(bin.actions[0], { label: "Open Settings", command: "workbench.action.openSettings", args: ["zot.serverPath"] });
    for (const a of [...p.actions, ...bin.actions]) {
        assert.ok(CHAT_ACTIONS.has(a.command), `${a.command} may run from the chat`);
    }
});

test("reject asks why: the user's words reach zot, an empty answer sends no reason, Escape keeps the review", async () => {
    const t = fakeCtx();
    const rejected: unknown[] = [];
    const reviews = t.ctx.reviews as unknown as { count: number; reject: (u: unknown, m?: string) => Promise<void> };
    reviews.count = 1;
    reviews.reject = async (_u, m) => void rejected.push(m);
    fake.answers.push("  keep the old name ");
    await commands.rejectWithReason(t.ctx);
    fake.answers.push("");
    await commands.rejectWithReason(t.ctx);
    fake.answers.push(undefined);
    await commands.rejectWithReason(t.ctx);
    assert.deepEqual(rejected, ["keep the old name", undefined]);
});

test("abort clears the queue; with nothing running the chat says so", async () => {
    let aborted: string | null = "run-1";
    const t = fakeCtx({ "zot/abort": () => ({ aborted, dropped: [] }) });
    await commands.abort(t.ctx);
    assert.deepEqual(t.requests, [{ method: "zot/abort", params: { clearQueue: true } }]);
    assert.deepEqual(t.notices, []);
    aborted = null;
    await commands.abort(t.ctx);
    assert.deepEqual(t.notices, [{ level: "info", text: "Nothing is running.", extension: undefined }]);
});

test("setModel and setMode take the server's answer, report its error, and re-read the state", async () => {
    const t = fakeCtx({
        "zot/setModel": () => ({ model: "m2" }),
        "zot/setPermissionMode": () => {
            throw new ResponseError(-32602, 'zot/setPermissionMode: "mode" must be auto, ask or readonly, not "yolo"');
        },
        "zot/state": () => ({ ...stateAnswer(), model: "m2" }),
    });
    await commands.setModel(t.ctx, "m2");
    assert.equal(t.state.model, "m2");
    await commands.setMode(t.ctx, "yolo" as "ask");
    assert.match(t.notices[0].text, /must be auto, ask or readonly/);
    assert.deepEqual(t.methods(), ["zot/setModel", "zot/state", "zot/setPermissionMode", "zot/state"]);
});

test("resume a session: a quick pick of the sessions (empty ones left out), then zot/session/resume and the transcript", async () => {
    const sessions = [
        { id: "s2", path: "/x/s2", cwd: "/ws", created: "2026-01-02T00:00:00Z", modified: "2026-01-02T00:00:00Z", title: "second", messages: 4 },
        // Never written in: not history (it would be the "(untitled)" picked below).
        { id: "s3", path: "/x/s3", cwd: "/ws", created: "2026-01-03T00:00:00Z", modified: "2026-01-03T00:00:00Z", title: "", messages: 0 },
        { id: "s1", path: "/x/s1", cwd: "/ws", created: "2026-01-01T00:00:00Z", modified: "2026-01-01T00:00:00Z", title: "", messages: 2 },
    ];
    const t = fakeCtx({
        "zot/sessions": () => ({ sessions, current: "s2" }),
        "zot/session/resume": (p) => ({ sessionId: (p as { id: string }).id, messageCount: 2 }),
        "zot/state": stateAnswer,
        "zot/messages": () => ({ messages: [] }),
    });
    fake.answers.push("(untitled)");
    await commands.resumeSession(t.ctx);
    assert.deepEqual(t.requests[1], { method: "zot/session/resume", params: { id: "s1" } });
    assert.deepEqual(t.methods().slice(2), ["zot/state", "zot/messages"]);
    assert.deepEqual(t.notices.at(-1), { level: "info", text: "Resumed session s1 (2 messages).", extension: undefined });
});

test("Zot: Prompt sends the file and the selection as context", async () => {
    const t = fakeCtx({ "zot/prompt": () => ({ runId: "run-1", queued: false }) });
    const doc = new FakeDocument(vscode.Uri.file("/ws/src/main.go"), "package main\nfunc main() {}\n");
    const at = (line: number, character: number) => ({ line, character });
    const selection = { start: at(1, 0), end: at(1, 14), isEmpty: false };
    (vscode.window as { activeTextEditor: unknown }).activeTextEditor = {
        document: { uri: doc.uri, getText: () => "func main() {}" },
        selection,
    };
    fake.answers.push("explain");
    try {
        await commands.promptCommand(t.ctx);
    } finally {
        (vscode.window as { activeTextEditor: unknown }).activeTextEditor = undefined;
    }
    assert.deepEqual(t.requests, [
        {
            method: "zot/prompt",
            params: { text: "explain", context: { uri: "file:///ws/src/main.go", range: { start: at(1, 0), end: at(1, 14) }, selectionText: "func main() {}" } },
        },
    ]);
    assert.equal(t.reveals(), 1);
});

test("palette commands report errors as a message (zot not running)", async () => {
    const t = fakeCtx();
    t.client.running = () => {
        throw new Error('zot: cannot start "zot lsp"');
    };
    const ds = commands.registerCommands(t.ctx as Ctx & { focusChat(): unknown; showOutput(): unknown });
    assert.deepEqual(
        [...fake.commands.keys()].sort(),
        ["zot.abort", "zot.focusChat", "zot.newSession", "zot.openFile", "zot.prompt", "zot.reloadExtensions", "zot.restartServer", "zot.resumeSession", "zot.review.accept", "zot.review.reject", "zot.runCommand", "zot.runShortcut", "zot.selectModel", "zot.setPermissionMode", "zot.showExtensions", "zot.showMcpServers", "zot.showOutput", "zot.skills"],
    );
    await vscode.commands.executeCommand("zot.abort");
    assert.deepEqual(fake.messages, [{ level: "error", message: 'zot: zot: cannot start "zot lsp"', items: [] }]);
    await vscode.commands.executeCommand("zot.restartServer");
    assert.equal(t.client.restarts, 1);
    for (const d of ds) {
        d.dispose();
    }
    assert.equal(fake.commands.size, 0);
});

test("MCP servers: a line per server; picking one offers Restart, which zot/mcp/restart does", async () => {
    const fs = { name: "fs", scope: "project", transport: "stdio", command: "mcp-server-filesystem .", state: "failed", tools: [], lastError: "exited" };
    const t = fakeCtx({
        "zot/mcp": () => ({ servers: [{ name: "everything", scope: "flag", transport: "stdio", command: "x", state: "ready", tools: ["mcp__everything__echo"] }, fs] }),
        "zot/mcp/restart": (p) => ({ servers: [{ ...fs, state: "ready", name: (p as { name: string }).name }] }),
    });
    fake.answers.push(1, "Restart fs");
    await commands.showMcpServers(t.ctx);
    assert.deepEqual(t.requests, [
        { method: "zot/mcp", params: undefined },
        { method: "zot/mcp/restart", params: { name: "fs" } },
    ]);
    assert.deepEqual(fake.messages, [{ level: "info", message: "zot: MCP server fs: ready", items: [] }]);
});

test("MCP servers: the Zot view's restart button restarts that server and shows its new state", async () => {
    const fs = { name: "fs", scope: "project", transport: "stdio", command: "mcp-server-filesystem .", state: "failed", tools: [], lastError: "exited" };
    const t = fakeCtx({ "zot/mcp/restart": (p) => ({ servers: [{ ...fs, state: "ready", tools: ["mcp__fs__read_file"], name: (p as { name: string }).name }] }) });
    await commands.restartMcp(t.ctx, "fs");
    assert.deepEqual(t.requests, [{ method: "zot/mcp/restart", params: { name: "fs" } }]);
    assert.deepEqual(t.posted, [{ type: "mcp", servers: [{ ...fs, state: "ready", tools: ["mcp__fs__read_file"] }], disabled: undefined }]);
});

test("MCP servers: none configured, or MCP off, is said so", async () => {
    const t = fakeCtx({ "zot/mcp": () => ({ servers: [], disabled: true }) });
    await commands.showMcpServers(t.ctx);
    assert.match(fake.messages[0].message, /MCP servers are off/);
});

test("!cmd and !!cmd go to zot/userBash (the second kept out of the conversation); the run counts as running", async () => {
    const t = fakeCtx({ "zot/userBash": () => ({ runId: "run-7", queued: false }) });
    await commands.send(t.ctx, "!git status");
    await commands.send(t.ctx, "!! ls -la");
    assert.deepEqual(t.requests, [
        { method: "zot/userBash", params: { command: "git status", excludeFromContext: undefined } },
        { method: "zot/userBash", params: { command: "ls -la", excludeFromContext: true } },
    ]);
    assert.equal(t.state.running, true);
    assert.deepEqual(t.posted[0], { type: "runStarted", runId: "run-7", queued: false, ahead: undefined });
    assert.equal(commands.parseUserBash("!"), undefined);
    assert.equal(commands.parseUserBash("hello !world"), undefined);
});

test("extension shortcuts: a keybinding's key (any spelling) or the palette's pick runs the shortcut's command", async () => {
    const exts = {
        extensions: [
            { name: "todo", source: "global", dir: "/t", state: "loaded", commands: ["todos"], tools: [] },
            { name: "pi-gate", source: "ext", dir: "/g", state: "loaded", commands: ["shortcut:ctrl-shift-y"], tools: [], shortcuts: [{ key: "ctrl+shift+y", command: "shortcut:ctrl-shift-y", description: "Marks it" }] },
        ],
        commands: [],
    };
    const t = fakeCtx({ "zot/extensions": () => exts, "zot/command": () => ({ action: "noop" }) });
    await commands.runShortcut(t.ctx, "Shift+Ctrl+Y");
    await commands.runShortcut(t.ctx, { key: "ctrl-shift-y" });
    fake.answers.push(0);
    await commands.runShortcut(t.ctx);
    assert.deepEqual(
        t.requests.filter((r) => r.method === "zot/command"),
        [1, 2, 3].map(() => ({ method: "zot/command", params: { name: "shortcut:ctrl-shift-y", args: "" } })),
    );
    assert.deepEqual(
        (fake.quickPicks[0] as { label: string; description: string; detail: string }[]).map((i) => [i.label, i.description, i.detail]),
        [["ctrl+shift+y", "pi-gate", "Marks it"]],
    );
    // A key no extension registered: said so, with the ones there are; nothing runs.
    await commands.runShortcut(t.ctx, "ctrl+alt+q");
    assert.equal(t.requests.filter((r) => r.method === "zot/command").length, 3);
    assert.deepEqual(fake.messages, [{ level: "error", message: "zot: no extension shortcut ctrl+alt+q (registered: ctrl+shift+y (pi-gate)).", items: [] }]);
});

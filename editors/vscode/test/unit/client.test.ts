import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as lc from "vscode-languageclient/node";
import { resetFake, fake } from "./fake/vscode";
import * as vscode from "vscode";
import { ZotClient, MAX_RESTARTS, findServer, type ClientFactory } from "../../src/client";
import { PROTOCOL_VERSION, PROTOCOL_REVISION, type ServerInfo, type InitializationOptions } from "../../src/lsp_ext";
import { bundledPiRuntime, bundledServer, withPiRuntime } from "../../src/config";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

/** A language client that starts at once (or fails) without a process. */
class FakeLanguageClient {
    state = lc.State.Stopped;
    initializeResult?: { capabilities: { experimental: { zot: ServerInfo } } };
    features: lc.StaticFeature[] = [];
    stops = 0;
    private readonly changed = new vscode.EventEmitter<lc.StateChangeEvent>();
    constructor(
        readonly server: lc.ServerOptions,
        readonly options: lc.LanguageClientOptions,
        private readonly behaviour: { fail?: Error; info?: Partial<ServerInfo>; noInfo?: boolean },
    ) {}
    registerFeature(f: lc.StaticFeature): void {
        this.features.push(f);
    }
    async start(): Promise<void> {
        if (this.behaviour.fail) {
            throw this.behaviour.fail;
        }
        const info: ServerInfo = { protocolVersion: PROTOCOL_VERSION, protocol: PROTOCOL_REVISION, version: "0.1.0", provider: "anthropic", model: "m1", cwd: "/ws", permissionMode: "auto", commands: [], ...this.behaviour.info };
        this.initializeResult = this.behaviour.noInfo ? ({ capabilities: { experimental: {} } } as unknown as typeof this.initializeResult) : { capabilities: { experimental: { zot: info } } };
        this.state = lc.State.Running;
    }
    async stop(): Promise<void> {
        this.stops++;
        this.state = lc.State.Stopped;
    }
    async dispose(): Promise<void> {}
    onDidChangeState(l: (e: lc.StateChangeEvent) => void): vscode.Disposable {
        return this.changed.event(l);
    }
}

function setup(behaviour: { fail?: Error; info?: Partial<ServerInfo>; missing?: boolean; noInfo?: boolean } = {}, extensionPath?: string) {
    const made: FakeLanguageClient[] = [];
    const factory: ClientFactory = (s, c) => {
        const f = new FakeLanguageClient(s, c, behaviour);
        made.push(f);
        return f as unknown as lc.LanguageClient;
    };
    const installed: unknown[] = [];
    const out = vscode.window.createOutputChannel("zot", { log: true });
    const looked: string[] = [];
    const client = new ZotClient(out, (c) => (installed.push(c), []), factory, (cmd) => (looked.push(cmd), !behaviour.missing), {
        extensionPath,
        version: "0.3.0",
    });
    const states: string[] = [];
    client.onState((s) => states.push(s));
    let started = 0;
    client.onStarted(() => started++);
    return { client, made, installed, states, looked, started: () => started, out: out as unknown as { lines: string[] } };
}

beforeEach(() => resetFake());

test("start: runs zot lsp with the settings, advertises zot's capabilities, reads experimental.zot", async () => {
    fake.settings.set("zot.serverPath", "/opt/zot");
    fake.settings.set("zot.serverArgs", ["--no-session"]);
    fake.settings.set("zot.model", "m2");
    fake.settings.set("zot.permissionMode", "ask");
    const t = setup({ info: { version: "9.9.9" } });
    await t.client.start();
    assert.equal(t.made.length, 1);
    const f = t.made[0];
    const run = (f.server as { run: lc.Executable }).run;
    assert.equal(run.command, "/opt/zot");
    assert.deepEqual(run.args, ["lsp", "--no-session"]);
    const opts = (f.options.initializationOptions as () => InitializationOptions)();
    assert.deepEqual(opts, { model: "m2", permissionMode: "ask" });
    // As the language client's own progress feature (registered before
    // ours) leaves them.
    const caps: lc.ClientCapabilities = { window: { workDoneProgress: true, showMessage: {} } };
    for (const feat of f.features) {
        feat.fillClientCapabilities(caps);
    }
    assert.deepEqual(caps.experimental, { zot: { reviewEdit: true, save: true, panels: true, notify: true, ui: true, input: true, editor: true } });
    // Runs show in the status bar item and the chat, not as LSP progress
    // too (a request and three or more window messages per run).
    assert.deepEqual(caps.window, { workDoneProgress: false, showMessage: {} });
    assert.deepEqual(t.installed, [f]);
    assert.deepEqual(t.states, ["starting", "running"]);
    assert.equal(t.started(), 1);
    assert.deepEqual(t.client.connection, { state: "running", problem: undefined, version: "9.9.9" });
    assert.equal(t.client.running(), f);
    assert.deepEqual(fake.messages, []);
});

/** Starts a client against a server whose experimental.zot is info; returns what the user saw. */
async function startAgainst(info: Partial<ServerInfo>, opts: { noInfo?: boolean; serverPath?: string } = {}) {
    fake.settings.set("zot.serverPath", opts.serverPath ?? "/opt/zot");
    const t = setup({ info, noInfo: opts.noInfo });
    await t.client.start();
    return t;
}

/** The mismatch was refused: one message, state error, no server left, nothing installed into it. */
function assertRefused(t: Awaited<ReturnType<typeof startAgainst>>, pattern: RegExp) {
    assert.equal(fake.messages.length, 1, `one message: ${JSON.stringify(fake.messages)}`);
    assert.equal(fake.messages[0].level, "error");
    assert.match(fake.messages[0].message, pattern);
    assert.deepEqual(t.states, ["starting", "error"]);
    assert.equal(t.client.problem, fake.messages[0].message);
    assert.equal(t.made[0].stops, 1, "the server is stopped");
    assert.equal(t.client.client, undefined);
    assert.equal(t.started(), 0, "nothing runs on it (no requests, so no MethodNotFound)");
    assert.throws(() => t.client.running(), (e: Error) => pattern.test(e.message));
}

test("handshake: a server older than the revision the extension needs is refused with one message naming both versions and the fix", async () => {
    const t = await startAgainst({ version: "0.2.1", protocol: PROTOCOL_REVISION - 1 });
    assertRefused(
        t,
        new RegExp(
            `^zot 0\\.2\\.1 \\(/opt/zot\\) implements protocol revision ${PROTOCOL_REVISION - 1}; this extension \\(zot 0\\.3\\.0\\) needs revision ${PROTOCOL_REVISION} or newer\\. Update the zot that "zot\\.serverPath" names\\.$`,
        ),
    );
});

test("handshake: a server from before the handshake (no experimental.zot.protocol) is refused the same way", async () => {
    const t = await startAgainst({ version: "0.1.0", protocol: undefined }, { serverPath: "zot" });
    assertRefused(t, /^zot 0\.1\.0 \(zot\) implements an older protocol revision than 11; this extension \(zot 0\.3\.0\) needs revision \d+ or newer\. Update the zot that "zot\.serverPath" names/);
});

test("handshake: a newer major protocol version asks to update the extension; an older one, zot", async () => {
    let t = await startAgainst({ version: "2.0.0", protocolVersion: PROTOCOL_VERSION + 1 });
    assertRefused(t, new RegExp(`zot 2\\.0\\.0 \\(/opt/zot\\) speaks protocol version ${PROTOCOL_VERSION + 1}; this extension \\(zot 0\\.3\\.0\\) speaks ${PROTOCOL_VERSION}\\. Update the zot extension\\.$`));
    resetFake();
    t = await startAgainst({ protocolVersion: PROTOCOL_VERSION - 1 });
    assertRefused(t, /speaks protocol version 0; .* Update the zot that "zot\.serverPath" names/);
});

test("handshake: a server without experimental.zot is not zot", async () => {
    const t = await startAgainst({}, { noInfo: true });
    assertRefused(t, /"\/opt\/zot lsp" is not zot's language server/);
});

test("handshake: a newer revision of the same major version is fine (revisions only add)", async () => {
    const t = await startAgainst({ protocol: PROTOCOL_REVISION + 5 });
    assert.deepEqual(t.states, ["starting", "running"]);
    assert.deepEqual(fake.messages, []);
    assert.equal(t.started(), 1);
});

/** An extension directory with a bin/zot (mode: its permissions). */
function extensionDir(mode = 0o755): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zot-ext-"));
    fs.mkdirSync(path.join(dir, "bin"));
    fs.writeFileSync(path.join(dir, "bin", "zot"), "#!/bin/sh\n", { mode });
    return dir;
}

test("which zot: zot.serverPath, else the one bundled in the package, else zot on PATH", async () => {
    const dir = extensionDir();
    try {
        const run = (t: ReturnType<typeof setup>) => (t.made.at(-1)!.server as { run: lc.Executable }).run.command;
        let t = setup({}, dir);
        await t.client.start();
        assert.equal(run(t), path.join(dir, "bin", "zot"), "no setting: the bundled zot");
        assert.match(t.out.lines.join("\n"), /starting .*bin\/zot lsp \(from bundled with the extension\)/);

        fake.settings.set("zot.serverPath", "/opt/zot");
        t = setup({}, dir);
        await t.client.start();
        assert.equal(run(t), "/opt/zot", "the setting wins over the bundled zot");

        fake.settings.set("zot.serverPath", "");
        t = setup({}, fs.mkdtempSync(path.join(os.tmpdir(), "zot-universal-")));
        await t.client.start();
        assert.equal(run(t), "zot", "the universal package: zot on PATH");
        assert.match(t.out.lines.join("\n"), /starting zot lsp \(from PATH\)/);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("handshake: with a bundled zot, an old zot.serverPath is told it can be cleared", async () => {
    const dir = extensionDir();
    try {
        fake.settings.set("zot.serverPath", "/opt/old/zot");
        const t = setup({ info: { protocol: 1 } }, dir);
        await t.client.start();
        assertRefused(t, /Update the zot that "zot\.serverPath" names, or clear "zot\.serverPath" to use the zot bundled with this extension\.$/);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("bundledServer: an executable bin/zot; one that lost its executable bit gets it back; none in the universal package", () => {
    const dir = extensionDir(0o644);
    try {
        const exe = path.join(dir, "bin", "zot");
        assert.equal(bundledServer(dir, "linux"), exe);
        assert.equal(fs.statSync(exe).mode & 0o111, 0o111, "made executable");
        assert.equal(bundledServer(dir, "win32"), undefined, "Windows looks for bin/zot.exe");
        fs.writeFileSync(path.join(dir, "bin", "zot.exe"), "MZ");
        assert.equal(bundledServer(dir, "win32"), path.join(dir, "bin", "zot.exe"));
        assert.equal(bundledServer(path.join(dir, "nowhere"), "linux"), undefined);
        assert.equal(bundledServer(undefined), undefined);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("bundledPiRuntime: bin/pi-runtime with its node_modules, named to zot unless the user's environment names one", () => {
    const dir = extensionDir(0o755);
    try {
        assert.equal(bundledPiRuntime(dir), undefined, "the universal package has none");
        const rt = path.join(dir, "bin", "pi-runtime");
        fs.mkdirSync(path.join(rt, "node_modules", "jiti"), { recursive: true });
        assert.equal(bundledPiRuntime(dir), undefined, "no host.js: not a runtime");
        fs.writeFileSync(path.join(rt, "host.js"), "");
        assert.equal(bundledPiRuntime(dir), rt);
        assert.equal(bundledPiRuntime(undefined), undefined);
        assert.equal(withPiRuntime({ PATH: "/bin" }, rt).ZOT_PI_RUNTIME, rt);
        assert.equal(withPiRuntime({ ZOT_PI_RUNTIME: "/mine" }, rt).ZOT_PI_RUNTIME, "/mine");
        assert.equal(withPiRuntime({}, undefined).ZOT_PI_RUNTIME, undefined);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("the agent's start error (no API key) is the problem, the client still runs", async () => {
    const t = setup({ info: { error: "zot cannot start: no API key for anthropic" } });
    await t.client.start();
    assert.deepEqual(t.client.connection.state, "running");
    assert.equal(t.client.problem, "zot cannot start: no API key for anthropic");
});

test("a missing binary: state error, a message that says what to set, requests fail with it", async () => {
    fake.settings.set("zot.serverPath", "/nope/zot");
    fake.answers.push("Open Settings");
    const t = setup({ fail: new Error("spawn /nope/zot ENOENT") });
    await t.client.start();
    assert.deepEqual(t.states, ["starting", "error"]);
    assert.match(t.client.problem ?? "", /cannot start "\/nope\/zot lsp" .*set "zot.serverPath"/);
    assert.equal(fake.messages[0].level, "error");
    assert.deepEqual(fake.messages[0].items, ["Open Settings", "Show Output"]);
    assert.throws(() => t.client.running(), /zot.serverPath/);
    assert.equal(t.client.client, undefined);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(fake.executed.at(-1), { command: "workbench.action.openSettings", args: ["zot.serverPath"] });
});

test("a binary that is not there: one message with the fix; the language client is never made (no second, raw toast)", async () => {
    fake.settings.set("zot.serverPath", "/nope/zot");
    const t = setup({ missing: true });
    await t.client.start();
    assert.deepEqual(t.looked, ["/nope/zot"]);
    assert.equal(t.made.length, 0);
    assert.deepEqual(t.states, ["starting", "error"]);
    assert.equal(fake.messages.length, 1);
    assert.match(fake.messages[0].message, /cannot start "\/nope\/zot lsp": no such executable.*"zot.serverPath"/);
    assert.deepEqual(fake.messages[0].items, ["Open Settings", "Show Output"]);
});

test("findServer: a path must be an executable file; a bare name is looked up on PATH", async () => {
    const fs = await import("fs");
    const os = await import("os");
    const path = await import("path");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zot-find-"));
    const exe = path.join(dir, "zot");
    fs.writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "plain"), "", { mode: 0o644 });
    try {
        assert.equal(findServer(exe, {}), true);
        assert.equal(findServer(path.join(dir, "plain"), {}), false);
        assert.equal(findServer(dir, {}), false, "a directory");
        assert.equal(findServer("zot", { PATH: `/nonexistent${path.delimiter}${dir}` }), true);
        assert.equal(findServer("zot", { PATH: "/nonexistent" }), false);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("crashes: restarted up to MAX_RESTARTS times resuming the session, then left stopped with a message", async () => {
    const t = setup();
    await t.client.start();
    t.client.resumeSession = "sess-1";
    const f = t.made[0];
    const handler = f.options.errorHandler!;
    const initOpts = f.options.initializationOptions as () => InitializationOptions;
    assert.equal(initOpts().resume, undefined, "a normal start resumes nothing");
    for (let i = 1; i <= MAX_RESTARTS; i++) {
        const r = await handler.closed();
        assert.equal(r.action, lc.CloseAction.Restart, `crash ${i}`);
        assert.equal(t.client.state, "starting");
        assert.equal(initOpts().resume, "sess-1", "the restarted server resumes the session");
        assert.equal(t.client.resumedSession, "sess-1");
        await new Promise((r) => setTimeout(r, 0)); // afterRestart
        assert.equal(t.client.state, "running");
        assert.equal(t.client.restarts, i);
    }
    assert.equal(t.started(), 1 + MAX_RESTARTS);
    const last = await handler.closed();
    assert.equal(last.action, lc.CloseAction.DoNotRestart);
    assert.equal(t.client.state, "stopped");
    assert.match(t.client.problem ?? "", new RegExp(`stopped ${MAX_RESTARTS + 1} times in 3 minutes`));
    assert.throws(() => t.client.running(), /will not be restarted/);
});

test("restart stops the old client and starts a new one", async () => {
    const t = setup();
    await t.client.start();
    await t.client.restart();
    assert.equal(t.made.length, 2);
    assert.equal(t.made[0].stops, 1);
    assert.equal(t.client.client, t.made[1]);
    assert.deepEqual(t.states, ["starting", "running", "stopped", "starting", "running"]);
});

test("ready: a message sent while zot restarts (the settings toast) goes to the new process", async () => {
    const t = setup();
    await t.client.start();
    const restarting = t.client.restart();
    assert.throws(() => t.client.running(), "the old process is going: running() alone would fail the message");
    const c = await t.client.ready();
    assert.equal(c, t.made[1], "the new client, not an error");
    await restarting;
});

test("ready: during a crash restart it waits for the process the language client starts again", async () => {
    const t = setup();
    await t.client.start();
    await t.made[0].options.errorHandler!.closed();
    assert.equal(t.client.state, "starting");
    assert.equal(await t.client.ready(), t.made[0]);
    assert.equal(t.client.state, "running");
});

test("ready: a start that fails gives its error, not a wait", async () => {
    const t = setup({ missing: true });
    await assert.rejects(t.client.ready(), /zot is not running/);
    const starting = t.client.start();
    await assert.rejects(t.client.ready(), /no such executable/);
    await starting;
});

test("zot.piFlags reach zot as initializationOptions.piFlags (strings, booleans and numbers)", async () => {
    fake.settings.set("zot.serverPath", "/opt/zot");
    fake.settings.set("zot.piFlags", { plan: true, greeting: "hi", depth: 2, bad: { x: 1 } });
    const t = setup({});
    await t.client.start();
    const opts = (t.made[0].options.initializationOptions as () => InitializationOptions)();
    assert.deepEqual(opts.piFlags, { plan: true, greeting: "hi", depth: 2 });
});

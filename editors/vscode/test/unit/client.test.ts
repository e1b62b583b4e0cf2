import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as lc from "vscode-languageclient/node";
import { resetFake, fake } from "./fake/vscode";
import * as vscode from "vscode";
import { ZotClient, MAX_RESTARTS, findServer, type ClientFactory } from "../../src/client";
import { PROTOCOL_VERSION, type ServerInfo, type InitializationOptions } from "../../src/lsp_ext";

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
        private readonly behaviour: { fail?: Error; info?: Partial<ServerInfo> },
    ) {}
    registerFeature(f: lc.StaticFeature): void {
        this.features.push(f);
    }
    async start(): Promise<void> {
        if (this.behaviour.fail) {
            throw this.behaviour.fail;
        }
        const info: ServerInfo = { protocolVersion: PROTOCOL_VERSION, version: "0.1.0", provider: "anthropic", model: "m1", cwd: "/ws", permissionMode: "auto", commands: [], ...this.behaviour.info };
        this.initializeResult = { capabilities: { experimental: { zot: info } } };
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

function setup(behaviour: { fail?: Error; info?: Partial<ServerInfo>; missing?: boolean } = {}) {
    const made: FakeLanguageClient[] = [];
    const factory: ClientFactory = (s, c) => {
        const f = new FakeLanguageClient(s, c, behaviour);
        made.push(f);
        return f as unknown as lc.LanguageClient;
    };
    const installed: unknown[] = [];
    const out = vscode.window.createOutputChannel("zot", { log: true });
    const looked: string[] = [];
    const client = new ZotClient(out, (c) => (installed.push(c), []), factory, (cmd) => (looked.push(cmd), !behaviour.missing));
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
    const caps: lc.ClientCapabilities = {};
    for (const feat of f.features) {
        feat.fillClientCapabilities(caps);
    }
    assert.deepEqual(caps.experimental, { zot: { reviewEdit: true, save: true, panels: true, notify: true, ui: true } });
    assert.deepEqual(t.installed, [f]);
    assert.deepEqual(t.states, ["starting", "running"]);
    assert.equal(t.started(), 1);
    assert.deepEqual(t.client.connection, { state: "running", problem: undefined, version: "9.9.9" });
    assert.equal(t.client.running(), f);
    assert.deepEqual(fake.messages, []);
});

test("a server of another protocol version gets a warning naming both", async () => {
    const t = setup({ info: { protocolVersion: PROTOCOL_VERSION + 1 } });
    await t.client.start();
    assert.equal(fake.messages.length, 1);
    assert.equal(fake.messages[0].level, "warn");
    assert.match(fake.messages[0].message, new RegExp(`protocol version ${PROTOCOL_VERSION + 1}; this extension speaks ${PROTOCOL_VERSION}`));
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

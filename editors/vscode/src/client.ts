// The language client that runs `zot lsp`: start, stop, restart, crash
// handling (bounded restarts, then a clear message) and the zot client
// capabilities.

import * as vscode from "vscode";
import * as lc from "vscode-languageclient/node";
import * as ext from "./lsp_ext";
import * as fs from "fs";
import * as path from "path";
import { bundledPiRuntime, bundledServer, launch, type ServerSource } from "./config";
import { incompatibility } from "./handshake";
import type { ClientState, Connection } from "./state";

export type { ClientState } from "./state";
export { errorMessage } from "./errors";

/** How long a message waits for zot to finish starting (ready). */
export const START_WAIT_MS = 60_000;
/** Restarts allowed within RESTART_WINDOW_MS before zot is left stopped. */
export const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60 * 1000;


/** Advertises what this client implements of zot's server → client requests. */
class ZotCapabilities implements lc.StaticFeature {
    getState(): lc.FeatureState {
        return { kind: "static" };
    }
    fillClientCapabilities(caps: lc.ClientCapabilities): void {
        const zot: ext.ClientCapabilities = { reviewEdit: true, save: true, panels: true, notify: true, ui: true, input: true, editor: true };
        caps.experimental = { ...(caps.experimental as object), zot };
        // No window/workDoneProgress for runs (registered after the
        // client's own features, this wins over its progress feature):
        // the status bar item and the chat already show a run, and each
        // run's progress cost a request to the editor, three or more
        // messages to the window and a second spinner in the status bar.
        caps.window = { ...caps.window, workDoneProgress: false };
    }
    initialize(): void {}
    clear(): void {}
}

/**
 * The LSP trace, into the "zot" output when zot.trace.server is not "off".
 * vscode-languageclient 11 traces only into a channel whose log level is
 * Trace; this one reports Trace while the setting asks for a trace, so the
 * setting works without "Developer: Set Log Level".
 */
class TraceChannel implements vscode.LogOutputChannel {
    private readonly changed = new vscode.EventEmitter<vscode.LogLevel>();
    readonly onDidChangeLogLevel = this.changed.event;
    private readonly sub: vscode.Disposable;

    constructor(private readonly out: vscode.LogOutputChannel) {
        this.sub = vscode.workspace.onDidChangeConfiguration((e) => {
            if (e.affectsConfiguration("zot.trace.server")) {
                this.changed.fire(this.logLevel);
            }
        });
    }
    get logLevel(): vscode.LogLevel {
        const t = vscode.workspace.getConfiguration("zot").get<string>("trace.server", "off");
        return t === "off" ? vscode.LogLevel.Off : vscode.LogLevel.Trace;
    }
    get name(): string {
        return this.out.name;
    }
    trace(message: string): void {
        this.out.info(message);
    }
    debug(message: string): void {
        this.out.info(message);
    }
    info(message: string): void {
        this.out.info(message);
    }
    warn(message: string): void {
        this.out.warn(message);
    }
    error(error: string | Error): void {
        this.out.error(error);
    }
    append(value: string): void {
        this.out.append(value);
    }
    appendLine(value: string): void {
        this.out.appendLine(value);
    }
    replace(value: string): void {
        this.out.replace(value);
    }
    clear(): void {}
    show(a?: unknown, b?: boolean): void {
        this.out.show(typeof a === "boolean" ? a : b);
    }
    hide(): void {}
    dispose(): void {
        this.sub.dispose();
        this.changed.dispose();
    }
}

/** Hooks the extension installs on every (re)started client. */
export type Installer = (client: lc.LanguageClient) => vscode.Disposable[];

/** Makes the language client (the unit tests pass a fake). */
export type ClientFactory = (server: lc.ServerOptions, client: lc.LanguageClientOptions) => lc.LanguageClient;

/** Whether command (a path, or a name looked up on env's PATH) is an executable file. */
export type ServerLookup = (command: string, env: NodeJS.ProcessEnv) => boolean;

export const findServer: ServerLookup = (command, env) => {
    const isExe = (p: string) => {
        try {
            fs.accessSync(p, fs.constants.X_OK);
            return fs.statSync(p).isFile();
        } catch {
            return false;
        }
    };
    const exts = process.platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";")] : [""];
    if (command.includes("/") || command.includes("\\")) {
        return exts.some((e) => isExe(command + e));
    }
    const dirs = (env.PATH ?? env.Path ?? "").split(path.delimiter).filter(Boolean);
    return dirs.some((d) => exts.some((e) => isExe(path.join(d, command + e))));
};

/** This extension as installed: its directory (for a bundled zot) and version. */
export interface ExtensionPackage {
    extensionPath?: string;
    version: string;
}

const SOURCE_NAMES: Record<ServerSource, string> = { setting: "zot.serverPath", bundled: "bundled with the extension", path: "PATH" };

const newLanguageClient: ClientFactory = (server, client) => new lc.LanguageClient("zot", "zot", server, client);

export class ZotClient implements vscode.Disposable {
    client?: lc.LanguageClient;
    info?: ext.ServerInfo;
    state: ClientState = "stopped";
    /** Why the client is stopped or failed, for the user. */
    problem?: string;

    private readonly _onState = new vscode.EventEmitter<ClientState>();
    readonly onState = this._onState.event;
    private readonly _onStarted = new vscode.EventEmitter<lc.LanguageClient>();
    /** Fires after each successful start (also after restarts). */
    readonly onStarted = this._onStarted.event;

    private installed: vscode.Disposable[] = [];
    /** The session to resume when zot is restarted after a crash. */
    resumeSession?: string;
    /** The session the current process resumed after a crash. */
    resumedSession?: string;
    private crashed = false;
    /** The API key from VS Code's secret storage (read at each start). */
    secretApiKey?: () => Thenable<string | undefined>;

    /** Crash restarts of the current process (0: started normally). */
    get restarts(): number {
        return this.crashed ? this.crashes.length : 0;
    }
    private crashes: number[] = [];
    private starting?: Promise<void>;

    private readonly trace: TraceChannel;

    constructor(
        readonly output: vscode.LogOutputChannel,
        private readonly install: Installer,
        private readonly create: ClientFactory = newLanguageClient,
        private readonly lookup: ServerLookup = findServer,
        private readonly pkg: ExtensionPackage = { version: "0.0.0" },
    ) {
        this.trace = new TraceChannel(output);
    }

    /** The connection as the status bar and the chat show it. */
    get connection(): Connection {
        return { state: this.state, problem: this.problem, version: this.info?.version };
    }

    private setState(s: ClientState, problem?: string): void {
        this.state = s;
        this.problem = problem;
        this._onState.fire(s);
    }

    async start(): Promise<void> {
        if (this.starting) {
            return this.starting;
        }
        this.starting = this.doStart().finally(() => (this.starting = undefined));
        return this.starting;
    }

    private async doStart(): Promise<void> {
        if (this.client) {
            await this.stop();
        }
        this.crashed = false;
        let key: string | undefined;
        try {
            key = await this.secretApiKey?.();
        } catch (e) {
            this.output.appendLine(`[client] reading the API key from the secret storage: ${e instanceof Error ? e.message : String(e)}`);
        }
        const bundled = bundledServer(this.pkg.extensionPath);
        const l = launch(key, bundled, bundledPiRuntime(this.pkg.extensionPath));
        this.output.appendLine(`[client] starting ${l.command} ${l.args.join(" ")} (from ${SOURCE_NAMES[l.source]})`);
        if (!this.lookup(l.command, l.env)) {
            // Checked first: the language client would add a raw toast of
            // its own ("couldn't create connection to server") to ours.
            this.setState("starting");
            this.failStart(`zot: cannot start "${l.command} lsp": no such executable. Install zot or set "zot.serverPath" to the zot binary.`);
            return;
        }
        const exe: lc.Executable = { command: l.command, args: l.args, options: { env: l.env, cwd: l.cwd } };
        const serverOptions: lc.ServerOptions = { run: exe, debug: exe };
        const clientOptions: lc.LanguageClientOptions = {
            documentSelector: [{ scheme: "file" }],
            outputChannel: this.output,
            traceOutputChannel: this.trace,
            // Read at each (re)start: after a crash the new process resumes
            // the session the old one had.
            initializationOptions: () => {
                const opts = { ...l.initializationOptions };
                this.resumedSession = undefined;
                if (this.crashed && this.resumeSession) {
                    opts.resume = this.resumedSession = this.resumeSession;
                }
                return opts;
            },
            errorHandler: this.errorHandler(),
            initializationFailedHandler: (err) => {
                this.output.appendLine(`[client] initialize failed: ${err instanceof Error ? err.message : String(err)}`);
                return false;
            },
        };
        const client = this.create(serverOptions, clientOptions);
        client.registerFeature(new ZotCapabilities());
        this.client = client;
        this.installed = this.install(client);
        this.setState("starting");
        try {
            await client.start();
        } catch (e) {
            const msg = startError(e, l.command);
            this.dispose_installed();
            this.client = undefined;
            try {
                await client.dispose(2000);
            } catch {
                // already gone
            }
            this.failStart(msg);
            return;
        }
        const raw = client.initializeResult?.capabilities?.experimental as { zot?: ext.ServerInfo } | undefined;
        this.info = raw?.zot;
        const mismatch = incompatibility(this.info, l, this.pkg.version, bundled !== undefined);
        if (mismatch) {
            // Nothing of this server is used: stopped before anything asks
            // it for a method it may not have.
            this.dispose_installed();
            this.client = undefined;
            try {
                await client.stop(5000);
            } catch (e) {
                this.output.appendLine(`[client] stop: ${e instanceof Error ? e.message : String(e)}`);
            }
            this.failStart(mismatch);
            return;
        }
        this.setState("running", this.info?.error);
        this._onStarted.fire(client);
    }

    /** zot could not start: one message, with the fix. */
    private failStart(msg: string): void {
        this.output.appendLine(`[client] ${msg}`);
        this.setState("error", msg);
        void vscode.window.showErrorMessage(msg, "Open Settings", "Show Output").then((a) => {
            if (a === "Open Settings") {
                void vscode.commands.executeCommand("workbench.action.openSettings", "zot.serverPath");
            } else if (a === "Show Output") {
                this.output.show(true);
            }
        });
    }

    private errorHandler(): lc.ErrorHandler {
        return {
            error: (_error, _message, count) => ({
                action: (count ?? 0) <= 3 ? lc.ErrorAction.Continue : lc.ErrorAction.Shutdown,
                handled: true,
            }),
            closed: () => {
                const now = Date.now();
                this.crashes = this.crashes.filter((t) => now - t < RESTART_WINDOW_MS);
                this.crashes.push(now);
                this.crashed = true;
                if (this.crashes.length <= MAX_RESTARTS) {
                    const msg = `zot lsp stopped unexpectedly; restarting (${this.crashes.length} of ${MAX_RESTARTS}).`;
                    this.output.appendLine(`[client] ${msg}`);
                    this.setState("starting", msg);
                    // The language client restarts the process; re-read its info then.
                    setTimeout(() => this.afterRestart(), 0);
                    return { action: lc.CloseAction.Restart, message: msg, handled: true };
                }
                const msg = `zot lsp stopped ${this.crashes.length} times in 3 minutes and will not be restarted. See the "zot" output, then run "Zot: Restart Server".`;
                this.output.appendLine(`[client] ${msg}`);
                this.setState("stopped", msg);
                void vscode.window.showErrorMessage(msg, "Show Output", "Restart").then((a) => {
                    if (a === "Show Output") {
                        this.output.show(true);
                    } else if (a === "Restart") {
                        this.crashes = [];
                        void this.start();
                    }
                });
                return { action: lc.CloseAction.DoNotRestart, handled: true };
            },
        };
    }

    private afterRestart(): void {
        const client = this.client;
        if (!client) {
            return;
        }
        const check = () => {
            if (client !== this.client) {
                return;
            }
            if (client.state === lc.State.Running) {
                const raw = client.initializeResult?.capabilities?.experimental as { zot?: ext.ServerInfo } | undefined;
                this.info = raw?.zot;
                this.setState("running", this.info?.error);
                this._onStarted.fire(client);
                return;
            }
            if (client.state === lc.State.Starting) {
                const d = client.onDidChangeState(() => {
                    d.dispose();
                    check();
                });
            }
        };
        check();
    }

    private dispose_installed(): void {
        for (const d of this.installed) {
            d.dispose();
        }
        this.installed = [];
    }

    async stop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.dispose_installed();
        if (client) {
            try {
                await client.stop(5000);
            } catch (e) {
                this.output.appendLine(`[client] stop: ${e instanceof Error ? e.message : String(e)}`);
            }
        }
        this.setState("stopped");
    }

    async restart(): Promise<void> {
        this.crashes = [];
        await this.start();
    }

    /** The running client, after the start in progress (a restart from
     * the settings toast, a crash restart) if there is one: a message sent
     * while zot restarts goes to the new process instead of failing. Waits
     * at most START_WAIT_MS; then, or when the start failed, the error the
     * user can act on. */
    async ready(): Promise<lc.LanguageClient> {
        if (this.starting) {
            await this.starting;
        }
        if (this.state === "starting") {
            await new Promise<void>((resolve) => {
                const done = () => {
                    clearTimeout(timer);
                    sub.dispose();
                    resolve();
                };
                const timer = setTimeout(done, START_WAIT_MS);
                const sub = this.onState((s) => s !== "starting" && done());
            });
        }
        return this.running();
    }

    /** The running client, or an error the user can act on. */
    running(): lc.LanguageClient {
        if (!this.client || this.state !== "running") {
            throw new Error(this.problem ?? "zot is not running (see the \"zot\" output).");
        }
        return this.client;
    }

    dispose(): void {
        void this.stop();
        this.trace.dispose();
        this._onState.dispose();
        this._onStarted.dispose();
    }
}

function startError(e: unknown, command: string): string {
    const m = e instanceof Error ? e.message : String(e);
    if (/ENOENT/.test(m) || /spawn/.test(m)) {
        return `zot: cannot start "${command} lsp" (${m}). Install zot or set "zot.serverPath" to the zot binary.`;
    }
    return `zot: the language server failed to start: ${m}`;
}

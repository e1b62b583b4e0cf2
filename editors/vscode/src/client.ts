// The language client that runs `zot lsp`: start, stop, restart, crash
// handling (bounded restarts, then a clear message) and the zot client
// capabilities.

import * as vscode from "vscode";
import * as lc from "vscode-languageclient/node";
import * as ext from "./lsp_ext";
import { launch } from "./config";

/** Restarts allowed within RESTART_WINDOW_MS before zot is left stopped. */
export const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

export type ClientState = "starting" | "running" | "stopped" | "error";

/** Advertises what this client implements of zot's server → client requests. */
class ZotCapabilities implements lc.StaticFeature {
    getState(): lc.FeatureState {
        return { kind: "static" };
    }
    fillClientCapabilities(caps: lc.ClientCapabilities): void {
        const zot: ext.ClientCapabilities = { reviewEdit: true, save: true, panels: true };
        caps.experimental = { ...(caps.experimental as object), zot };
    }
    initialize(): void {}
    clear(): void {}
}

/** Hooks the extension installs on every (re)started client. */
export type Installer = (client: lc.LanguageClient) => vscode.Disposable[];

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
    private crashes: number[] = [];
    private starting?: Promise<void>;

    constructor(
        readonly output: vscode.LogOutputChannel,
        private readonly install: Installer,
    ) {}

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
        const l = launch();
        this.output.appendLine(`[client] starting ${l.command} ${l.args.join(" ")}`);
        const exe: lc.Executable = { command: l.command, args: l.args, options: { env: l.env, cwd: l.cwd } };
        const serverOptions: lc.ServerOptions = { run: exe, debug: exe };
        const clientOptions: lc.LanguageClientOptions = {
            documentSelector: [{ scheme: "file" }],
            outputChannel: this.output,
            initializationOptions: l.initializationOptions,
            errorHandler: this.errorHandler(),
            initializationFailedHandler: (err) => {
                this.output.appendLine(`[client] initialize failed: ${err instanceof Error ? err.message : String(err)}`);
                return false;
            },
        };
        const client = new lc.LanguageClient("zot", "zot", serverOptions, clientOptions);
        client.registerFeature(new ZotCapabilities());
        this.client = client;
        this.installed = this.install(client);
        this.setState("starting");
        try {
            await client.start();
        } catch (e) {
            const msg = startError(e, l.command);
            this.output.appendLine(`[client] ${msg}`);
            this.dispose_installed();
            this.client = undefined;
            try {
                await client.dispose(2000);
            } catch {
                // already gone
            }
            this.setState("error", msg);
            void vscode.window.showErrorMessage(msg, "Open Settings", "Show Output").then((a) => {
                if (a === "Open Settings") {
                    void vscode.commands.executeCommand("workbench.action.openSettings", "zot.serverPath");
                } else if (a === "Show Output") {
                    this.output.show(true);
                }
            });
            return;
        }
        const raw = client.initializeResult?.capabilities?.experimental as { zot?: ext.ServerInfo } | undefined;
        this.info = raw?.zot;
        if (this.info && this.info.protocolVersion !== ext.PROTOCOL_VERSION) {
            void vscode.window.showWarningMessage(
                `zot lsp speaks protocol version ${this.info.protocolVersion}; this extension speaks ${ext.PROTOCOL_VERSION}. Update one of them.`,
            );
        }
        this.setState("running", this.info?.error);
        this._onStarted.fire(client);
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

    /** The running client, or an error the user can act on. */
    running(): lc.LanguageClient {
        if (!this.client || this.state !== "running") {
            throw new Error(this.problem ?? "zot is not running (see the \"zot\" output).");
        }
        return this.client;
    }

    dispose(): void {
        void this.stop();
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

/** The message of an error from a request, for the user. */
export function errorMessage(e: unknown): string {
    if (e instanceof lc.ResponseError) {
        return e.message;
    }
    return e instanceof Error ? e.message : String(e);
}

// What the extension knows about zot between messages: the runs in
// progress, the model, mode, usage and commands, and how the status bar
// shows them. No vscode API here (the unit tests run it in plain Node).

import type * as ext from "./lsp_ext";
import type { ChatStatus } from "./webview/protocol";
import { userProblem } from "./problems";

export type ClientState = "starting" | "running" | "stopped" | "error";

/** The connection as the status bar and the chat show it. */
export interface Connection {
    state: ClientState;
    /** Why zot is stopped or cannot run, for the user. */
    problem?: string;
    version?: string;
}

/** The status bar item's look; background names a theme color. */
export interface StatusBarView {
    text: string;
    tooltip: string;
    background?: "statusBarItem.errorBackground" | "statusBarItem.warningBackground";
}

/** The properties of a status bar item that a StatusBarView sets. */
export interface StatusBarTarget<Color> {
    text: string;
    tooltip: unknown;
    backgroundColor: Color | undefined;
}

/**
 * Shows view in item unless it is what item shows already (last): every
 * property set on a status bar item is a message from the extension host
 * to the window, and most updates (each usage event, each run's start and
 * end) change nothing. Returns what item shows now.
 */
export function applyStatusBar<Color>(
    item: StatusBarTarget<Color>,
    view: StatusBarView,
    last: StatusBarView | undefined,
    color: (name: NonNullable<StatusBarView["background"]>) => Color,
): StatusBarView {
    if (last && last.text === view.text && last.tooltip === view.tooltip && last.background === view.background) {
        return last;
    }
    item.text = view.text;
    item.tooltip = view.tooltip;
    item.backgroundColor = view.background ? color(view.background) : undefined;
    return view;
}

/** Finished run ids kept (a zot/prompt answer may come after its done). */
const FINISHED_MAX = 1000;
const FINISHED_KEEP = 500;

export class ZotState {
    /** Runs accepted and not done. */
    readonly runs = new Set<string>();
    /** Runs done (a zot/prompt answer may come after the run's events). */
    private finished = new Set<string>();
    commands: ext.CommandInfo[] = [];
    model = "";
    provider = "";
    mode: ext.PermissionMode = "auto";
    usage?: ext.Usage;
    /** Tokens the last model call read: how full the context window is (0: unknown). */
    contextUsed = 0;

    get running(): boolean {
        return this.runs.size > 0;
    }

    /** Counts a run the server accepted; false if it is already over. */
    addRun(runId: string): boolean {
        if (this.finished.has(runId) || this.runs.has(runId)) {
            return false;
        }
        this.runs.add(runId);
        return true;
    }

    /**
     * Books one zot/event. changed: the status bar needs a redraw;
     * idle: the last run just ended.
     */
    onEvent(ev: ext.ZotEvent): { changed: boolean; idle: boolean } {
        const before = this.runs.size;
        if (ev.type === "done") {
            this.runs.delete(ev.runId);
            this.finished.add(ev.runId);
            if (this.finished.size > FINISHED_MAX) {
                this.finished = new Set([...this.finished].slice(-FINISHED_KEEP));
            }
        } else if (ev.runId && !this.finished.has(ev.runId)) {
            this.runs.add(ev.runId);
        }
        let changed = before !== this.runs.size;
        if (ev.type === "usage") {
            this.usage = ev.cumulative;
            this.contextUsed = ev.input + ev.cache_read + ev.cache_write;
            changed = true;
        } else if (ev.type === "compact_done") {
            this.contextUsed = 0; // the next call reads the summary
            changed = true;
        }
        return { changed, idle: ev.type === "done" && this.runs.size === 0 };
    }

    /** The server went away: nothing runs any more. */
    clearRuns(): void {
        this.runs.clear();
    }

    /** experimental.zot of the initialize result. */
    fromServerInfo(info: ext.ServerInfo): void {
        this.model = info.model;
        this.provider = info.provider;
        this.mode = info.permissionMode;
        this.commands = info.commands ?? [];
    }

    /** A zot/state answer. */
    fromState(s: ext.StateResult): void {
        this.model = s.model;
        this.provider = s.provider;
        this.mode = s.permissionMode;
        this.usage = s.usage;
        if (s.message_count === 0) {
            this.contextUsed = 0; // a new or cleared conversation
        }
    }

    chatStatus(conn: Connection): ChatStatus {
        const problem = conn.problem ? userProblem(conn.problem) : undefined;
        return {
            connection: conn.state,
            // "" rather than undefined: the webview merges statuses, and
            // postMessage drops undefined fields (a stale banner stayed).
            message: problem?.text ?? "",
            actions: problem?.actions ?? [],
            provider: this.provider,
            model: this.model,
            permissionMode: this.mode,
            usage: this.usage,
            contextUsed: this.contextUsed,
            version: conn.version,
        };
    }

    statusBar(conn: Connection): StatusBarView {
        const model = this.model || "zot";
        switch (conn.state) {
            case "starting":
                return { text: "$(loading~spin) zot", tooltip: "zot: starting…" };
            case "stopped":
            case "error":
                return { text: "$(error) zot", tooltip: `zot: ${conn.problem ?? "stopped"}`, background: "statusBarItem.errorBackground" };
        }
        const running = this.running;
        const cost = this.usage ? ` · $${this.usage.cost_usd.toFixed(4)}` : "";
        return {
            text: running ? `$(loading~spin) zot: ${model}` : `$(sparkle) zot: ${model}`,
            tooltip:
                `zot ${conn.version ?? ""} — ${this.provider}/${model}, ${this.mode} mode${cost}` +
                `${running ? " — working (click to open the chat)" : ""}${conn.problem ? "\n" + conn.problem : ""}`,
            background: conn.problem ? "statusBarItem.warningBackground" : undefined,
        };
    }
}

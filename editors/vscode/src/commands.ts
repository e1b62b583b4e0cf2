// What the user asks of zot, from the chat or the command palette: prompts,
// slash commands, sessions, models, modes, extensions (rust-analyzer's
// commands.ts). Each function takes the extension's context (ctx.ts).

import * as vscode from "vscode";
import * as ext from "./lsp_ext";
import { errorMessage } from "./errors";
import { parseSlash, promptText } from "./webview/chat/slash";
import type { Ctx } from "./ctx";
import { userProblem } from "./problems";
import { openFile } from "./files";
import { OPEN_FILE_COMMAND } from "./webview/chat/files";
import type { PendingChip } from "./webview/protocol";

/**
 * What the user typed in the chat: a slash command or a prompt. When it
 * cannot be sent (zot not running, no API key …) the text goes back into
 * the chat's input and the error is shown once: as the chat's problem
 * banner when it is zot's known problem (with its fix), else inline.
 */
export async function send(ctx: Ctx, text: string, context?: ext.PromptContext, attachments?: ext.Attachment[], resendIndex?: number): Promise<boolean> {
    const slash = context || resendIndex !== undefined ? undefined : parseSlash(text);
    const shell = context || resendIndex !== undefined || slash ? undefined : parseUserBash(text);
    const err = slash
        ? await runCommand(ctx, slash.name, slash.args)
        : shell
          ? await userBash(ctx, shell)
          : resendIndex !== undefined
          ? await resend(ctx, resendIndex, promptText(text), attachments)
          : await prompt(ctx, promptText(text), context, false, attachments);
    if (err === undefined) {
        return true;
    }
    const problem = ctx.client.connection.problem;
    const known = problem !== undefined && (err === problem || err.includes(problem) || problem.includes(err));
    ctx.chat.post({ type: "sendFailed", text, error: known ? undefined : err });
    if (!ctx.chat.visible) {
        void vscode.window.showErrorMessage(`zot: ${known ? userProblem(err).text : err}`);
    }
    return false;
}

/** Sends a prompt; returns the error (undefined when sent). show: put the error in the chat. */
export async function prompt(ctx: Ctx, text: string, context?: ext.PromptContext, show = true, attachments?: ext.Attachment[]): Promise<string | undefined> {
    try {
        const params: ext.PromptParams = { text, context };
        if (attachments?.length) {
            params.attachments = attachments;
        }
        const r = await (await ctx.client.ready()).sendRequest(ext.prompt, params);
        started(ctx, r);
        return undefined;
    } catch (e) {
        const msg = errorMessage(e);
        if (show) {
            ctx.chat.notice("error", msg);
        }
        return msg;
    }
}

/** `!cmd` (its output joins the conversation) and `!!cmd` (it does not), as in pi. */
export function parseUserBash(text: string): ext.UserBashParams | undefined {
    const t = text.trim();
    const m = /^(!!?)\s*([\s\S]+)$/.exec(t);
    if (!m) {
        return undefined;
    }
    return { command: m[2], excludeFromContext: m[1] === "!!" ? true : undefined };
}

/** Runs the user's own shell command (zot/userBash); returns the error. */
export async function userBash(ctx: Ctx, params: ext.UserBashParams): Promise<string | undefined> {
    try {
        started(ctx, await (await ctx.client.ready()).sendRequest(ext.userBash, params));
        return undefined;
    } catch (e) {
        return errorMessage(e);
    }
}

function started(ctx: Ctx, r: ext.RunStarted): void {
    ctx.state.addRun(r.runId);
    ctx.updateStatusBar();
    ctx.chat.post({ type: "runStarted", runId: r.runId, queued: r.queued, ahead: r.ahead });
}

/** Edit and resend: replaces the user message at index (and drops what followed); returns the error. */
export async function resend(ctx: Ctx, index: number, text: string, attachments?: ext.Attachment[]): Promise<string | undefined> {
    // The cut is shown before the request goes: the new run's events may
    // come before its answer, and must land after the cut.
    ctx.chat.post({ type: "truncate", messageIndex: index });
    try {
        const r = await (await ctx.client.ready()).sendRequest(ext.resend, { messageIndex: index, text, attachments: attachments?.length ? attachments : undefined });
        started(ctx, r);
        return undefined;
    } catch (e) {
        ctx.chat.post({ type: "untruncate" });
        return errorMessage(e);
    }
}

/** Retry the last answer: the last prompt runs again from where it was sent. */
export async function retry(ctx: Ctx): Promise<void> {
    ctx.chat.post({ type: "truncate" }); // before the request, as in resend
    try {
        const r = await (await ctx.client.ready()).sendRequest(ext.retry);
        started(ctx, r);
    } catch (e) {
        ctx.chat.post({ type: "untruncate" });
        ctx.chat.notice("error", errorMessage(e));
    }
}

/**
 * A code block's Apply: into the editor last used — its selection, else the
 * whole file — through zot's edit path (reviewed in ask mode, refused in
 * readonly). Without a file editor, the user picks a workspace file.
 */
export async function applyCode(ctx: Ctx, code: string): Promise<void> {
    let ed = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === "file");
    if (ed && ed.document.uri.scheme !== "file") {
        ed = undefined;
    }
    let uri = ed?.document.uri;
    if (!uri) {
        const files = await vscode.workspace.findFiles("**/*", "**/{node_modules,.git}/**", 5000);
        const pick = await vscode.window.showQuickPick(
            files.map((f) => ({ label: vscode.workspace.asRelativePath(f, false), uri: f })),
            { title: "Apply the code to which file? (it replaces the file's content)", matchOnDescription: true },
        );
        if (!pick) {
            return;
        }
        uri = pick.uri;
    }
    const sel = ed && !ed.selection.isEmpty ? ed.selection : undefined;
    const range = sel ? { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } } : undefined;
    const rel = vscode.workspace.asRelativePath(uri, false);
    try {
        const r = await ctx.client.running().sendRequest(ext.applyCode, { uri: uri.toString(), text: code, range });
        if (r.applied) {
            vscode.window.setStatusBarMessage(`zot: ${r.message ?? "applied to " + rel}`, 4000);
            await vscode.window.showTextDocument(uri, { preview: false, preserveFocus: false, viewColumn: ed?.viewColumn });
        } else {
            void vscode.window.showWarningMessage(`zot: the code was not applied to ${rel}: ${r.message ?? "no reason given"}`);
        }
    } catch (e) {
        void vscode.window.showErrorMessage(`zot: ${errorMessage(e)}`);
    }
}

/** Commands after which the chat's transcript is gone. */
const CLEARS = ["new", "clear"];
/** Commands after which the state (and for resume the transcript) is re-read. */
const REFRESHES = ["new", "clear", "resume", "model", "mode"];

/** Runs a slash command; returns the error when the request failed (not the command). */
export async function runCommand(ctx: Ctx, name: string, args: string): Promise<string | undefined> {
    if (name === "skills" && args.trim() === "") {
        await pickSkill(ctx);
        return undefined;
    }
    let r: ext.CommandResult;
    try {
        r = await (await ctx.client.ready()).sendRequest(ext.command, { name, args });
    } catch (e) {
        return `/${name}: ${errorMessage(e)}`;
    }
    if (r.error) {
        ctx.chat.notice("error", `/${name}: ${r.error}`);
        if (!ctx.chat.visible) {
            void vscode.window.showErrorMessage(`zot /${name}: ${r.error}`);
        }
    }
    if (r.runId) {
        if (ctx.state.addRun(r.runId)) {
            ctx.updateStatusBar();
        }
        ctx.chat.post({ type: "runStarted", runId: r.runId, queued: !!r.queued });
    }
    switch (r.action) {
        case "insert":
            ctx.chat.post({ type: "insert", text: r.insert ?? "" });
            break;
        case "display":
            ctx.chat.notice("display", r.display ?? "");
            if (!ctx.chat.visible) {
                void vscode.window.showInformationMessage(r.display ?? "");
            }
            break;
    }
    if (CLEARS.includes(name)) {
        ctx.chat.post({ type: "clear" });
        if (r.display) {
            ctx.chat.notice("display", r.display);
        }
    }
    if (REFRESHES.includes(name)) {
        await refresh(ctx, name === "resume");
    }
    return undefined;
}

/** Re-reads state (model, mode, usage) and optionally the transcript. */
export async function refresh(ctx: Ctx, history: boolean): Promise<void> {
    const c = ctx.client.running();
    const s = await c.sendRequest(ext.state);
    ctx.client.resumeSession = s.session_id || undefined;
    if (s.message_count > 0) {
        ctx.rememberSession?.(s.session_id);
    }
    ctx.state.fromState(s);
    if (history) {
        const m = await c.sendRequest(ext.messages);
        ctx.chat.post({ type: "history", messages: m.messages });
    }
    ctx.chat.post({ type: "status", status: ctx.state.chatStatus(ctx.client.connection) });
    ctx.updateStatusBar();
}

export async function abort(ctx: Ctx): Promise<void> {
    const r = await ctx.client.running().sendRequest(ext.abort, { clearQueue: true });
    if (!r.aborted && r.dropped.length === 0) {
        ctx.chat.notice("info", "Nothing is running.");
    }
}

export async function setModel(ctx: Ctx, model: string): Promise<void> {
    try {
        const r = await ctx.client.running().sendRequest(ext.setModel, { model });
        ctx.state.model = r.model;
    } catch (e) {
        ctx.chat.notice("error", errorMessage(e));
    }
    await refresh(ctx, false);
}

export async function setMode(ctx: Ctx, mode: ext.PermissionMode): Promise<void> {
    try {
        const r = await ctx.client.running().sendRequest(ext.setPermissionMode, { mode });
        ctx.state.mode = r.mode;
    } catch (e) {
        ctx.chat.notice("error", errorMessage(e));
    }
    await refresh(ctx, false);
}

export async function newSession(ctx: Ctx): Promise<void> {
    const r = await ctx.client.running().sendRequest(ext.sessionNew);
    ctx.chat.post({ type: "clear" });
    ctx.chat.notice("info", `New session${r.sessionId ? ` (${r.sessionId})` : ""}.`);
    await refresh(ctx, false);
}

export async function resumeSession(ctx: Ctx): Promise<void> {
    const c = ctx.client.running();
    const all = await c.sendRequest(ext.sessions);
    const current = all.current;
    // A session nobody wrote in is not history.
    const sessions = all.sessions.filter((s) => s.messages > 0);
    if (sessions.length === 0) {
        void vscode.window.showInformationMessage("zot: no saved sessions for this workspace.");
        return;
    }
    const pick = await vscode.window.showQuickPick(
        sessions.map((s) => ({
            label: s.title || "(untitled)",
            description: `${new Date(s.modified).toLocaleString()} · ${s.messages} messages${s.id === current ? " · current" : ""}`,
            detail: s.parent ? `${s.id} · a branch of ${s.parent}` : s.id,
            id: s.id,
        })),
        { title: "zot: resume a session", placeHolder: "Pick a session of this workspace", matchOnDetail: true },
    );
    if (!pick) {
        return;
    }
    const r = await c.sendRequest(ext.sessionResume, { id: pick.id });
    await refresh(ctx, true);
    ctx.chat.notice("info", `Resumed session ${r.sessionId} (${r.messageCount} messages).`);
}

/**
 * Zot: Prompt — with a selection, the selection becomes a chip above the
 * chat's input (nothing pasted) and the chat takes focus; without one it
 * asks with the editor's file as context.
 */
export async function promptCommand(ctx: Ctx, selectionChip?: () => PendingChip | undefined): Promise<void> {
    const chip = selectionChip?.();
    if (chip) {
        await ctx.chat.reveal(true);
        ctx.chat.post({ type: "addChip", chip });
        return;
    }
    const ed = vscode.window.activeTextEditor;
    let context: ext.PromptContext | undefined;
    let where = "";
    if (ed && ed.document.uri.scheme === "file") {
        const sel = ed.selection;
        const rel = vscode.workspace.asRelativePath(ed.document.uri, false);
        context = {
            uri: ed.document.uri.toString(),
            range: { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } },
        };
        if (!sel.isEmpty) {
            context.selectionText = ed.document.getText(sel);
            where = ` about ${rel}:${sel.start.line + 1}-${sel.end.line + 1}`;
        } else {
            where = ` about ${rel}`;
        }
    }
    const text = await vscode.window.showInputBox({
        title: `Ask zot${where}`,
        prompt: context ? "The file (and selection) go along as context." : undefined,
        placeHolder: "What should zot do?",
        ignoreFocusOut: true,
    });
    if (!text?.trim()) {
        return;
    }
    await ctx.chat.reveal();
    await send(ctx, text, context);
}

export async function selectModel(ctx: Ctx): Promise<void> {
    const { models, current } = await ctx.client.running().sendRequest(ext.models);
    const pick = await vscode.window.showQuickPick(
        models.map((m) => ({
            label: m.id,
            description: `${m.provider}${m.id === current ? " · current" : ""}`,
            detail: [m.context_window ? `${m.context_window.toLocaleString()} tokens context` : "", m.input_price ? `$${m.input_price}/M in, $${m.output_price ?? 0}/M out` : ""]
                .filter(Boolean)
                .join(" · "),
        })),
        { title: "zot: select a model", placeHolder: current },
    );
    if (pick) {
        await setModel(ctx, pick.label);
    }
}

export async function runCommandPicker(ctx: Ctx): Promise<void> {
    const { commands } = await ctx.client.running().sendRequest(ext.commands);
    const pick = await vscode.window.showQuickPick(
        commands.map((c) => ({ label: "/" + c.name, description: c.source === "extension" ? (c.extension ?? "extension") : "", detail: c.description, name: c.name })),
        { title: "zot: run a slash command", matchOnDetail: true },
    );
    if (!pick) {
        return;
    }
    const args = await vscode.window.showInputBox({ title: `/${pick.name}`, prompt: `Arguments for /${pick.name} (optional)`, placeHolder: pick.detail });
    if (args === undefined) {
        return;
    }
    await ctx.chat.reveal();
    const err = await runCommand(ctx, pick.name, args);
    if (err) {
        ctx.chat.notice("error", err);
    }
}

/** A skill body's first lines, flattened, for the QuickPick's detail. */
export function skillPreview(body: string, max = 200): string {
    const flat = body
        .split("\n")
        .map((l) => l.replace(/^#+\s*/, "").trim())
        .filter((l) => l !== "")
        .join(" · ");
    return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

/** /skills: pick a skill (name, description, a preview of its body), then run it as /skill:<name> args. */
export async function pickSkill(ctx: Ctx): Promise<void> {
    const { skills } = await ctx.client.running().sendRequest(ext.skills);
    if (skills.length === 0) {
        void vscode.window.showInformationMessage(
            "zot: no skills. Put one in .zot/skills/<name>/SKILL.md (or .claude/skills, .agents/skills, $ZOT_HOME/skills).",
        );
        return;
    }
    const pick = await vscode.window.showQuickPick(
        skills.map((s) => ({ label: s.name, description: s.description, detail: skillPreview(s.body), name: s.name })),
        { title: "zot: run a skill", placeHolder: "The skill's instructions are sent as the prompt", matchOnDescription: true, matchOnDetail: true },
    );
    if (!pick) {
        return;
    }
    const args = await vscode.window.showInputBox({ title: `/skill:${pick.name}`, prompt: `Arguments for the skill ${pick.name} (optional)` });
    if (args === undefined) {
        return;
    }
    await ctx.chat.reveal();
    await runCommand(ctx, "skill:" + pick.name, args);
}

export async function reloadExtensions(ctx: Ctx): Promise<void> {
    const r = await ctx.client.running().sendRequest(ext.extensionsReload);
    ctx.setCommands(r.commands);
    const loaded = r.extensions.filter((e) => e.state === "loaded").length;
    void vscode.window.showInformationMessage(`zot: reloaded extensions: ${loaded} loaded of ${r.extensions.length}.`);
}

export async function showExtensions(ctx: Ctx): Promise<void> {
    const r = await ctx.client.running().sendRequest(ext.extensions);
    if (r.extensions.length === 0) {
        void vscode.window.showInformationMessage(
            r.loading ? "zot: extensions are still starting." : r.error ? `zot: extensions could not start: ${r.error}` : "zot: no extensions are installed.",
        );
        return;
    }
    const icon = (s: string) => (s === "loaded" ? "$(pass)" : s === "starting" ? "$(loading~spin)" : s === "failed" ? "$(error)" : "$(circle-slash)");
    const pick = await vscode.window.showQuickPick(
        r.extensions.map((e) => ({
            label: `${icon(e.state)} ${e.name}${e.version ? " " + e.version : ""}`,
            description: `${e.state} · ${e.source}${e.reason ? " · " + e.reason : ""}`,
            detail: [e.commands.length ? "commands: " + e.commands.map((c) => "/" + c).join(" ") : "", e.tools.length ? "tools: " + e.tools.join(" ") : "", e.dir]
                .filter(Boolean)
                .join(" · "),
            e,
        })),
        { title: "zot: extensions", placeHolder: "Pick one to see it in the output", matchOnDescription: true },
    );
    if (pick) {
        ctx.output.appendLine(`[extensions] ${JSON.stringify(pick.e, null, 2)}`);
        ctx.output.show(true);
    }
}

/** One line per MCP server (state, scope, transport, tools, last error); picking one offers Restart. */
export async function showMcpServers(ctx: Ctx): Promise<void> {
    const client = ctx.client.running();
    const r = await client.sendRequest(ext.mcp);
    if (r.disabled) {
        void vscode.window.showInformationMessage("zot: MCP servers are off (--no-mcp or noMcp).");
        return;
    }
    for (const e of r.errors ?? []) {
        ctx.output.appendLine(`[mcp] ${e}`);
    }
    if (r.servers.length === 0) {
        void vscode.window.showInformationMessage("zot: no MCP servers are configured ($ZOT_HOME/mcp.json, .mcp.json, .zot/mcp.json).");
        return;
    }
    const icon = (s: string) =>
        s === "ready" ? "$(pass)" : s === "starting" || s === "restarting" ? "$(loading~spin)" : s === "failed" || s === "invalid" ? "$(error)" : "$(circle-slash)";
    const pick = await vscode.window.showQuickPick(
        r.servers.map((s) => ({
            label: `${icon(s.state)} ${s.name}`,
            description: `${s.state} · ${s.scope} · ${s.transport} · ${s.tools.length} tools`,
            detail: s.lastError ? `last error: ${s.lastError}` : s.command,
            s,
        })),
        { title: "zot: MCP servers", placeHolder: "Pick one to restart it or see it in the output", matchOnDescription: true, matchOnDetail: true },
    );
    if (!pick) {
        return;
    }
    const restart = `Restart ${pick.s.name}`;
    const action = await vscode.window.showQuickPick([restart, "Show in the output"], { title: `zot: MCP server ${pick.s.name}` });
    if (action === restart) {
        const after = await client.sendRequest(ext.mcpRestart, { name: pick.s.name });
        const s = after.servers.find((x) => x.name === pick.s.name);
        const text = `zot: MCP server ${pick.s.name}: ${s?.state ?? "gone"}${s?.lastError && s.state !== "ready" ? ` — ${s.lastError}` : ""}`;
        void (s?.state === "ready" ? vscode.window.showInformationMessage(text) : vscode.window.showWarningMessage(text));
    } else if (action) {
        ctx.output.appendLine(`[mcp] ${JSON.stringify(pick.s, null, 2)}`);
        ctx.output.show(true);
    }
}

/**
 * The Zot view's restart button of an MCP server: zot/mcp/restart; the
 * view's lines show the new state (its last error included; a failure is
 * also told in the chat by zot/mcp/changed).
 */
export async function restartMcp(ctx: Ctx, name: string): Promise<void> {
    const r = await ctx.client.running().sendRequest(ext.mcpRestart, { name });
    ctx.chat.post({ type: "mcp", servers: r.servers, disabled: r.disabled });
}

export async function pickPermissionMode(ctx: Ctx): Promise<void> {
    const items: { label: ext.PermissionMode; detail: string }[] = [
        { label: "auto", detail: "Edits and commands run without asking" },
        { label: "ask", detail: "Review every edit in a diff; approve every shell command" },
        { label: "readonly", detail: "zot may read but not write or run commands" },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: "zot: permission mode", placeHolder: `now: ${ctx.state.mode}` });
    if (pick) {
        await setMode(ctx, pick.label);
    }
}

/**
 * Reject (the diff's title bar, the palette): asks why, optionally. The
 * model is told "rejected" and the user's own words, or no reason at all;
 * Escape goes back to the review without rejecting.
 */
export async function rejectWithReason(ctx: Ctx, uri?: vscode.Uri): Promise<void> {
    if (ctx.reviews.count === 0) {
        void vscode.window.showInformationMessage("zot: no change is waiting for review.");
        return;
    }
    // The review meant: the one shown now, before the input box takes focus.
    uri ??= vscode.window.activeTextEditor?.document.uri;
    const reason = await vscode.window.showInputBox({
        title: "Reject zot's change",
        prompt: "Why? zot reads this (optional). Enter rejects; Escape goes back to the review.",
        placeHolder: "e.g. keep the old name",
        ignoreFocusOut: true,
    });
    if (reason === undefined) {
        return;
    }
    await ctx.reviews.reject(uri, reason.trim() || undefined);
}

/** Accept / Reject on a tool call's chat card: its review, as the diff's title bar does. */
export async function reviewDecision(ctx: Ctx, toolCallId: string, decision: "accept" | "reject"): Promise<void> {
    const uri = ctx.reviews.uriForCall?.(toolCallId);
    if (!uri) {
        void vscode.window.showInformationMessage("zot: this change is no longer waiting for review.");
        return;
    }
    if (decision === "accept") {
        await ctx.reviews.accept(uri);
    } else {
        await rejectWithReason(ctx, uri);
    }
}

/** Open diff on a tool card: the waiting review's diff, or the edit the call made. */
export async function openCallDiff(ctx: Ctx, toolCallId: string, name: string, args: unknown): Promise<void> {
    if (await ctx.reviews.reveal?.(toolCallId)) {
        return;
    }
    await ctx.reviews.showCallDiff?.(name, args);
}

/** A pi extension's shortcut (registerShortcut), with its extension's name. */
export type ExtensionShortcut = ext.Shortcut & { extension: string };

/** The shortcuts the extensions registered, in load order. */
export function shortcutsOf(r: ext.ExtensionsResult): ExtensionShortcut[] {
    return r.extensions.flatMap((e) => (e.shortcuts ?? []).map((s) => ({ ...s, extension: e.name })));
}

/**
 * A key as pi or a keybinding spells it (Ctrl+Shift+Y, shift-ctrl-y),
 * compared without case, separator or modifier order.
 */
export function normalizeKey(k: string): string {
    const parts = k.toLowerCase().replace(/\s+/g, "").split(/[+-](?=.)/);
    const key = parts.pop() ?? "";
    return [...parts.sort(), key].join("+");
}

/**
 * zot.runShortcut: runs a pi extension's shortcut (registerShortcut). A
 * keybinding passes its key (or its command, shortcut:KEY) as args:
 * `{ "key": "ctrl+shift+y", "command": "zot.runShortcut", "args": "ctrl+shift+y" }`;
 * from the palette, a QuickPick of the registered ones.
 */
export async function runShortcut(ctx: Ctx, arg?: unknown): Promise<void> {
    const all = shortcutsOf(await ctx.client.running().sendRequest(ext.extensions));
    const want = typeof arg === "string" ? arg : arg && typeof arg === "object" && typeof (arg as { key?: unknown }).key === "string" ? (arg as { key: string }).key : undefined;
    let pick: ExtensionShortcut | undefined;
    if (want !== undefined) {
        pick = all.find((s) => s.command === want || normalizeKey(s.key) === normalizeKey(want));
        if (!pick) {
            const known = all.length ? `registered: ${all.map((s) => `${s.key} (${s.extension})`).join(", ")}` : "no extension registered one";
            void vscode.window.showErrorMessage(`zot: no extension shortcut ${want} (${known}).`);
            return;
        }
    } else {
        if (!all.length) {
            void vscode.window.showInformationMessage("zot: no extension registered a shortcut (pi extensions do with registerShortcut).");
            return;
        }
        const p = await vscode.window.showQuickPick(
            all.map((s) => ({ label: s.key, description: s.extension, detail: s.description, s })),
            { title: "zot: run an extension shortcut", matchOnDescription: true, matchOnDetail: true },
        );
        if (!p) {
            return;
        }
        pick = p.s;
    }
    const err = await runCommand(ctx, pick.command, "");
    if (err) {
        ctx.chat.notice("error", err);
        if (!ctx.chat.visible) {
            void vscode.window.showErrorMessage(`zot: ${err}`);
        }
    }
}

/** The palette commands of package.json; errors become an error message. */
export function registerCommands(ctx: Ctx & { focusChat(): unknown; showOutput(): unknown }): vscode.Disposable[] {
    const cmd = (id: string, f: (...a: unknown[]) => unknown) =>
        vscode.commands.registerCommand(id, async (...a: unknown[]) => {
            try {
                await f(...a);
            } catch (e) {
                void vscode.window.showErrorMessage(`zot: ${errorMessage(e)}`);
            }
        });
    const uriArg = (a: unknown) => (a instanceof vscode.Uri ? a : undefined);
    return [
        cmd("zot.focusChat", () => ctx.focusChat()),
        cmd("zot.prompt", () => promptCommand(ctx, ctx.selectionChip ? () => ctx.selectionChip?.() : undefined)),
        cmd("zot.abort", () => abort(ctx)),
        cmd("zot.newSession", () => newSession(ctx)),
        cmd("zot.resumeSession", () => resumeSession(ctx)),
        cmd("zot.selectModel", () => selectModel(ctx)),
        cmd("zot.runCommand", () => runCommandPicker(ctx)),
        cmd("zot.runShortcut", (arg) => runShortcut(ctx, arg)),
        cmd("zot.skills", () => pickSkill(ctx)),
        cmd("zot.reloadExtensions", () => reloadExtensions(ctx)),
        cmd("zot.showExtensions", () => showExtensions(ctx)),
        cmd("zot.showMcpServers", () => showMcpServers(ctx)),
        cmd("zot.setPermissionMode", () => pickPermissionMode(ctx)),
        cmd("zot.restartServer", () => ctx.client.restart()),
        cmd("zot.showOutput", () => ctx.showOutput()),
        cmd("zot.review.accept", (uri) => ctx.reviews.accept(uriArg(uri))),
        cmd("zot.review.reject", (uri) => rejectWithReason(ctx, uriArg(uri))),
        cmd(OPEN_FILE_COMMAND, (arg) => openFile(arg as Parameters<typeof openFile>[0])),
    ];
}

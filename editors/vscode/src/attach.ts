// Context the user attaches to a prompt (the chat's `@` and chips): the
// `@` completion list (workspace files by fuzzy match, the selection, the
// problems, the terminal, MCP resources) and the attachment each entry
// becomes (docs/protocol.md, "Attachments"). zot reads files itself (with
// the unsaved buffers); what only VS Code knows (diagnostics, terminal
// output) is captured here when the entry is chosen.

import * as vscode from "vscode";
import * as path from "path";
import type * as ext from "./lsp_ext";
import type { AtItem, PendingChip } from "./webview/protocol";
import { fuzzyFilter, fuzzyScore } from "./webview/chat/context";

/** Files the `@` list searches: at most this many, refreshed on changes. */
const MAX_FILES = 20000;
const EXCLUDE = "**/{node_modules,.git,dist,out,build,target,.venv,__pycache__}/**";
/** The most terminal output one attachment carries (zot keeps the end). */
const MAX_TERMINAL = 64 * 1024;

function toRange(r: vscode.Range): ext.Range {
    return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

/** The last line a selection covers (1-based; an end at character 0 does not count its line). */
function lastLine(r: vscode.Range): number {
    return r.end.character === 0 && r.end.line > r.start.line ? r.end.line : r.end.line + 1;
}

function severity(s: vscode.DiagnosticSeverity): ext.AttachedDiagnostic["severity"] {
    switch (s) {
        case vscode.DiagnosticSeverity.Error:
            return "error";
        case vscode.DiagnosticSeverity.Warning:
            return "warning";
        case vscode.DiagnosticSeverity.Information:
            return "information";
        default:
            return "hint";
    }
}

function diagnostic(uri: vscode.Uri, d: vscode.Diagnostic): ext.AttachedDiagnostic {
    const code = typeof d.code === "object" ? String(d.code.value) : d.code !== undefined ? String(d.code) : undefined;
    return { uri: uri.toString(), range: toRange(d.range), severity: severity(d.severity), message: d.message, source: d.source, code };
}

/** The editor the user last typed in (the chat has focus when it asks). */
function lastEditor(): vscode.TextEditor | undefined {
    const ed = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === "file");
    return ed && ed.document.uri.scheme === "file" ? ed : undefined;
}

export class Attachments implements vscode.Disposable {
    private files?: Promise<string[]>;
    /** Each terminal's last command output (shell integration), newest last. */
    private readonly output = new Map<vscode.Terminal, string>();
    private readonly disposables: vscode.Disposable[] = [];

    constructor(
        /** The MCP resources zot lists (zot/mcp/resources); [] when zot is not running. */
        private readonly resources: () => Promise<ext.MCPResource[]>,
        private readonly onActive: (chip: PendingChip | undefined) => void,
    ) {
        const w = vscode.workspace.createFileSystemWatcher("**/*", false, true, false);
        w.onDidCreate(() => (this.files = undefined));
        w.onDidDelete(() => (this.files = undefined));
        this.disposables.push(w, vscode.window.onDidChangeActiveTextEditor(() => this.announceActive()));
        // Shell integration (VS Code 1.93): the output of each command run
        // in a terminal. Older VS Code has no API to read a terminal.
        const win = vscode.window as unknown as {
            onDidEndTerminalShellExecution?: vscode.Event<{ terminal: vscode.Terminal; execution: { read(): AsyncIterable<string> } }>;
            onDidStartTerminalShellExecution?: vscode.Event<{ terminal: vscode.Terminal; execution: { read(): AsyncIterable<string> } }>;
        };
        if (win.onDidStartTerminalShellExecution) {
            this.disposables.push(
                win.onDidStartTerminalShellExecution((e) => {
                    void (async () => {
                        let out = "";
                        for await (const chunk of e.execution.read()) {
                            out = (out + chunk).slice(-MAX_TERMINAL);
                        }
                        this.output.set(e.terminal, out);
                    })();
                }),
            );
        }
        this.disposables.push(vscode.window.onDidCloseTerminal((t) => this.output.delete(t)));
    }

    /** Tells the chat which file the active editor shows (its toggleable chip). */
    announceActive(): void {
        const ed = vscode.window.activeTextEditor;
        if (!ed) {
            return; // the chat itself took focus: keep the last file
        }
        if (ed.document.uri.scheme !== "file") {
            this.onActive(undefined);
            return;
        }
        const rel = vscode.workspace.asRelativePath(ed.document.uri, false);
        this.onActive({ label: path.basename(ed.document.uri.fsPath), title: rel, attachment: { kind: "file", uri: ed.document.uri.toString() } });
    }

    private workspaceFiles(): Promise<string[]> {
        this.files ??= Promise.resolve(vscode.workspace.findFiles("**/*", EXCLUDE, MAX_FILES)).then(
            (uris) => uris.map((u) => vscode.workspace.asRelativePath(u, false)).sort(),
            () => [],
        );
        return this.files;
    }

    /** The `@` completion list for what is typed after the `@`. */
    async items(query: string): Promise<AtItem[]> {
        const out: AtItem[] = [];
        const special = (kind: ext.AttachmentKind, label: string, detail: string) => {
            if (!query || fuzzyScore(query, label) !== undefined) {
                out.push({ kind, label, detail, key: "" });
            }
        };
        const ed = lastEditor();
        if (ed && !ed.selection.isEmpty) {
            const sel = ed.selection;
            special("selection", "selection", `${vscode.workspace.asRelativePath(ed.document.uri, false)}:${sel.start.line + 1}-${lastLine(sel)}`);
        }
        const diags = vscode.languages.getDiagnostics();
        const count = diags.reduce((n, [, ds]) => n + ds.length, 0);
        if (ed) {
            const here = vscode.languages.getDiagnostics(ed.document.uri).length;
            special("problems", "problems", `${here} in ${path.basename(ed.document.uri.fsPath)} (${count} in the workspace)`);
        } else {
            special("problems", "problems", `${count} in the workspace`);
        }
        const term = vscode.window.activeTerminal ?? vscode.window.terminals[vscode.window.terminals.length - 1];
        if (term) {
            special("terminal", "terminal", `the last output of "${term.name}"`);
        }
        let resources: ext.MCPResource[] = [];
        try {
            resources = await this.resources();
        } catch {
            // zot not running: no resources
        }
        const byLabel = new Map<string, ext.MCPResource>();
        for (const r of resources) {
            byLabel.set(`${r.server}:${r.uri}`, r);
        }
        for (const k of fuzzyFilter(query, [...byLabel.keys()], 8)) {
            const r = byLabel.get(k)!;
            out.push({ kind: "mcpResource", label: r.title || r.name || r.uri, detail: `${r.server} · ${r.uri}`, key: `${r.server}\n${r.uri}` });
        }
        for (const f of fuzzyFilter(query, await this.workspaceFiles(), 20)) {
            out.push({ kind: "file", label: path.posix.basename(f), detail: f, key: f });
        }
        return out;
    }

    /** The chip an `@` entry becomes, with what VS Code knows captured now. */
    async pick(item: AtItem): Promise<PendingChip | string> {
        switch (item.kind) {
            case "file": {
                const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file");
                if (!folder) {
                    return "open a folder to attach its files";
                }
                const uri = vscode.Uri.joinPath(folder.uri, item.key);
                return { label: path.posix.basename(item.key), title: item.key, attachment: { kind: "file", uri: uri.toString() } };
            }
            case "selection":
                return this.selectionChip() ?? "select some text in an editor first";
            case "problems": {
                const ed = lastEditor();
                if (ed && vscode.languages.getDiagnostics(ed.document.uri).length > 0) {
                    const uri = ed.document.uri;
                    const ds = vscode.languages.getDiagnostics(uri).map((d) => diagnostic(uri, d));
                    const name = path.basename(uri.fsPath);
                    return { label: `problems in ${name}`, title: `${ds.length} problems in ${vscode.workspace.asRelativePath(uri, false)}`, attachment: { kind: "problems", uri: uri.toString(), label: `problems in ${name}`, diagnostics: ds } };
                }
                const ds: ext.AttachedDiagnostic[] = [];
                for (const [uri, list] of vscode.languages.getDiagnostics()) {
                    for (const d of list) {
                        ds.push(diagnostic(uri, d));
                    }
                }
                return { label: "problems", title: `${ds.length} problems in the workspace`, attachment: { kind: "problems", label: "problems", diagnostics: ds.slice(0, 500) } };
            }
            case "terminal":
                return this.terminalChip();
            case "mcpResource": {
                const [server, uri] = item.key.split("\n");
                return { label: item.label, title: `${server} · ${uri}`, attachment: { kind: "mcpResource", server, uri, label: item.label } };
            }
        }
    }

    /** The active editor's selection as a chip (Zot: Prompt, `@selection`). */
    selectionChip(): PendingChip | undefined {
        const ed = lastEditor();
        if (!ed || ed.selection.isEmpty) {
            return undefined;
        }
        const sel = ed.selection;
        const name = path.basename(ed.document.uri.fsPath);
        const label = `${name}:${sel.start.line + 1}-${lastLine(sel)}`;
        return {
            label,
            title: `${vscode.workspace.asRelativePath(ed.document.uri, false)}, lines ${sel.start.line + 1}–${lastLine(sel)}`,
            attachment: { kind: "selection", uri: ed.document.uri.toString(), range: toRange(sel), text: ed.document.getText(sel), label },
        };
    }

    /**
     * The active terminal's last output: the last command's, recorded
     * through shell integration; without it, the terminal's whole buffer
     * through its select-all and copy commands (the clipboard is put back).
     */
    private async terminalChip(): Promise<PendingChip | string> {
        const term = vscode.window.activeTerminal ?? vscode.window.terminals[vscode.window.terminals.length - 1];
        if (!term) {
            return "no terminal is open";
        }
        let text = this.output.get(term) ?? "";
        if (!text.trim()) {
            const saved = await vscode.env.clipboard.readText();
            try {
                term.show(true);
                await vscode.commands.executeCommand("workbench.action.terminal.selectAll");
                await vscode.commands.executeCommand("workbench.action.terminal.copySelection");
                await vscode.commands.executeCommand("workbench.action.terminal.clearSelection");
                text = await vscode.env.clipboard.readText();
            } finally {
                await vscode.env.clipboard.writeText(saved);
            }
            if (text === saved) {
                text = "";
            }
        }
        // eslint-disable-next-line no-control-regex
        text = text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07/g, "").slice(-MAX_TERMINAL);
        if (!text.trim()) {
            return `the terminal "${term.name}" shows no output zot can read`;
        }
        return { label: `terminal: ${term.name}`, title: `the last output of the terminal "${term.name}"`, attachment: { kind: "terminal", text, label: term.name } };
    }

    dispose(): void {
        for (const d of this.disposables) {
            d.dispose();
        }
    }
}

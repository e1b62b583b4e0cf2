// Settings (zot.*) → how `zot lsp` is started and its initializationOptions.

import * as vscode from "vscode";
import * as path from "path";
import * as os from "os";
import type { InitializationOptions, PermissionMode } from "./lsp_ext";
import { userLevel } from "./settings";

export interface ServerLaunch {
    command: string;
    args: string[];
    env: NodeJS.ProcessEnv;
    cwd?: string;
    initializationOptions: InitializationOptions;
}

/** Settings whose change needs a restart of the server. */
export const restartSettings = [
    "zot.serverPath",
    "zot.serverArgs",
    "zot.serverEnv",
    "zot.provider",
    "zot.baseUrl",
    "zot.apiKey",
    "zot.extensions",
    "zot.maxSteps",
    "zot.appendSystemPrompt",
    "zot.addDirs",
];

function expandHome(p: string): string {
    if (p === "~" || p.startsWith("~/")) {
        return path.join(os.homedir(), p.slice(1));
    }
    return p;
}

/** Resolves a path setting against the first workspace folder. */
function resolvePath(p: string): string {
    p = expandHome(p.trim());
    if (path.isAbsolute(p) || !p.includes(path.sep)) {
        return p; // absolute, or a bare command name looked up on PATH
    }
    const ws = vscode.workspace.workspaceFolders?.[0];
    return ws ? path.join(ws.uri.fsPath, p) : p;
}

/** apiKey: the key in VS Code's secret storage (Zot: Set API Key), first. */
export function launch(apiKey?: string): ServerLaunch {
    const c = vscode.workspace.getConfiguration("zot");
    // What runs is the user's choice, never the workspace's (see settings.ts).
    const user = <T>(key: string) => userLevel(c.inspect<T>(key));
    const command = resolvePath(user<string>("serverPath") || "zot");
    const args = ["lsp", ...(user<string[]>("serverArgs") ?? [])];
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(user<Record<string, string>>("serverEnv") ?? {})) {
        env[k] = String(v);
    }
    const opts: InitializationOptions = {};
    const str = (k: string) => (c.get<string>(k) ?? "").trim();
    if (str("provider")) {
        opts.provider = str("provider");
    }
    if (str("model")) {
        opts.model = str("model");
    }
    const reasoning = str("reasoning");
    if (reasoning === "off" || reasoning === "low" || reasoning === "medium" || reasoning === "high") {
        opts.reasoning = reasoning;
    }
    const baseUrl = (user<string>("baseUrl") ?? "").trim();
    if (baseUrl) {
        opts.baseUrl = baseUrl;
    }
    if (apiKey) {
        opts.apiKey = apiKey;
    } else if (str("apiKey")) {
        opts.apiKey = str("apiKey"); // deprecated: plain text in settings.json
    }
    const mode = str("permissionMode") as PermissionMode;
    if (mode) {
        opts.permissionMode = mode;
    }
    const exts = (user<string[]>("extensions") ?? []).filter((e) => e.trim() !== "").map(resolvePath);
    if (exts.length) {
        opts.ext = exts;
    }
    // A machine-scoped setting: VS Code ignores a repository's value, so a
    // workspace cannot widen where the agent writes.
    const addDirs = (c.get<string[]>("addDirs") ?? []).filter((d) => d.trim() !== "").map(expandHome);
    if (addDirs.length) {
        opts.addDirs = addDirs;
    }
    const steps = c.get<number>("maxSteps") ?? 0;
    if (steps > 0) {
        opts.maxSteps = steps;
    }
    if (str("appendSystemPrompt")) {
        opts.appendSystemPrompt = str("appendSystemPrompt");
    }
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return { command, args, env, cwd, initializationOptions: opts };
}

// Settings (zot.*) → how `zot lsp` is started and its initializationOptions.

import * as vscode from "vscode";
import * as fs from "fs";
import * as path from "path";
import * as os from "os";
import type { InitializationOptions, PermissionMode } from "./lsp_ext";
import { userLevel } from "./settings";

/**
 * Where the zot binary came from: the zot.serverPath setting, the one
 * bundled in this platform's package (bin/zot), or `zot` on PATH.
 */
export type ServerSource = "setting" | "bundled" | "path";

export interface ServerLaunch {
    command: string;
    source: ServerSource;
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
    "zot.piFlags",
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

/**
 * The zot binary of a platform-specific package (scripts/package-vsix.sh
 * puts it in bin/), or undefined in the universal package. An install that
 * lost the executable bit gets it back.
 */
export function bundledServer(extensionPath: string | undefined, platform: NodeJS.Platform = process.platform): string | undefined {
    if (!extensionPath) {
        return undefined;
    }
    const exe = path.join(extensionPath, "bin", platform === "win32" ? "zot.exe" : "zot");
    try {
        if (!fs.statSync(exe).isFile()) {
            return undefined;
        }
        if (platform !== "win32") {
            fs.accessSync(exe, fs.constants.X_OK);
        }
        return exe;
    } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EACCES") {
            try {
                fs.chmodSync(exe, 0o755);
                return exe;
            } catch {
                return undefined;
            }
        }
        return undefined;
    }
}

/**
 * The Node runtime that hosts pi extensions, as a platform-specific
 * package carries it (scripts/package-vsix.sh: bin/pi-runtime, beside its
 * zot, with its pinned node_modules), or undefined.
 */
export function bundledPiRuntime(extensionPath: string | undefined): string | undefined {
    if (!extensionPath) {
        return undefined;
    }
    const dir = path.join(extensionPath, "bin", "pi-runtime");
    return fs.existsSync(path.join(dir, "host.js")) && fs.existsSync(path.join(dir, "node_modules")) ? dir : undefined;
}

/**
 * Names the package's pi runtime to zot ($ZOT_PI_RUNTIME), so a zot from
 * PATH or zot.serverPath runs pi extensions with it too and nothing is
 * fetched; a runtime the user's environment or zot.serverEnv names wins.
 */
export function withPiRuntime(env: NodeJS.ProcessEnv, runtime: string | undefined): NodeJS.ProcessEnv {
    if (runtime && !env.ZOT_PI_RUNTIME) {
        env.ZOT_PI_RUNTIME = runtime;
    }
    return env;
}

/**
 * apiKey: the key in VS Code's secret storage (Zot: Set API Key), first.
 * bundled: the package's own zot (bundledServer). The binary is
 * zot.serverPath if set, else the bundled one, else `zot` on PATH.
 */
export function launch(apiKey?: string, bundled?: string, piRuntime?: string): ServerLaunch {
    const c = vscode.workspace.getConfiguration("zot");
    // What runs is the user's choice, never the workspace's (see settings.ts).
    const user = <T>(key: string) => userLevel(c.inspect<T>(key));
    const setting = (user<string>("serverPath") ?? "").trim();
    const source: ServerSource = setting ? "setting" : bundled ? "bundled" : "path";
    const command = setting ? resolvePath(setting) : (bundled ?? "zot");
    const args = ["lsp", ...(user<string[]>("serverArgs") ?? [])];
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(user<Record<string, string>>("serverEnv") ?? {})) {
        env[k] = String(v);
    }
    withPiRuntime(env, piRuntime);
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
    // What a pi extension reads with getFlag can change what it guards:
    // the user's choice, never a repository's.
    const piFlags = user<Record<string, unknown>>("piFlags") ?? {};
    const flags: Record<string, string | boolean | number> = {};
    for (const [k, v] of Object.entries(piFlags)) {
        if (typeof v === "string" || typeof v === "boolean" || typeof v === "number") {
            flags[k] = v;
        }
    }
    if (Object.keys(flags).length) {
        opts.piFlags = flags;
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
    return { command, source, args, env, cwd, initializationOptions: opts };
}

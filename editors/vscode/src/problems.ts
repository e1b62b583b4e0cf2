// zot's problems (it cannot start, it has no API key …) as the user reads
// them: what to do, in this editor's terms, and the buttons that do it.

import type { ChatAction } from "./webview/protocol";

/** Commands the chat's buttons may run (nothing else, whatever a message says). */
export const CHAT_ACTIONS = new Set(["zot.setApiKey", "zot.showOutput", "zot.restartServer", "workbench.action.openSettings"]);

export interface Problem {
    text: string;
    actions: ChatAction[];
}

/** Rewrites a problem from zot or the client for the user, with its fix. */
export function userProblem(msg: string): Problem {
    const key = /no API key for (\S+?):? set (\w+)/.exec(msg);
    if (key) {
        return {
            text: `zot has no API key for ${key[1]}. Set one with "Zot: Set API Key" (kept in VS Code's secret storage), or set ${key[2]} in the environment VS Code starts from.`,
            actions: [
                { label: "Set API Key", command: "zot.setApiKey" },
                { label: "Open Settings", command: "workbench.action.openSettings", args: ["zot."] },
            ],
        };
    }
    if (/zot\.serverPath/.test(msg)) {
        return {
            text: msg,
            actions: [
                { label: "Open Settings", command: "workbench.action.openSettings", args: ["zot.serverPath"] },
                { label: "Show Output", command: "zot.showOutput" },
            ],
        };
    }
    if (/Restart Server|will not be restarted/.test(msg)) {
        return { text: msg, actions: [{ label: "Restart", command: "zot.restartServer" }, { label: "Show Output", command: "zot.showOutput" }] };
    }
    return { text: msg, actions: [{ label: "Show Output", command: "zot.showOutput" }] };
}

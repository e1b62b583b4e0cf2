// The HTML of an extension panel: its lines (monospace) and footer. Pure.

import type { Panel } from "../../lsp_ext";

function esc(s: string): string {
    return s.replace(/[&<>"']/g, (ch) =>
        ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : ch === '"' ? "&quot;" : "&#39;",
    );
}

/** Strips ANSI escape sequences (extensions written for terminals may send them). */
export function stripAnsi(s: string): string {
    // eslint-disable-next-line no-control-regex
    return s.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*(\x07|\x1b\\)/g, "");
}

export function renderLines(p: Panel): string {
    return p.lines.map((l) => `<div class="line">${esc(stripAnsi(l)) || "&nbsp;"}</div>`).join("");
}

export function renderFooter(p: Panel): string {
    return esc(stripAnsi(p.footer ?? ""));
}

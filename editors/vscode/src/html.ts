// The HTML of the webviews: a strict Content-Security-Policy (no inline
// script or style; scripts only with this load's nonce; resources only from
// the extension's dist/ folder).

import * as vscode from "vscode";
import { randomBytes } from "crypto";

export function nonce(): string {
    return randomBytes(16).toString("base64").replace(/[^A-Za-z0-9]/g, "");
}

function csp(webview: vscode.Webview, n: string): string {
    return [
        "default-src 'none'",
        `img-src ${webview.cspSource} data:`,
        `font-src ${webview.cspSource}`,
        `style-src ${webview.cspSource}`,
        `script-src 'nonce-${n}'`,
    ].join("; ");
}

function page(webview: vscode.Webview, dist: vscode.Uri, title: string, css: string[], script: string, body: string): string {
    const n = nonce();
    const uri = (p: string) => webview.asWebviewUri(vscode.Uri.joinPath(dist, p)).toString();
    const links = css.map((c) => `<link rel="stylesheet" href="${uri(c)}">`).join("\n");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp(webview, n)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${links}
<title>${title}</title>
</head>
<body>
${body}
<script nonce="${n}" src="${uri(script)}"></script>
</body>
</html>`;
}

export function chatHtml(webview: vscode.Webview, dist: vscode.Uri): string {
    return page(
        webview,
        dist,
        "zot",
        ["media/codicon.css", "webview/chat.css"],
        "webview/chat.js",
        `<div id="zot-chat">
  <header id="header">
    <select id="model" title="Model" aria-label="Model"></select>
    <span class="spacer"></span>
    <select id="mode" title="Permission mode: what zot may do without asking" aria-label="Permission mode">
      <option value="auto">auto</option><option value="ask">ask</option><option value="readonly">readonly</option>
    </select>
  </header>
  <div id="banner" role="alert" hidden></div>
  <details id="mcp" hidden><summary id="mcp-summary"></summary><div id="mcp-servers" role="list"></div></details>
  <div id="transcript" aria-live="polite"></div>
  <div id="empty"><span class="codicon codicon-comment-discussion"></span><p>Ask zot about your code.</p><p class="hint">Type <kbd>/</kbd> for commands · <kbd>@</kbd> to attach files, the selection, problems, the terminal · <kbd>Enter</kbd> sends · <kbd>Shift</kbd>+<kbd>Enter</kbd> for a new line</p></div>
  <footer>
    <div id="completions" role="listbox" hidden></div>
    <div id="widgets" aria-label="Extension widgets" hidden></div>
    <div id="editing" hidden><span class="codicon codicon-edit"></span> Editing an earlier message: sending replaces it and what followed. <button id="cancel-edit" class="link">Cancel</button></div>
    <div id="chips" aria-label="Context attached to the next message"></div>
    <div class="input-row">
      <textarea id="input" rows="1" placeholder="Ask zot… (/ for commands, @ to attach context)" aria-label="Message zot"></textarea>
      <button id="send" class="icon primary" title="Send (Enter)" aria-label="Send"><span class="codicon codicon-send"></span></button>
      <button id="stop" class="icon danger" title="Stop (abort the run)" aria-label="Stop" hidden><span class="codicon codicon-debug-stop"></span></button>
    </div>
    <div id="status"></div>
  </footer>
</div>`,
    );
}

export function panelHtml(webview: vscode.Webview, dist: vscode.Uri, title: string): string {
    const esc = title.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
    return page(
        webview,
        dist,
        esc,
        ["webview/panel.css"],
        "webview/panel.js",
        `<div id="zot-panel" tabindex="0" aria-label="${esc}">
  <div id="lines" role="list"></div>
  <div id="footer" hidden></div>
</div>`,
    );
}

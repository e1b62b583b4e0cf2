// An extension panel's webview: monospace lines and a footer, re-rendered in
// place; keys go back to the extension as zot key names.

import type { HostToPanel, PanelToHost } from "../protocol";
import type { Panel } from "../../lsp_ext";
import { renderFooter, renderLines } from "./render";
import { toPanelKey } from "./keys";
import { browserFrame, FrameScheduler } from "../scheduler";

declare function acquireVsCodeApi(): { postMessage(msg: unknown): void };
const vscode = acquireVsCodeApi();
const post = (m: PanelToHost) => vscode.postMessage(m);

const linesEl = document.getElementById("lines") as HTMLDivElement;
const footerEl = document.getElementById("footer") as HTMLDivElement;
const root = document.getElementById("zot-panel") as HTMLDivElement;

let latest: Panel | undefined;
let renders = 0;
const scheduler = new FrameScheduler(browserFrame(window), () => {
    if (!latest) {
        return;
    }
    renders++;
    linesEl.innerHTML = renderLines(latest);
    footerEl.textContent = renderFooter(latest);
    footerEl.hidden = !latest.footer;
    root.dataset.renders = String(renders);
});

window.addEventListener("message", (e: MessageEvent<HostToPanel>) => {
    const m = e.data;
    if (m.type === "render") {
        latest = m.panel;
        scheduler.schedule();
    } else if (m.type === "closed") {
        root.classList.add("closed");
    }
});

window.addEventListener("keydown", (e) => {
    const k = toPanelKey(e);
    if (!k) {
        return;
    }
    e.preventDefault();
    e.stopPropagation();
    post({ type: "key", ...k });
});

root.addEventListener("mousedown", () => root.focus());
root.focus();
post({ type: "ready" });

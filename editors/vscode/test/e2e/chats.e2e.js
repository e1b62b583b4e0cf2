// End-to-end test in real VS Code (code-server): several chats at once.
// The side panel's chat runs a long bash; Zot: New Chat in Editor Tab opens
// a second chat with its own zot lsp, whose prompt is answered while the
// first run goes on; each chat keeps its own permission mode; the first
// run stops on its own; closing the tab stops its zot and keeps its
// session. scripts/e2e.sh runs it (ZOT_E2E_SPECS=chats) in its own
// code-server, workspace and scripted LLM (chats-script.json).
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go), ZOT_BIN (the zot the extension runs).

const fs = require("fs");
const path = require("path");
const { runSpec, runProcesses, waitFor, frameWith, statusItems, quickInput, runCommand, sleep, firstLine } = require("./harness");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "chats");
const HANG = 90_000; // a wait this long is a hang, not a slow machine
const QUICK_INPUT = ".quick-input-widget:not([style*='display: none'])";

fs.mkdirSync(art, { recursive: true });

let page;

/** The pids of this run's `zot lsp` processes started from ZOT_BIN. */
function zotLspPids() {
    return runProcesses()
        .filter((p) => p.argv[0] === process.env.ZOT_BIN && p.argv[1] === "lsp")
        .map((p) => p.pid);
}

/** The chat webviews' frames (the side panel's, the editor tabs'). */
async function chatFrames() {
    const out = [];
    for (const f of page.frames()) {
        if (!f.isDetached() && (await f.$("#zot-chat").catch(() => null))) {
            out.push(f);
        }
    }
    return out;
}

async function ready(chat) {
    await waitFor("a model in the chat's picker", async () => (await chat.$$eval("#model option", (o) => o.length)) > 0);
    return chat;
}

async function send(chat, textToSend) {
    await chat.fill("#input", textToSend);
    await chat.press("#input", "Enter");
}

const running = (chat) => chat.$eval("#send", (b) => b.hidden);
const text = (chat, sel) => chat.$$eval(sel, (els) => els.map((e) => (e.textContent ?? "").replace(/\u00a0/g, " ")).join("\n"));

/** Every session file under the zot home e2e.sh gave the extension, as text. */
function sessionTexts() {
    const root = path.join(path.dirname(ws), "zothome", "sessions");
    const out = [];
    if (!fs.existsSync(root)) {
        return out;
    }
    for (const d of fs.readdirSync(root)) {
        for (const f of fs.readdirSync(path.join(root, d))) {
            if (f.endsWith(".jsonl")) {
                out.push(fs.readFileSync(path.join(root, d, f), "utf8"));
            }
        }
    }
    return out;
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
let main;
let tab;

test("a second chat in an editor tab runs while the first one's run goes on; each has its own mode", async () => {
    await waitFor("the zot status bar item (the extension active)", async () => (await statusItems()).some((t) => /zot/.test(t)));
    await runCommand("Zot: Focus Chat");
    main = await ready(await frameWith("#zot-chat", "the chat webview"));
    await send(main, "the long one");
    await waitFor("the first chat's bash running", async () => (await text(main, ".item.tool")).includes("sleep 60"));
    if (!(await running(main))) {
        throw new Error("the first chat's run is not going");
    }
    const before = zotLspPids().length;

    await runCommand("Zot: New Chat in Editor Tab");
    tab = await waitFor("the editor tab's chat", async () => (await chatFrames()).find((f) => f !== main));
    await ready(tab);
    await waitFor("a zot lsp of its own", async () => zotLspPids().length === before + 1);
    if (!(await page.$$eval(".tabs-container .tab", (tabs) => tabs.some((t) => (t.getAttribute("aria-label") ?? "").startsWith("zot chat 2"))))) {
        throw new Error("no editor tab named zot chat 2");
    }
    if ((await text(tab, ".item.user")).includes("the long one")) {
        throw new Error("the new chat shows the first chat's conversation");
    }
    await send(tab, "the quick one");
    await waitFor("the second chat's answer", async () => (await text(tab, ".item.assistant")).includes("Quick answer from the second chat."));
    await waitFor("the second chat's run over", async () => !(await running(tab)));
    if (!(await running(main))) {
        throw new Error("the first chat's run ended: it should still be in its bash (sleep 60)");
    }
    // Its own permission mode: ask in the tab (its own zot lsp answers it).
    await tab.selectOption("#mode", "ask");
    await waitFor("the tab's mode ask", async () => (await tab.$eval("#mode", (m) => m.value)) === "ask");
    await page.screenshot({ path: path.join(art, "two-chats.png") });
});

test("the first chat's run is stopped on its own; closing the tab stops its zot and keeps its session", async () => {
    await main.click("#stop");
    await waitFor("the first chat's run over", async () => !(await running(main)));
    const before = zotLspPids().length;
    await page.locator(".tabs-container .tab", { hasText: "zot chat 2" }).first().click();
    await page.keyboard.press("Control+W");
    await waitFor("the tab's zot lsp gone", async () => zotLspPids().length === before - 1);
    await waitFor("the tab's session on disk", async () => sessionTexts().some((t) => t.includes("the quick one") && t.includes("Quick answer from the second chat.")));
    if ((await text(main, ".item.assistant")).includes("Quick answer")) {
        throw new Error("the side panel's chat shows the tab's answer");
    }
});

runSpec(tests, { url, art, onPage: (p) => (page = p) });

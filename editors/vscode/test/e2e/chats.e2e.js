// End-to-end test in real VS Code (code-server): several chats at once.
// The side panel's chat runs a long bash; Zot: New Chat in Editor Tab opens
// a second chat with its own zot lsp, whose prompt is answered while the
// first run goes on; each chat keeps its own permission mode; the first
// run stops on its own; closing the tab stops its zot and keeps its
// session. scripts/e2e.sh runs it (ZOT_E2E_SPECS=chats) in its own
// code-server, workspace and scripted LLM (chats-script.json).
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go), ZOT_BIN (the zot the extension runs).

const { chromium } = require("playwright-core");
const fs = require("fs");
const path = require("path");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "chats");
const HANG = 90_000; // a wait this long is a hang, not a slow machine
const QUICK_INPUT = ".quick-input-widget:not([style*='display: none'])";

fs.mkdirSync(art, { recursive: true });

let page;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const firstLine = (e) => (e && e.message ? e.message.split("\n")[0] : String(e));

/** Polls fn until it returns a truthy value; fails with what it saw last. */
async function waitFor(what, fn, timeout = HANG) {
    const end = Date.now() + timeout;
    let last;
    for (;;) {
        try {
            const v = await fn();
            if (v) {
                return v;
            }
            last = v;
        } catch (e) {
            last = firstLine(e);
        }
        if (Date.now() > end) {
            throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
        }
        await sleep(100);
    }
}

/** The webview frame that holds selector (webviews are nested iframes). */
async function frameWith(selector, what) {
    return waitFor(what, async () => {
        for (const f of page.frames()) {
            if (!f.isDetached() && (await f.$(selector).catch(() => null))) {
                return f;
            }
        }
        return undefined;
    });
}

async function statusItems() {
    return page.$$eval(".statusbar-item", (els) => els.map((e) => (e.textContent ?? "").trim()));
}

/** The open quick input's title and rows, or undefined. */
async function quickInput() {
    const w = await page.$(QUICK_INPUT);
    if (!w) {
        return undefined;
    }
    return {
        title: (await page.$eval(`${QUICK_INPUT} .quick-input-title`, (e) => e.textContent).catch(() => "")) ?? "",
        rows: await page.$$eval(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, (rows) => rows.map((r) => (r.querySelector(".label-name")?.textContent ?? "").trim())),
    };
}

/** Runs a command by its palette title; the palette is opened again until it lists it. */
async function runCommand(title) {
    await waitFor(`"${title}" in the command palette`, async () => {
        if (await page.$(QUICK_INPUT)) {
            await page.keyboard.press("Escape");
        }
        await page.keyboard.press("F1");
        await page.waitForSelector(`${QUICK_INPUT} input`, { timeout: 10_000 });
        await page.keyboard.type(title);
        await sleep(300);
        const rows = (await quickInput())?.rows ?? [];
        const i = rows.indexOf(title);
        if (i < 0) {
            await page.keyboard.press("Escape");
            return false;
        }
        await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(i).click();
        return true;
    });
}

/** The pids of `zot lsp` processes started from ZOT_BIN. */
function zotLspPids() {
    const out = [];
    for (const d of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(d)) {
            continue;
        }
        try {
            const argv = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
            if (argv[0] === process.env.ZOT_BIN && argv[1] === "lsp") {
                out.push(Number(d));
            }
        } catch {
            // gone
        }
    }
    return out;
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

(async () => {
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: HANG });
    await page.waitForSelector(".monaco-workbench", { timeout: HANG });
    let passed = 0;
    let failed = 0;
    for (const t of tests) {
        const s = Date.now();
        try {
            await t.fn();
            passed++;
            console.log(`ok   ${t.name} (${Date.now() - s} ms)`);
        } catch (e) {
            failed++;
            console.log(`FAIL ${t.name} (${Date.now() - s} ms)\n     ${String(e && e.stack ? e.stack : e).split("\n").slice(0, 4).join("\n     ")}`);
            await page.screenshot({ path: path.join(art, `fail-${tests.indexOf(t) + 1}.png`) }).catch(() => undefined);
            for (let i = 0; i < 3 && (await page.$(QUICK_INPUT)); i++) {
                await page.keyboard.press("Escape");
                await sleep(200);
            }
        }
    }
    await browser.close();
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
})().catch((e) => {
    console.error(e);
    console.log("0 passed, 1 failed");
    process.exit(1);
});

// What every VS Code end-to-end spec shares: waiting, the webview frames,
// the status bar, the command palette, and the run of a spec's tests in
// one Chromium page (a failed test leaves a screenshot and closes what it
// left open, so one cause fails one test). A spec hands its page over
// with runSpec's onPage (or usePage) and keeps its own variable for it.

const { chromium } = require("playwright-core");
const fs = require("fs");
const path = require("path");

const HANG = 90_000; // a wait this long is a hang, not a slow machine
const QUICK_INPUT = ".quick-input-widget:not([style*='display: none'])";

let page;
/** The page the helpers below act on. */
function usePage(p) {
    page = p;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const firstLine = (e) => (e && e.message ? e.message.split("\n")[0] : String(e));

/**
 * The processes of this spec's run, each {pid, argv}: those whose
 * environment has the run's ZOT_HOME (e2e.sh gives each spec of each run
 * its own, through zot.serverEnv, and what zot starts inherits it). So
 * two runs on one machine (the VS Code versions scripts/test.sh runs at
 * once, a developer's beside CI's) never count or kill each other's.
 */
function runProcesses() {
    const home = `ZOT_HOME=${path.join(process.env.WS, "..", "zothome")}`;
    const out = [];
    for (const d of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(d)) {
            continue;
        }
        try {
            if (fs.readFileSync(`/proc/${d}/environ`, "utf8").split("\0").includes(home)) {
                out.push({ pid: Number(d), argv: fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0") });
            }
        } catch {
            // gone
        }
    }
    return out;
}

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

/**
 * Opens url in Chromium, runs tests ({name, fn}) in order and prints
 * "N passed, M failed" last (scripts/e2e.sh reads it); exits 1 on a
 * failure. onPage gets the page first; onFailure (optional) returns what
 * to print after a failed test's stack (the spec's own state dump).
 */
function runSpec(tests, { url, art, onPage, onFailure }) {
    (async () => {
        const browser = await chromium.launch({
            executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
            headless: true,
            args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        });
        usePage(await browser.newPage({ viewport: { width: 1400, height: 900 } }));
        onPage?.(page);
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
                if (onFailure) {
                    console.log(await onFailure().catch((e) => `     (no dump: ${firstLine(e)})`));
                }
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
}

/** Focuses the chat and waits until it is usable (the extension active, a model in its picker); returns its frame. */
async function openChat() {
    await waitFor("the zot status bar item (the extension active)", async () => (await statusItems()).some((t) => /zot/.test(t)));
    await runCommand("Zot: Focus Chat");
    const chat = await frameWith("#zot-chat", "the chat webview");
    await waitFor("a model in the chat's picker", async () => (await chat.$$eval("#model option", (o) => o.length)) > 0);
    return chat;
}

/** Types text into the chat's input and presses Enter. */
async function sendTo(chat, text) {
    await chat.fill("#input", text);
    await chat.press("#input", "Enter");
}

/** Waits for the end of a run (the Send button back). */
async function idleOf(chat) {
    await waitFor("the run to end (Send button back)", async () => chat.$eval("#send", (b) => !b.hidden));
}

/** The text of every tool card in the chat. */
async function toolResultsOf(chat) {
    return chat.$$eval(".item.tool", (els) => els.map((e) => (e.textContent ?? "").replace(/\u00a0/g, " ")));
}

module.exports = { openChat, sendTo, idleOf, toolResultsOf, runProcesses, HANG, QUICK_INPUT, usePage, sleep, firstLine, waitFor, frameWith, statusItems, quickInput, runCommand, runSpec };

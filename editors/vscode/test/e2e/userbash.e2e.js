// End-to-end test in real VS Code (code-server): the user's own shell
// command from the chat. "!cmd" runs it in the workspace and shows a card
// named "!" with its output (a failing one marked as an error); "!!cmd"
// the same, named "!!". scripts/e2e.sh runs it (ZOT_E2E_SPECS=userbash)
// in its own code-server, workspace and scripted LLM
// (userbash-script.json: the model is not called by a user's command).
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go).

const { chromium } = require("playwright-core");
const fs = require("fs");
const path = require("path");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "userbash");
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

let chat;
async function ensureChat() {
    await waitFor("the zot status bar item (the extension active)", async () => (await statusItems()).some((t) => /zot/.test(t)));
    await runCommand("Zot: Focus Chat");
    chat = await frameWith("#zot-chat", "the chat webview");
    await waitFor("a model in the chat's picker", async () => (await chat.$$eval("#model option", (o) => o.length)) > 0);
    return chat;
}

async function send(textToSend) {
    await chat.fill("#input", textToSend);
    await chat.press("#input", "Enter");
}

async function idle() {
    await waitFor("the run to end (Send button back)", async () => chat.$eval("#send", (b) => !b.hidden));
}

async function toolResults() {
    return chat.$$eval(".item.tool", (els) => els.map((e) => (e.textContent ?? "").replace(/\u00a0/g, " ")));
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

/** The cards of the chat: name, arguments and whether it failed. */
async function cards() {
    return chat.$$eval(".item.tool", (els) =>
        els.map((e) => ({ name: e.querySelector(".tool-name")?.textContent ?? "", text: (e.textContent ?? "").replace(/\u00a0/g, " "), done: e.querySelector(".tool-result") !== null, failed: e.querySelector(".tool-state .codicon-error") !== null })),
    );
}

test("!cmd runs the user's command in the workspace: a card with its output", async () => {
    await ensureChat();
    await send("!echo e2e-user-shell > made-by-user.txt && cat made-by-user.txt");
    const card = await waitFor("the ! card with the output", async () => (await cards()).find((c) => c.name === "!" && c.done && c.text.includes("e2e-user-shell")));
    await idle();
    if (!fs.existsSync(path.join(ws, "made-by-user.txt"))) {
        throw new Error("the command did not run in the workspace");
    }
    if (card.failed) {
        throw new Error(`a command that succeeded is marked failed: ${JSON.stringify(card)}`);
    }
    await page.screenshot({ path: path.join(art, "user-bash.png") });
});

test("!!cmd runs it too, its card named !!; a failing command's card is an error with its exit code", async () => {
    await ensureChat();
    await send("!!echo e2e-private; exit 3");
    const card = await waitFor("the !! card", async () => (await cards()).find((c) => c.name === "!!" && c.done && c.text.includes("exit code 3")));
    await idle();
    if (!card.text.includes("e2e-private") || !card.failed) {
        throw new Error(`the !! card: ${JSON.stringify(card)}`);
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

// End-to-end test of the zot extension in real VS Code (code-server) with
// Playwright in Chromium. scripts/e2e.sh sets everything up and runs this.
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go).
//
// The scripted LLM (llm-script.json) answers the prompts below in order, so
// the tests run in order. Waits are bounded only to catch hangs; nothing
// asserts on timing.

const { chromium } = require("playwright-core");
const fs = require("fs");
const path = require("path");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts");
const HANG = 90_000; // a wait this long is a hang, not a slow machine

fs.mkdirSync(art, { recursive: true });

let page;
const consoleErrors = [];

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
            last = e && e.message ? e.message.split("\n")[0] : String(e);
        }
        if (Date.now() > end) {
            throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
        }
        await new Promise((r) => setTimeout(r, 100));
    }
}

/** The webview frame that holds selector (webviews are nested iframes). */
async function frameWith(selector, what) {
    return waitFor(what, async () => {
        for (const f of page.frames()) {
            if (f.isDetached()) {
                continue;
            }
            try {
                if (await f.$(selector)) {
                    return f;
                }
            } catch {
                // frame navigating
            }
        }
        return undefined;
    });
}

async function text(frame, selector) {
    return frame.$$eval(selector, (els) => els.map((e) => e.textContent.replace(/\u00a0/g, " ")).join("\n"));
}

async function editorText() {
    return (await page.$$eval(".monaco-editor .view-lines", (els) => els.map((e) => e.innerText).join("\n"))).replace(/\u00a0/g, " ");
}

async function runCommand(title) {
    await page.keyboard.press("F1");
    await page.waitForSelector(".quick-input-widget:not([style*='display: none']) input", { timeout: HANG });
    await page.keyboard.type(title);
    await waitFor(`"${title}" in the command palette`, async () =>
        (await page.$$eval(".quick-input-list .monaco-list-row", (rows) => rows.map((r) => r.textContent))).some((t) => t.includes(title)),
    );
    await page.keyboard.press("Enter");
}

let chat;

async function send(textToSend) {
    await chat.fill("#input", textToSend);
    await chat.press("#input", "Enter");
}

async function idle() {
    await waitFor("the run to end (Send button back)", async () => chat.$eval("#send", (b) => !b.hidden));
}

async function shot(name) {
    await page.screenshot({ path: path.join(art, name) });
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// ------------------------------------------------------------------ tests

test("the Zot view opens and zot lsp starts (status bar, models, commands)", async () => {
    await page.locator(".explorer-folders-view").getByText("hello.txt").click();
    await waitFor("hello.txt in an editor", async () => (await editorText()).includes("hello world"));
    await runCommand("Zot: Focus Chat");
    chat = await frameWith("#zot-chat", "the chat webview");
    await waitFor("a model in the picker", async () => (await chat.$$eval("#model option", (o) => o.length)) > 0);
    await waitFor("the status bar item", async () =>
        (await page.$$eval(".statusbar-item", (els) => els.map((e) => e.textContent))).some((t) => /zot: /.test(t)),
    );
});

test("a prompt streams markdown, shows a tool card, and the edit lands in the open editor", async () => {
    await send("Please edit hello.txt");
    await waitFor("the user's message", async () => (await text(chat, ".item.user")).includes("Please edit hello.txt"));
    await waitFor("rendered markdown (bold)", async () => (await text(chat, ".item.assistant strong")).includes("edit"));
    await waitFor("the edit tool card, done", async () => (await text(chat, ".item.tool.tool-done .tool-name")).includes("edit"));
    const args = await text(chat, ".item.tool .tool-args");
    if (!args.includes("hello.txt")) {
        throw new Error(`tool card args: ${args}`);
    }
    await waitFor("a highlighted Go code block", async () => (await text(chat, ".item.assistant pre.code-block .hljs-keyword")).includes("func"));
    await idle();
    await waitFor("the edit in the editor", async () => (await editorText()).includes("hello zot"));
    await waitFor("the edit saved to disk (zot/save)", async () => fs.readFileSync(path.join(ws, "hello.txt"), "utf8") === "hello zot\n");
    await waitFor("usage and cost in the status line", async () => /\$\d/.test(await text(chat, "#status")));
    await shot("chat.png");
});

test("a bash tool card shows its result", async () => {
    await send("run a command");
    await waitFor("the bash card, done, with output", async () => {
        const cards = await chat.$$eval(".item.tool", (els) =>
            els.map((e) => ({ cls: e.className, name: e.querySelector(".tool-name")?.textContent, result: e.querySelector(".tool-result")?.textContent ?? "" })),
        );
        return cards.some((c) => c.name === "bash" && c.cls.includes("tool-done") && c.result.includes("second-line"));
    });
    await idle();
});

test("slash commands: completion, /mode ask; a review: edit the proposal, accept it", async () => {
    await chat.fill("#input", "");
    await chat.type("#input", "/mo");
    await waitFor("completions for /mo", async () => {
        const t = await text(chat, "#completions .completion-name");
        return t.includes("/mode") && t.includes("/model");
    });
    await chat.fill("#input", "/mode ask");
    await chat.press("#input", "Enter");
    await waitFor("the /mode answer", async () => (await text(chat, ".item.notice")).includes("Permission mode: ask"));

    await send("change it again");
    await waitFor("the review diff editor", async () => (await page.$$(".monaco-diff-editor .editor.modified .view-lines")).length > 0);
    await waitFor("the proposal in the diff", async () =>
        (await page.$eval(".monaco-diff-editor .editor.modified .view-lines", (e) => e.innerText)).includes("hello review"),
    );
    await waitFor("the review notification", async () =>
        (await page.$$eval(".notifications-toasts .notification-list-item-message", (els) => els.map((e) => e.textContent))).some((t) =>
            t.includes("zot wants to change hello.txt"),
        ),
    );
    // The proposal is editable: change it before accepting.
    await page.locator(".monaco-diff-editor .editor.modified .view-lines .view-line").first().click();
    await page.keyboard.press("End");
    await page.keyboard.type(" (edited)");
    await waitFor("the typed text in the proposal", async () =>
        (await page.$eval(".monaco-diff-editor .editor.modified .view-lines", (e) => e.innerText)).replace(/\u00a0/g, " ").includes("hello review (edited)"),
    );
    await shot("review.png");
    await page.locator('.editor-actions .action-label[aria-label*="Accept Proposed Change"]').first().click();
    await waitFor("the assistant after the review", async () => (await text(chat, ".item.assistant")).includes("Thanks for reviewing."));
    await idle();
    await waitFor("the diff editor to close", async () => (await page.$$(".monaco-diff-editor")).length === 0);
    await waitFor("the user's version in the editor", async () => (await editorText()).includes("hello review (edited)"));
    await waitFor("the user's version on disk", async () => fs.readFileSync(path.join(ws, "hello.txt"), "utf8") === "hello review (edited)\n");
    const tool = await chat.$$eval(".item.tool", (els) => els.map((e) => e.querySelector(".tool-result")?.textContent ?? ""));
    if (!tool[tool.length - 1].includes("edited it before accepting")) {
        throw new Error(`the model was not told about the user's change: ${tool[tool.length - 1]}`);
    }
    await send("/mode auto");
    await waitFor("the /mode auto answer", async () => (await text(chat, ".item.notice")).includes("Permission mode: auto"));
});

test("an extension panel: /todos opens it, keys re-render it in place, esc closes it", async () => {
    await chat.fill("#input", "");
    await chat.type("#input", "/to");
    await waitFor("/todos in the completions", async () => (await text(chat, "#completions .completion-name")).includes("/todos"));
    await chat.press("#input", "Enter"); // completes to "/todos "
    await waitFor("the completed command", async () => (await chat.$eval("#input", (i) => i.value)) === "/todos ");
    await chat.press("#input", "Enter");
    const panel = await frameWith("#zot-panel", "the Todos panel");
    await waitFor("the panel's first render", async () => (await text(panel, "#lines")).includes("no todos"));
    await waitFor("the panel's tab title", async () => (await page.$$eval(".tab .label-name", (els) => els.map((e) => e.textContent))).includes("Todos"));
    const footer = await text(panel, "#footer");
    if (!footer.includes("esc/q close")) {
        throw new Error(`footer: ${footer}`);
    }
    const renders = async () => Number(await panel.$eval("#zot-panel", (e) => e.dataset.renders || "0"));
    const before = await renders();
    await panel.click("#zot-panel");
    await page.keyboard.press("a");
    await waitFor("the panel to show the new item", async () => (await text(panel, "#lines")).includes("new item 1"));
    await page.keyboard.press("a");
    await waitFor("a second item", async () => (await text(panel, "#lines")).includes("› □ new item 2"));
    await page.keyboard.press("ArrowUp");
    await waitFor("the cursor on item 1", async () => (await text(panel, "#lines")).includes("› □ new item 1"));
    await page.keyboard.press("Enter");
    await waitFor("item 1 done", async () => (await text(panel, "#lines")).includes("› ✓ new item 1"));
    if ((await renders()) <= before) {
        throw new Error("the panel did not re-render in place");
    }
    await shot("panel.png");
    await page.keyboard.press("Escape");
    await waitFor("the panel to close", async () => !(await page.$$eval(".tab .label-name", (els) => els.map((e) => e.textContent))).includes("Todos"));
});

test("a burst of 20,000 deltas renders completely", async () => {
    await send("burst");
    await idle();
    await waitFor("all the words", async () => {
        const t = await chat.$$eval(".item.assistant", (els) => els[els.length - 1].textContent);
        return (t.match(/word/g) || []).length === 20000;
    });
});

test("Stop aborts a long stream; the next prompt still works", async () => {
    await send("stream for a long time");
    await waitFor("the stream to start", async () => (await chat.$$eval(".item.assistant", (els) => els[els.length - 1].textContent)).includes("tok tok tok"));
    await chat.click("#stop");
    await waitFor("the Stopped notice", async () => (await text(chat, ".item.notice")).includes("Stopped."));
    await idle();
    const toks = (await chat.$$eval(".item.assistant", (els) => els[els.length - 1].textContent)).match(/tok/g).length;
    if (toks >= 100000) {
        throw new Error("the stream was not stopped");
    }
    await send("are you there?");
    await waitFor("the answer after the stop", async () => (await text(chat, ".item.assistant")).includes("Still here after the stop."));
    await idle();
    await shot("chat-final.png");
});

test("the webviews ran without CSP violations or script errors", async () => {
    const bad = consoleErrors.filter((m) => /Content Security Policy|Uncaught|zot/i.test(m) && !/workbench|extensionHost|codeLens/i.test(m));
    if (bad.length) {
        throw new Error(bad.join("\n"));
    }
});

// ------------------------------------------------------------------ runner

(async () => {
    const t0 = Date.now();
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("console", (m) => {
        if (m.type() === "error") {
            consoleErrors.push(m.text().slice(0, 300));
        }
    });
    page.on("pageerror", (e) => consoleErrors.push("Uncaught " + String(e).slice(0, 300)));
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: HANG });
    await page.waitForSelector(".monaco-workbench", { timeout: HANG });
    console.log(`workbench after ${Date.now() - t0} ms`);

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
            await shot(`fail-${tests.indexOf(t) + 1}.png`).catch(() => undefined);
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

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

async function toastText() {
    return page.$$eval(".notifications-toasts .notification-list-item", (els) => els.map((e) => e.textContent).join("\n"));
}

/** The extension's output channel (with the LSP trace: zot.trace.server is "messages"). */
function traceLog() {
    const logs = path.join(path.dirname(ws), "ud", "logs");
    let out = "";
    const walk = (d) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) {
                walk(p);
            } else if (e.name === "zot.log" && d.includes("zot-vscode")) {
                out += fs.readFileSync(p, "utf8");
            }
        }
    };
    try {
        walk(logs);
    } catch {
        // not there yet
    }
    return out;
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
    const toasts = async () => page.$$eval(".notifications-toasts .notification-list-item", (els) => els.map((e) => e.textContent).join("\n"));
    await waitFor("the review notification", async () => (await toasts()).includes("zot wants to change hello.txt"));
    const modified = async () => (await page.$eval(".monaco-diff-editor .editor.modified .view-lines", (e) => e.innerText)).replace(/\u00a0/g, " ");
    await waitFor("the proposal in the diff", async () => (await modified()).includes("hello review"));
    // The proposal is editable: change it before accepting.
    await page.locator(".monaco-diff-editor .editor.modified .view-lines .view-line").first().click();
    await page.keyboard.press("End");
    await page.keyboard.type(" (edited)");
    await waitFor("the typed text in the proposal", async () => (await modified()).includes("hello review (edited)"));
    await shot("review.png");
    await page.locator('.editor-actions .action-label[aria-label*="Accept Proposed Change"]').first().click();
    await waitFor("the assistant after the review", async () => (await text(chat, ".item.assistant")).includes("Thanks for reviewing."));
    await idle();
    await waitFor("the diff editor to close", async () => (await page.$$(".monaco-diff-editor")).length === 0);
    await waitFor("the review notification to close", async () => !(await toasts()).includes("zot wants to change"));
    await waitFor("the user's version in the editor", async () => (await editorText()).includes("hello review (edited)"));
    await waitFor("the user's version on disk", async () => fs.readFileSync(path.join(ws, "hello.txt"), "utf8") === "hello review (edited)\n");
    const tool = await chat.$$eval(".item.tool", (els) => els.map((e) => e.querySelector(".tool-result")?.textContent ?? ""));
    if (!tool[tool.length - 1].includes("edited it before accepting")) {
        throw new Error(`the model was not told about the user's change: ${tool[tool.length - 1]}`);
    }
});

test("ask mode: a shell command waits for approval in a VS Code dialog", async () => {
    await send("run something that needs approval");
    // A modal dialog with the whole command: the padding must not hide its tail.
    const dialog = page.locator(".monaco-dialog-box").filter({ hasText: "zot wants to run a command" });
    const allow = dialog.getByRole("button", { name: "Allow once" });
    await allow.waitFor({ timeout: HANG });
    const shown = (await dialog.textContent()) ?? "";
    if (!shown.includes("echo approved-run") || !shown.includes("&& echo approved-tail")) {
        throw new Error(`the dialog does not show the whole command: ${shown}`);
    }
    await allow.click();
    await waitFor("the approved command's output", async () => {
        const results = await chat.$$eval(".item.tool .tool-result", (els) => els.map((e) => e.textContent));
        return results.some((r) => r.includes("approved-run"));
    });
    await waitFor("the answer after the approval", async () => (await text(chat, ".item.assistant")).includes("Ran it after your approval."));
    await idle();
    await send("/mode auto");
    await waitFor("the /mode auto answer", async () => (await text(chat, ".item.notice")).includes("Permission mode: auto"));
});

test("an extension panel: /todos opens it, keys re-render it in place, esc closes it", async () => {
    await chat.fill("#input", "");
    await chat.type("#input", "/to");
    await waitFor("/todos in the completions", async () => (await text(chat, "#completions .completion-name")).includes("/todos"));
    await shot("completion.png");
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
    const todosTab = async () => (await page.$$eval(".tab .label-name", (els) => els.map((e) => e.textContent))).includes("Todos");
    await waitFor("the panel to close (the extension closed it)", async () => !(await todosTab()));
    if (traceLog().includes("Sending notification 'zot/panel/closed'")) {
        throw new Error("a panel the server closed was reported back as closed by the user");
    }

    // Closed by the user: zot/panel/closed goes to the server.
    await send("/todos");
    const again = await frameWith("#zot-panel", "the Todos panel again");
    await waitFor("the panel's items", async () => (await text(again, "#lines")).includes("new item 2"));
    await page.locator(".tab").filter({ hasText: "Todos" }).locator(".codicon-close, .action-label.codicon-close").first().click();
    await waitFor("the panel to close", async () => !(await todosTab()));
    await waitFor("zot/panel/closed sent", async () => traceLog().includes("Sending notification 'zot/panel/closed'"));
    const keys = (traceLog().match(/Sending notification 'zot\/panel\/key'/g) || []).length;
    if (keys < 4) {
        throw new Error(`expected 4 zot/panel/key notifications in the trace, saw ${keys}`);
    }
});

test("commands: Show Extensions, Reload Extensions, Select Model", async () => {
    await runCommand("Zot: Show Extensions");
    await waitFor("the todo extension, loaded", async () =>
        (await page.$$eval(".quick-input-list .monaco-list-row", (rows) => rows.map((r) => r.textContent))).some((t) => t.includes("todo") && t.includes("loaded")),
    );
    await page.keyboard.press("Escape");
    await runCommand("Zot: Reload Extensions");
    await waitFor("the reload message", async () => (await toastText()).includes("reloaded extensions: 1 loaded of 1"));
    const before = await chat.$eval("#model", (s) => s.value);
    await runCommand("Zot: Select Model");
    const rows = async () =>
        page.$$eval(".quick-input-list .monaco-list-row", (els) => els.map((e) => (e.querySelector(".label-name")?.textContent ?? "").trim()));
    await waitFor("the model list", async () => {
        const r = await rows();
        return r.includes(before) && r.length > 1;
    });
    const labels = await rows();
    const i = labels.findIndex((m) => m !== before);
    const other = labels[i];
    await page.locator(".quick-input-list .monaco-list-row").nth(i).click();
    await waitFor(`the picker showing the new model ${other} (of ${labels.join(", ")})`, async () => (await chat.$eval("#model", (s) => s.value)) === other);
    await waitFor("the status bar showing it", async () =>
        (await page.$$eval(".statusbar-item", (els) => els.map((e) => e.textContent))).some((t) => t.includes(`zot: ${other}`)),
    );
    await chat.selectOption("#model", before);
    await waitFor("the first model back", async () =>
        (await page.$$eval(".statusbar-item", (els) => els.map((e) => e.textContent))).some((t) => t.includes(`zot: ${before}`)),
    );
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

test("Zot: Prompt sends the editor's selection and file as context", async () => {
    await page.locator(".tabs-container .tab").filter({ hasText: "hello.txt" }).first().click();
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+A");
    await runCommand("Zot: Prompt");
    await page.waitForSelector(".quick-input-widget:not([style*='display: none']) input", { timeout: HANG });
    await waitFor("the prompt box titled with the file", async () => (await page.$eval(".quick-input-widget", (e) => e.textContent)).includes("hello.txt"));
    await page.keyboard.type("what is this?");
    await page.keyboard.press("Enter");
    await waitFor("the prompt with its context", async () => {
        const t = await text(chat, ".item.user");
        return t.includes("what is this?") && t.includes("Editor context: hello.txt") && t.includes("hello review (edited)");
    });
    await waitFor("the answer", async () => (await text(chat, ".item.assistant")).includes("It is a greeting."));
    await idle();
});

test("new session clears the chat; session history brings the first one back", async () => {
    await page.locator('.action-label[aria-label^="New Session"]').first().click();
    await waitFor("an empty transcript with the new-session notice", async () => {
        const kinds = await chat.$$eval("#transcript .item", (els) => els.map((e) => e.className));
        return kinds.length === 1 && (await text(chat, ".item.notice")).includes("New session");
    });
    await page.locator('.action-label[aria-label^="Resume Session"]').first().click();
    const row = page.locator(".quick-input-list .monaco-list-row").filter({ hasText: "Please edit hello.txt" }).first();
    await row.waitFor({ timeout: HANG });
    await row.click();
    await waitFor("the first session's transcript", async () => {
        const users = await text(chat, ".item.user");
        return users.includes("Please edit hello.txt") && (await text(chat, ".item.tool .tool-name")).includes("bash");
    });
    await waitFor("the resumed notice", async () => (await text(chat, ".item.notice")).includes("Resumed session"));
});

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

test("a crashed zot lsp is restarted and resumes the session", async () => {
    const [pid] = zotLspPids();
    if (!pid) {
        throw new Error("no zot lsp process found");
    }
    process.kill(pid, "SIGKILL");
    await waitFor("a new zot lsp process", async () => {
        const pids = zotLspPids();
        return pids.length === 1 && pids[0] !== pid;
    });
    await waitFor("the restart notice", async () => (await text(chat, ".item.notice")).includes("restarted"));
    await waitFor("the resumed transcript", async () => (await text(chat, ".item.user")).includes("Please edit hello.txt"));
    await send("are you back?");
    await waitFor("an answer from the new process", async () => (await text(chat, ".item.assistant")).includes("Back after the crash."));
    await idle();
});

test("the webviews ran without CSP violations or script errors", async () => {
    if (process.env.ZOT_E2E_DEBUG) {
        console.log(consoleErrors.join("\n"));
    }
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
    page.on("response", (r) => {
        if (r.status() >= 400 && process.env.ZOT_E2E_DEBUG) {
            console.log(`[${r.status()}] ${r.url()}`);
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

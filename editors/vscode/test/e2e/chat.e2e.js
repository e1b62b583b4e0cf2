// End-to-end test of the zot extension in real VS Code (code-server) with
// Playwright in Chromium. scripts/e2e.sh sets everything up and runs this.
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go), ZOT_BIN (the zot the extension runs: to find
// its zot lsp processes).
//
// The scripted LLM (llm-script.json) answers the prompts below in order, so
// the tests run in order; but each test sets up the editor state it needs
// (the chat view focused and its frame found, hello.txt open, the
// permission mode) and a failed test is followed by a reset (no palette,
// dialog, review or run left open), so one cause fails one test.
//
// Waits are bounded only to catch hangs; nothing asserts on timing. No wait
// polls something built once before its condition could hold (a command
// palette opened before the extension registered its commands never lists
// them): such lists are re-opened until they show what is awaited.
//
// The DOM is read the same way on every VS Code we test (1.100 and 1.139):
// the review diff side by side or inline, tabs closed by their accessible
// name, not by icon classes.

const { chromium } = require("playwright-core");
const fs = require("fs");
const path = require("path");
const { usePage, runProcesses, waitFor, sleep, firstLine } = require("./harness");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts");
const HANG = 90_000; // a wait this long is a hang, not a slow machine
const VIEWPORT = { width: 1400, height: 900 };

fs.mkdirSync(art, { recursive: true });

let page;
const consoleErrors = [];

const nbsp = (s) => s.replace(/\u00a0/g, " ");

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
    return nbsp(await page.$$eval(".monaco-editor .view-lines", (els) => els.map((e) => e.innerText).join("\n")));
}

/** The files named name under dir (any depth). */
function findFiles(dir, name) {
    const out = [];
    for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
        if (e.isFile() && e.name === name) {
            out.push(path.join(e.parentPath ?? e.path, e.name));
        }
    }
    return out;
}

/** What the scripted model received: its requests' bodies (zot mock-llm's GET /llmtest/requests). */
async function modelRequests() {
    const r = await fetch(`${process.env.LLM_URL}/llmtest/requests`);
    if (!r.ok) {
        throw new Error(`GET /llmtest/requests: ${r.status}`);
    }
    return (await r.json()).filter((x) => x.path.endsWith("/messages")).map((x) => x.body);
}

/** The text blocks of a request's messages: [{role, texts: [...]}]. */
function requestTexts(body) {
    return (body.messages ?? []).map((m) => ({
        role: m.role,
        texts: typeof m.content === "string" ? [m.content] : m.content.filter((c) => c.type === "text").map((c) => c.text),
    }));
}

/** The last model request, once it is at least the n-th (1-based). */
async function requestNumber(n) {
    return waitFor(`model request ${n}`, async () => {
        const reqs = await modelRequests();
        return reqs.length >= n ? reqs[n - 1] : undefined;
    });
}

async function statusItems() {
    return page.$$eval(".statusbar-item", (els) => els.map((e) => e.textContent));
}

async function toastText() {
    return page.$$eval(".notifications-toasts .notification-list-item", (els) => els.map((e) => e.textContent).join("\n"));
}

// ------------------------------------------------------------------ quick input (palette, pickers)

const QUICK_INPUT = ".quick-input-widget:not([style*='display: none'])";

async function quickInputOpen() {
    return (await page.$(QUICK_INPUT)) !== null;
}

/** Closes the palette or picker if one is open (only then: Escape in an
 * editor would drop its selection). */
async function closeQuickInput() {
    for (let i = 0; i < 5 && (await quickInputOpen()); i++) {
        await page.keyboard.press("Escape");
        await sleep(100);
    }
    if (await quickInputOpen()) {
        throw new Error("the quick input does not close on Escape");
    }
}

/** The rows a quick input lists: {label, text}. */
async function quickRows() {
    return page.$$eval(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, (rows) =>
        rows.map((r) => ({
            label: (r.querySelector(".label-name")?.textContent ?? "").trim(),
            text: r.textContent,
        })),
    );
}

/**
 * Opens a quick input with open() and waits until a row satisfies want
 * (rows → index or -1). A quick input lists what existed when it opened,
 * so while no row fits it is closed and opened again, for up to timeout.
 * The failure names how often it was opened and what it listed last.
 * Returns the index of the row.
 */
async function openUntilListed(what, open, want, { timeout = HANG, maxOpens = Infinity, settleMs = 2_000 } = {}) {
    const end = Date.now() + timeout;
    let opens = 0;
    let last = "(never opened)";
    for (;;) {
        try {
            await closeQuickInput();
            opens++;
            await open();
            await page.waitForSelector(`${QUICK_INPUT} input`, { timeout: 10_000 });
            // The list fills in as the quick input renders and filters: give
            // it a moment (longer each time: a busy machine is slow) before
            // deciding this instance will not list it.
            const settle = Date.now() + Math.min(settleMs * 2 ** (opens - 1), 10_000);
            for (;;) {
                const rows = await quickRows();
                const i = want(rows);
                if (i >= 0) {
                    return i;
                }
                last = rows.length ? rows.map((r) => r.label || r.text).join(" | ") : "(an empty list)";
                if (Date.now() > settle) {
                    break;
                }
                await sleep(100);
            }
        } catch (e) {
            last = firstLine(e);
        }
        if (Date.now() > end || opens >= maxOpens) {
            throw new Error(`timed out waiting for ${what}: opened it ${opens} times; last listed: ${last}`);
        }
        await sleep(300);
    }
}

/** Runs a command by its palette title (F1, type, pick the row). */
async function runCommand(title, limits) {
    const i = await openUntilListed(
        `"${title}" in the command palette`,
        async () => {
            await page.keyboard.press("F1");
            await page.waitForSelector(`${QUICK_INPUT} input`, { timeout: 10_000 });
            // Drawn is not yet focused on a busy machine: typed now, the
            // title would land in the editor behind the palette.
            await page.locator(`${QUICK_INPUT} input`).first().focus();
            await page.keyboard.type(title);
        },
        (rows) => rows.findIndex((r) => r.label === title),
        limits,
    );
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(i).click();
}

// ------------------------------------------------------------------ the chat view and the editor

let chatFrame;

/** Focuses the Zot chat view and returns its webview frame. */
async function ensureChat() {
    // The status item appears when the extension has activated.
    await waitFor("the zot status bar item (the extension active)", async () => (await statusItems()).some((t) => /zot/.test(t)));
    await runCommand("Zot: Focus Chat");
    chatFrame = await frameWith("#zot-chat", "the chat webview");
    await waitFor("a model in the chat's picker", async () => (await chatFrame.$$eval("#model option", (o) => o.length)) > 0);
    return chatFrame;
}

/** The accessible name of the active editor tab ("" when none). */
async function activeTab() {
    const labels = await page.$$eval('[role="tab"][aria-selected="true"], [role="tab"].active', (els) =>
        els.filter((e) => e.closest(".tabs-container")).map((e) => e.getAttribute("aria-label") ?? ""),
    );
    return labels[0] ?? "";
}

/** Opens a workspace file in an editor (Quick Open, as a user would). */
async function openFile(name, contains) {
    const i = await openUntilListed(
        `${name} in Quick Open`,
        async () => {
            await page.keyboard.press("Control+P");
            await page.waitForSelector(`${QUICK_INPUT} input`, { timeout: 10_000 });
            await page.keyboard.type(name);
        },
        (rows) => rows.findIndex((r) => r.label === name),
    );
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(i).click();
    await waitFor(`${name} in the active editor`, async () => {
        const tab = await activeTab();
        return tab.startsWith(name) && !tab.includes("↔"); // not a review diff of it
    });
    if (contains) {
        await waitFor(`${name}'s text in the editor`, async () => (await editorText()).includes(contains));
    }
}

/** Whether the editor tab of the file name shows unsaved changes. */
async function tabDirty(name) {
    return page.$$eval(".tabs-container .tab", (tabs, n) => tabs.some((t) => (t.getAttribute("aria-label") ?? "").startsWith(n) && t.classList.contains("dirty")), name);
}

async function send(chat, textToSend) {
    await chat.fill("#input", textToSend);
    await chat.press("#input", "Enter");
}

/** Waits for the end of a run (the Send button back). Call it after
 * something showed the run began: before that, Send is there too. */
async function idle(chat) {
    await waitFor("the run to end (Send button back)", async () => chat.$eval("#send", (b) => !b.hidden));
}

async function setMode(chat, mode) {
    await send(chat, `/mode ${mode}`);
    await waitFor(`the /mode ${mode} answer`, async () => {
        const notices = await chat.$$eval(".item.notice", (els) => els.map((e) => e.textContent));
        return notices.length > 0 && notices[notices.length - 1].includes(`Permission mode: ${mode}`);
    });
}

/** The extension's output channel (with the LSP trace: zot.trace.server is "messages"). */
function traceLog() {
    return readLogs((dir, name) => name === "zot.log" && dir.includes("zot-vscode"));
}

/** The extension host's own logs (uncaught errors, rejected promises). */
function extHostLog() {
    return readLogs((dir, name) => name.startsWith("exthost") && name.endsWith(".log"));
}

function readLogs(pick) {
    const logs = path.join(path.dirname(ws), "ud", "logs");
    let out = "";
    const walk = (d) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) {
                walk(p);
            } else if (pick(d, e.name)) {
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

// ------------------------------------------------------------------ the review diff

const DIFF = ".monaco-diff-editor";

/**
 * The review's proposal as shown: the diff editor's modified side. Side by
 * side that is the right editor; inline (a narrow editor) the deleted
 * lines are drawn inside the modified editor too, in view zones
 * (.view-lines.line-delete): only the editor's own lines are read.
 */
/** Waits for the review's diff editor and the proposal side to hold text. */
async function waitForProposal(text) {
    await waitFor("the review diff editor", async () => (await page.$$(`${DIFF} .editor.modified .view-lines`)).length > 0);
    await waitFor("the proposal in the diff", async () => (await proposalText()).includes(text));
}

async function proposalText() {
    return nbsp(
        await page.$eval(`${DIFF} .editor.modified`, (ed) =>
            [...ed.querySelectorAll(".view-lines:not(.line-delete)")].map((v) => v.innerText).join("\n"),
        ),
    );
}

/** "side by side" or "inline" (the original side shrinks to a gutter). */
async function diffLayout() {
    return page.$eval(DIFF, (d) => (d.classList.contains("side-by-side") ? "side by side" : "inline"));
}

/** The proposal's first line, to click into (never a deleted line). */
function proposalLine() {
    return page.locator(`${DIFF} .editor.modified .view-lines:not(.line-delete) .view-line`).first();
}

/** The review's Accept / Reject buttons in the diff editor's title bar. */
function reviewAction(name) {
    return page.locator(`.editor-actions .action-label[aria-label*="${name} Proposed Change"]`).first();
}

/** Checks a title-bar button is visible inside the window and labelled. */
async function visibleAndLabelled(button, name) {
    await button.waitFor({ state: "visible", timeout: HANG });
    const box = await button.boundingBox();
    const vp = page.viewportSize();
    if (!box || box.width < 4 || box.height < 4 || box.x < 0 || box.x + box.width > vp.width || box.y < 0 || box.y + box.height > vp.height) {
        throw new Error(`the ${name} button is not on screen: ${JSON.stringify(box)} in ${JSON.stringify(vp)}`);
    }
    const label = (await button.getAttribute("aria-label")) ?? "";
    if (!label.includes(`${name} Proposed Change`)) {
        throw new Error(`the ${name} button is labelled ${JSON.stringify(label)}`);
    }
}

// ------------------------------------------------------------------ notifications

/** A notification toast, by its title ("zot wants to change calc.py (edit)"). */
/** Ask mode, then prompt: waits for the proposal (with text) in the diff
 * and for the review notification of file with its three buttons, which
 * it returns. */
async function askForChange(chat, prompt, text, file) {
    await setMode(chat, "ask");
    await clearNotifications();
    await send(chat, prompt);
    await waitForProposal(text);
    const note = toast(`zot wants to change ${file} (edit)`);
    await reviewButtonsLabelled(note);
    return note;
}

function toast(title) {
    return page.locator(".notifications-toasts .notification-list-item", { hasText: title });
}

/** A notification's button, by its text. */
function notificationButton(item, name) {
    return item.getByRole("button", { name, exact: true });
}

/** Checks a review notification has its buttons, labelled with text. */
async function reviewButtonsLabelled(item) {
    for (const name of ["Accept", "Reject", "Open Diff"]) {
        await notificationButton(item, name).waitFor({ state: "visible", timeout: HANG });
    }
}

/** Clears every notification: a review test finds its own by its title. */
async function clearNotifications() {
    await runCommand("Notifications: Clear All Notifications");
    await waitFor("no review notification", async () => !(await toastText()).includes("zot wants to"));
}

/**
 * Clicks a button of a notification in the notification center: a toast
 * times out into it, so the click is the same whether or not the toast
 * is still up. The center hides itself when its last notification goes.
 */
async function clickInNotificationCenter(title, name) {
    await runCommand("Notifications: Show Notifications");
    const item = page.locator(".notifications-center .notification-list-item", { hasText: title });
    await notificationButton(item, name).click({ timeout: HANG });
    await waitFor(`the notification "${title}" to close`, async () => (await item.count()) === 0);
    if (await page.$(".notifications-center.visible")) {
        await runCommand("Notifications: Hide Notifications", { maxOpens: 3 });
    }
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// ------------------------------------------------------------------ tests

test("the command palette helper re-opens the palette until the entry appears, and names what it saw", async () => {
    // The wait every other test relies on: a palette without the entry is
    // closed and opened again for the whole wait, and the failure says so.
    let err;
    try {
        // A short settle: what is tested is the re-opening, not the wait.
        await runCommand("Zot: No Such Command", { maxOpens: 3, settleMs: 200 });
    } catch (e) {
        err = String(e.message);
    }
    await closeQuickInput();
    const m = /opened it (\d+) times; last listed: (.*)$/.exec(err ?? "");
    if (!m || Number(m[1]) !== 3 || !m[2]) {
        throw new Error(`expected a failure after re-opening the palette, got: ${err}`);
    }
});

test("the Zot view opens and zot lsp starts (status bar, models, commands)", async () => {
    await page.locator(".explorer-folders-view").getByText("hello.txt").click();
    await waitFor("hello.txt in an editor", async () => (await editorText()).includes("hello world"));
    await ensureChat();
    await waitFor("the status bar item with the model", async () => (await statusItems()).some((t) => /zot: \S/.test(t)));
});

test("a prompt streams markdown, shows a tool card, and the edit lands in the open editor", async () => {
    await openFile("hello.txt", "hello world");
    const chat = await ensureChat();
    await send(chat, "Please edit hello.txt");
    await waitFor("the user's message", async () => (await text(chat, ".item.user")).includes("Please edit hello.txt"));
    await waitFor("rendered markdown (bold)", async () => (await text(chat, ".item.assistant strong")).includes("edit"));
    await waitFor("the edit tool card, done", async () => (await text(chat, ".item.tool.tool-done .tool-name")).includes("edit"));
    const args = await text(chat, ".item.tool .tool-args");
    if (!args.includes("hello.txt")) {
        throw new Error(`tool card args: ${args}`);
    }
    await waitFor("a highlighted Go code block", async () => (await text(chat, ".item.assistant pre.code-block .hljs-keyword")).includes("func"));
    await idle(chat);
    await waitFor("the edit in the editor", async () => (await editorText()).includes("hello zot"));
    await waitFor("the edit saved to disk (zot/save)", async () => fs.readFileSync(path.join(ws, "hello.txt"), "utf8") === "hello zot\n");
    await waitFor("usage and cost in the status line", async () => /\$\d/.test(await text(chat, "#status")));
    await shot("chat.png");
});

test("a file name in an answer links to the file (not a web page); clicking opens it at the line", async () => {
    const chat = await ensureChat();
    await waitFor("file links in the answer (the name alone, and with its line)", async () => {
        const links = await chat.$$eval(".item.assistant a.file-link", (as) => as.map((a) => a.textContent.trim()));
        return links.includes("hello.txt:1") && links.includes("hello.txt");
    });
    const web = await chat.$$eval(".item a[href]", (as) => as.map((a) => a.getAttribute("href")).filter((h) => /^https?:/i.test(h)));
    if (web.length) {
        throw new Error(`file names rendered as web links: ${web.join(" ")}`);
    }
    await runCommand("View: Close All Editors");
    await waitFor("no editor open", async () => (await activeTab()) === "");
    await chat.locator(".item.assistant a.file-link", { hasText: "hello.txt:1" }).first().click();
    await waitFor("hello.txt opened by the link", async () => (await activeTab()).startsWith("hello.txt"));
    await waitFor("its text in the editor", async () => (await editorText()).includes("hello zot"));
});

test("a code block's Insert puts its code at the editor's cursor", async () => {
    const chat = await ensureChat();
    await openFile("hello.txt", "hello zot");
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+End");
    await chat.locator(".item.assistant .code-wrap", { hasText: "Println" }).first().locator('.code-action[data-action="insert"]').click();
    await waitFor("the code in the editor, after the text (the cursor was at the end)", async () => {
        const t = await editorText();
        return t.indexOf("hello zot") >= 0 && t.indexOf("hello zot") < t.indexOf('fmt.Println("hi")');
    });
    // Undone again: the file is the later tests' fixture.
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Z");
    await waitFor("the insert undone", async () => !(await editorText()).includes("Println"));
});

test("a bash tool card shows its result; Retry moves to its answer without drawing the previous answer again", async () => {
    const chat = await ensureChat();
    // The previous answer offers Retry; its drawn markdown is marked: a
    // redraw (innerHTML) would drop the mark.
    const marked = await chat.$$eval(".item.assistant", (els) => {
        const last = els[els.length - 1];
        const md = last?.querySelector(":scope > .md");
        if (!md || !last.querySelector('[data-action="retry"]')) {
            return false;
        }
        md.dataset.kept = "1";
        return true;
    });
    if (!marked) {
        throw new Error("the previous answer has no Retry to move");
    }
    await send(chat, "run a command");
    await waitFor("the bash card, done, with output", async () => {
        const cards = await chat.$$eval(".item.tool", (els) =>
            els.map((e) => ({ cls: e.className, name: e.querySelector(".tool-name")?.textContent, result: e.querySelector(".tool-result")?.textContent ?? "" })),
        );
        return cards.some((c) => c.name === "bash" && c.cls.includes("tool-done") && c.result.includes("second-line"));
    });
    await idle(chat);
    const retry = await chat.$$eval(".item.assistant", (els) =>
        els.map((e) => ({ retry: !!e.querySelector('[data-action="retry"]'), kept: !!e.querySelector(':scope > .md[data-kept="1"]') })),
    );
    const keptAt = retry.findIndex((r) => r.kept);
    if (keptAt < 0 || retry[keptAt].retry || !retry[retry.length - 1].retry || retry.filter((r) => r.retry).length !== 1) {
        throw new Error(`Retry should be on the last answer only, and the previous answer not drawn again: ${JSON.stringify(retry)}`);
    }
});

test("slash commands: completion, /mode ask; a review: edit the proposal, accept it", async () => {
    const chat = await ensureChat();
    await chat.fill("#input", "");
    await chat.type("#input", "/mo");
    await waitFor("completions for /mo", async () => {
        const t = await text(chat, "#completions .completion-name");
        return t.includes("/mode") && t.includes("/model");
    });
    // Then the argument: zot/command/complete offers /mode's values; Tab takes one.
    await chat.fill("#input", "");
    await chat.type("#input", "/mode r");
    await waitFor("the argument completion of /mode", async () => (await text(chat, "#completions .arg-item .completion-name")) === "readonly");
    await chat.press("#input", "Tab");
    await waitFor("the completed argument", async () => (await chat.inputValue("#input")) === "/mode readonly");
    await chat.fill("#input", "");
    await askForChange(chat, "change it again", "hello review", "hello.txt");
    console.log(`     (the review diff is ${await diffLayout()})`);
    // The proposal is editable: change it before accepting.
    await proposalLine().click();
    await page.keyboard.press("End");
    await page.keyboard.type(" (edited)");
    await waitFor("the typed text in the proposal", async () => (await proposalText()).includes("hello review (edited)"));
    await shot("review.png");
    await reviewAction("Accept").click();
    await waitFor("the assistant after the review", async () => (await text(chat, ".item.assistant")).includes("Thanks for reviewing."));
    await idle(chat);
    await waitFor("the diff editor to close", async () => (await page.$$(DIFF)).length === 0);
    await waitFor("the user's version in the editor", async () => (await editorText()).includes("hello review (edited)"));
    await waitFor("the user's version on disk", async () => fs.readFileSync(path.join(ws, "hello.txt"), "utf8") === "hello review (edited)\n");
    const tool = await chat.$$eval(".item.tool", (els) => els.map((e) => e.querySelector(".tool-result")?.textContent ?? ""));
    if (!tool[tool.length - 1].includes("edited it before accepting")) {
        throw new Error(`the model was not told about the user's change: ${tool[tool.length - 1]}`);
    }
});

test("ask mode: a shell command waits for approval in a VS Code dialog", async () => {
    const chat = await ensureChat();
    await setMode(chat, "ask");
    await send(chat, "run something that needs approval");
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
    await idle(chat);
    await setMode(chat, "auto");
});

test("a review in a narrow window (inline diff): Accept and Reject visible and labelled, the proposal editable, Reject", async () => {
    // VS Code's own Chat takes the right of the window by default in 1.139:
    // the editor is narrower than the side-by-side breakpoint and the diff
    // renders inline. Narrow the window to get there on every version.
    await page.setViewportSize({ width: 1000, height: 800 });
    try {
        const chat = await ensureChat();
        await setMode(chat, "ask");
        await send(chat, "propose a change in a narrow window");
        await waitForProposal("hello narrow");
        const layout = await diffLayout();
        if (layout !== "inline") {
            throw new Error(`the diff is ${layout} in a 1000px window; this test is about the inline diff`);
        }
        // Inline, the old line is on screen too, but not part of the proposal.
        if ((await proposalText()).includes("hello review (edited)")) {
            throw new Error(`the deleted line was read as part of the proposal: ${await proposalText()}`);
        }
        await visibleAndLabelled(reviewAction("Accept"), "Accept");
        await visibleAndLabelled(reviewAction("Reject"), "Reject");
        await proposalLine().click();
        await page.keyboard.press("End");
        await page.keyboard.type(" (typed)");
        await waitFor("the typed text in the proposal", async () => (await proposalText()).includes("hello narrow (typed)"));
        await shot("review-narrow.png");
        // Reject asks why. Escape goes back to the review, nothing rejected.
        await reviewAction("Reject").click();
        const why = page.locator(`${QUICK_INPUT} input`).first();
        await waitFor("the reason box", async () => (await page.$eval(QUICK_INPUT, (e) => e.textContent)).includes("Reject zot's change"));
        await why.press("Escape");
        await waitFor("the reason box to close", async () => !(await quickInputOpen()));
        if ((await page.$$(DIFF)).length === 0 || !(await proposalText()).includes("hello narrow (typed)")) {
            throw new Error("Escape in the reason box left the review");
        }
        await reviewAction("Reject").click();
        await waitFor("the reason box again", async () => (await page.$eval(QUICK_INPUT, (e) => e.textContent)).includes("Reject zot's change"));
        await why.fill("keep the greeting as it was");
        await why.press("Enter");
        await waitFor("the assistant after the rejection", async () => (await text(chat, ".item.assistant")).includes("Left it as it was."));
        await idle(chat);
        await waitFor("the diff editor to close", async () => (await page.$$(DIFF)).length === 0);
        await waitFor("the file unchanged on disk", async () => fs.readFileSync(path.join(ws, "hello.txt"), "utf8") === "hello review (edited)\n");
        // ... and in the editor: the rejected proposal did not land unsaved.
        await openFile("hello.txt", "hello review (edited)");
        if ((await editorText()).includes("hello narrow") || (await tabDirty("hello.txt"))) {
            throw new Error(`the rejected proposal is in the editor: ${await editorText()}`);
        }
        const tool = await chat.$$eval(".item.tool", (els) => els.map((e) => e.querySelector(".tool-result")?.textContent ?? ""));
        // The model is told "rejected" and the user's words, verbatim, nothing invented.
        const told = tool[tool.length - 1];
        if (!/rejected/i.test(told) || !told.includes("The user said: keep the greeting as it was") || /user rejected the change/.test(told)) {
            throw new Error(`the model was not told the rejection with the user's words: ${told}`);
        }
        await setMode(chat, "auto");
    } finally {
        await page.setViewportSize(VIEWPORT);
    }
});

test("an extension panel: /todos opens it, keys re-render it in place, esc closes it", async () => {
    const chat = await ensureChat();
    await chat.fill("#input", "");
    await chat.type("#input", "/to");
    await waitFor("/todos in the completions", async () => (await text(chat, "#completions .completion-name")).includes("/todos")).catch(async (e) => {
        // Say what the user saw, and what zot last reported, so a failure names its side.
        const input = await chat.$eval("#input", (i) => i.value).catch((err) => firstLine(err));
        const shown = await text(chat, "#completions").catch((err) => firstLine(err));
        const chats = page.frames().filter((f) => !f.isDetached()).length;
        const changed = traceLog()
            .split("\n")
            .filter((l) => l.includes("zot/extensions/changed") || l.includes("'zot/commands'"))
            .slice(-4)
            .join(" | ");
        throw new Error(`${e.message}; the input: ${JSON.stringify(input)}; the completions: ${JSON.stringify(shown)}; frames: ${chats}; the trace: ${changed}`);
    });
    await shot("completion.png");
    await chat.press("#input", "Enter"); // completes to "/todos "
    await waitFor("the completed command", async () => (await chat.$eval("#input", (i) => i.value)) === "/todos ");
    await chat.press("#input", "Enter");
    const panel = await frameWith("#zot-panel", "the Todos panel");
    await waitFor("the panel's first render", async () => (await text(panel, "#lines")).includes("no todos"));
    const todosTab = page.getByRole("tab", { name: /Todos/ });
    await waitFor("the panel's tab", async () => (await todosTab.count()) === 1);
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
    await waitFor("the panel to close (the extension closed it)", async () => (await todosTab.count()) === 0);

    // Closed by the user (the tab's Close button, found by its accessible
    // name): zot/panel/closed goes to the server — once, only for this close.
    await send(chat, "/todos");
    const again = await frameWith("#zot-panel", "the Todos panel again");
    await waitFor("the panel's items", async () => (await text(again, "#lines")).includes("new item 2"));
    await todosTab.hover();
    await todosTab.getByRole("button", { name: /^Close/ }).click();
    await waitFor("the panel to close", async () => (await todosTab.count()) === 0);
    await waitFor("zot/panel/closed sent", async () => traceLog().includes("Sending notification 'zot/panel/closed'"));
    const closed = (traceLog().match(/Sending notification 'zot\/panel\/closed'/g) || []).length;
    if (closed !== 1) {
        throw new Error(`expected one zot/panel/closed (the user's close; the extension's own close is not reported back), saw ${closed}`);
    }
    const keys = (traceLog().match(/Sending notification 'zot\/panel\/key'/g) || []).length;
    if (keys < 4) {
        throw new Error(`expected 4 zot/panel/key notifications in the trace, saw ${keys}`);
    }
});

test("commands: Show Extensions, Reload Extensions, Select Model", async () => {
    const chat = await ensureChat();
    // The list is what zot reported when it opened: re-open until loaded.
    await openUntilListed(
        "the todo extension, loaded, in Show Extensions",
        () => runCommand("Zot: Show Extensions"),
        (rows) => rows.findIndex((r) => r.text.includes("todo") && r.text.includes("loaded")),
    );
    await closeQuickInput();
    await runCommand("Zot: Reload Extensions");
    await waitFor("the reload message", async () => (await toastText()).includes("reloaded extensions: 1 loaded of 1"));
    const before = await chat.$eval("#model", (s) => s.value);
    const i = await openUntilListed(
        `another model than ${before} in Select Model`,
        () => runCommand("Zot: Select Model"),
        (rows) => (rows.some((r) => r.label === before) ? rows.findIndex((r) => r.label && r.label !== before) : -1),
    );
    const other = (await quickRows())[i].label;
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(i).click();
    await waitFor(`the picker showing the new model ${other}`, async () => (await chat.$eval("#model", (s) => s.value)) === other);
    await waitFor("the status bar showing it", async () => (await statusItems()).some((t) => t.includes(`zot: ${other}`)));
    await chat.selectOption("#model", before);
    await waitFor("the first model back", async () => (await statusItems()).some((t) => t.includes(`zot: ${before}`)));
});

test("a burst of 20,000 deltas renders completely, drawn at most once per frame", async () => {
    const chat = await ensureChat();
    // Counts the chat's DOM writes to the transcript: those made in an
    // animation-frame callback, by the frame's timestamp (every callback
    // of one frame gets the same), and those made anywhere else.
    await chat.evaluate(() => {
        const draws = (window.__draws = { perFrame: {}, outside: 0 });
        const mo = new MutationObserver(() => draws.outside++);
        mo.observe(document.getElementById("transcript"), { childList: true, subtree: true, characterData: true, attributes: true });
        const raf = window.requestAnimationFrame.bind(window);
        window.requestAnimationFrame = (cb) =>
            raf((ts) => {
                cb(ts);
                if (mo.takeRecords().length > 0) {
                    draws.perFrame[ts] = (draws.perFrame[ts] ?? 0) + 1;
                }
            });
    });
    await send(chat, "burst");
    await waitFor("all the words", async () => {
        const t = await chat.$$eval(".item.assistant", (els) => els[els.length - 1].textContent);
        return (t.match(/word/g) || []).length === 20000;
    });
    await idle(chat);
    const draws = await chat.evaluate(() => window.__draws);
    const counts = Object.values(draws.perFrame);
    // At once, not on a frame: only the answer's first delta.
    if (draws.outside > 1) {
        throw new Error(`the transcript was written ${draws.outside} times outside animation frames (only the first delta may be): ${JSON.stringify(draws)}`);
    }
    if (counts.length === 0 || Math.max(...counts) > 1) {
        throw new Error(`want one write of the transcript per animation frame at most, and some: ${JSON.stringify(counts)}`);
    }
});

test("Stop aborts a long stream; the next prompt still works", async () => {
    const chat = await ensureChat();
    await send(chat, "stream for a long time");
    await waitFor("the stream to start", async () => (await chat.$$eval(".item.assistant", (els) => els[els.length - 1].textContent)).includes("tok tok tok"));
    await chat.click("#stop");
    await waitFor("the Stopped notice", async () => (await text(chat, ".item.notice")).includes("Stopped."));
    await idle(chat);
    const toks = (await chat.$$eval(".item.assistant", (els) => els[els.length - 1].textContent)).match(/tok/g).length;
    if (toks >= 100000) {
        throw new Error("the stream was not stopped");
    }
    await send(chat, "are you there?");
    await waitFor("the answer after the stop", async () => (await text(chat, ".item.assistant")).includes("Still here after the stop."));
    await idle(chat);
    await shot("chat-final.png");
});

test("Zot: Prompt with a selection adds a selection chip to the chat; it reaches the model as context", async () => {
    const chat = await ensureChat();
    await openFile("hello.txt", "hello review (edited)");
    // The status bar says "(N selected)" once the editor has the selection
    // (a click can land before the editor takes focus).
    await waitFor("the file selected in the editor", async () => {
        await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
        await page.keyboard.press("Control+A");
        await sleep(200);
        return (await statusItems()).some((t) => /\(\d+ selected\)/.test(t));
    });
    const before = (await modelRequests()).length;
    await runCommand("Zot: Prompt…");
    // No prompt box, nothing pasted: a chip above the chat's input.
    await waitFor("the selection chip above the input", async () => (await text(chat, "#chips .chip")).includes("hello.txt:1-1"));
    if ((await chat.$eval("#input", (i) => i.value)).includes("hello review")) {
        throw new Error("the selection was pasted into the input");
    }
    await send(chat, "what is this?");
    await waitFor("the prompt with its chips", async () => {
        const t = await text(chat, ".item.user .msg-chips");
        return t.includes("hello.txt:1-1");
    });
    if ((await text(chat, ".item.user")).includes("<context")) {
        throw new Error("a context block is shown as text in the user's message");
    }
    const body = await requestNumber(before + 1);
    const last = requestTexts(body).filter((m) => m.role === "user").pop();
    if (last.texts[0] !== "what is this?" || !last.texts.some((t) => t.startsWith('<context kind="selection" label="hello.txt:1-1"') && t.includes("hello review (edited)"))) {
        throw new Error(`the model did not get the selection as context: ${JSON.stringify(last).slice(0, 600)}`);
    }
    await waitFor("the answer", async () => (await text(chat, ".item.assistant")).includes("It is a greeting."));
    await idle(chat);
    // The model's thinking: a collapsed section above the answer; opened, it reads.
    const thinking = chat.locator(".item.assistant", { hasText: "It is a greeting." }).last().locator("details.thinking");
    await waitFor("the collapsed Thinking section", async () => (await thinking.count()) === 1 && !(await thinking.evaluate((d) => d.open)));
    const label = (await thinking.locator("summary").textContent()) ?? "";
    if (!label.includes("Thinking")) {
        throw new Error(`the thinking section is labelled ${JSON.stringify(label)}`);
    }
    if (await thinking.locator(".thinking-text").isVisible()) {
        throw new Error("the thinking is shown although collapsed");
    }
    await thinking.locator("summary").click();
    await waitFor("the thinking text, opened", async () => (await thinking.locator(".thinking-text").textContent()).includes("a greeting."));
    await shot("thinking.png");
});

test("new session clears the chat; session history brings the first one back", async () => {
    const chat = await ensureChat();
    await page.locator('.action-label[aria-label^="New Session"]').first().click();
    await waitFor("an empty transcript with the new-session notice", async () => {
        const kinds = await chat.$$eval("#transcript .item", (els) => els.map((e) => e.className));
        return kinds.length === 1 && (await text(chat, ".item.notice")).includes("New session");
    });
    const i = await openUntilListed(
        "the first session in the history",
        () => page.locator('.action-label[aria-label^="Resume Session"]').first().click(),
        (rows) => rows.findIndex((r) => r.text.includes("Please edit hello.txt")),
    );
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(i).click();
    await waitFor("the first session's transcript", async () => {
        const users = await text(chat, ".item.user");
        return users.includes("Please edit hello.txt") && (await text(chat, ".item.tool .tool-name")).includes("bash");
    });
    await waitFor("the resumed notice", async () => (await text(chat, ".item.notice")).includes("Resumed session"));
});

/** The pids of this run's `zot lsp` processes started from ZOT_BIN. */
function zotLspPids() {
    return runProcesses()
        .filter((p) => p.argv[0] === process.env.ZOT_BIN && p.argv[1] === "lsp")
        .map((p) => p.pid);
}

const STREAM_DESTROYED = /ERR_STREAM_DESTROYED|write after a stream was destroyed/;

test("zot lsp crashes during a review: the review closes, zot is restarted and resumes the session", async () => {
    const chat = await ensureChat();
    await askForChange(chat, "change it, then crash", "hello crash", "hello.txt");
    const pids = await waitFor("one zot lsp process", async () => {
        const p = zotLspPids();
        return p.length === 1 ? p : undefined;
    });
    process.kill(pids[0], "SIGKILL");
    await waitFor("the review diff to close", async () => (await page.$$(DIFF)).length === 0);
    // VS Code cannot close a message: its Accept now only says what happened.
    await clickInNotificationCenter("zot wants to change hello.txt (edit)", "Accept");
    await waitFor("the status bar: withdrawn", async () => (await statusItems()).some((t) => t.includes("zot: the change to hello.txt was already withdrawn")));
    await waitFor("a new zot lsp process", async () => {
        const p = zotLspPids();
        return p.length === 1 && p[0] !== pids[0];
    });
    await waitFor("the restart notice", async () => (await text(chat, ".item.notice")).includes("restarted"));
    await waitFor("the resumed transcript", async () => (await text(chat, ".item.user")).includes("Please edit hello.txt"));
    await send(chat, "are you back?");
    await waitFor("an answer from the new process", async () => (await text(chat, ".item.assistant")).includes("Back after the crash."));
    await idle(chat);
    if (fs.readFileSync(path.join(ws, "hello.txt"), "utf8") !== "hello review (edited)\n") {
        throw new Error("the file changed although the review was never accepted");
    }
    // The review was settled without answering the dead connection.
    const bad = (extHostLog() + traceLog()).split("\n").filter((l) => STREAM_DESTROYED.test(l));
    if (bad.length) {
        throw new Error(`the extension wrote to the dead connection:\n${bad.slice(0, 3).join("\n")}`);
    }
});

// ------------------------------------------------------------------ settings the tests change

const settingsFiles = () => ["User", "Machine"].map((d) => path.join(path.dirname(ws), "ud", d, "settings.json"));

/** Changes user (and remote machine) settings as a user editing settings.json would. */
function changeSettings(change) {
    for (const f of settingsFiles()) {
        const s = JSON.parse(fs.readFileSync(f, "utf8"));
        change(s);
        fs.writeFileSync(f, JSON.stringify(s, null, 2));
    }
}

test("the chat in the dark and the light theme: code blocks framed, with their language", async () => {
    const chat = await ensureChat();
    await waitFor("a code block in the transcript", async () => (await chat.$$(".item.assistant .code-wrap")).length > 0);
    await chat.locator(".item.assistant .code-wrap").first().scrollIntoViewIfNeeded();
    changeSettings((s) => (s["workbench.colorTheme"] = "Default Dark Modern"));
    await waitFor("the dark theme", async () => (await page.$(".monaco-workbench.vs-dark")) !== null);
    await shot("chat-dark.png");
    changeSettings((s) => (s["workbench.colorTheme"] = "Default Light Modern"));
    try {
        await waitFor("the light theme", async () => (await page.$(".monaco-workbench.vs:not(.vs-dark)")) !== null);
        await waitFor("the code block drawn apart from the side bar", async () =>
            chat.$eval(".item.assistant .code-wrap", (el) => {
                const cs = getComputedStyle(el);
                const bg = getComputedStyle(document.body).backgroundColor;
                return cs.borderTopStyle === "solid" && parseFloat(cs.borderTopWidth) >= 1 && cs.borderTopColor !== bg && !/rgba\(0, 0, 0, 0\)/.test(cs.borderTopColor);
            }),
        );
        // The one-line input grows with its text and shows no scrollbar.
        await chat.fill("#input", "one line");
        await chat.dispatchEvent("#input", "input");
        const fits = await chat.$eval("#input", (i) => ({ over: getComputedStyle(i).overflowY, sh: i.scrollHeight, ch: i.clientHeight }));
        if (fits.over !== "hidden" || fits.sh > fits.ch) {
            throw new Error(`the one-line input scrolls: ${JSON.stringify(fits)}`);
        }
        await chat.fill("#input", "");
        await chat.dispatchEvent("#input", "input");
        const lang = await text(chat, ".item.assistant .code-wrap .code-lang");
        if (!lang.includes("go")) {
            throw new Error(`the code block's language label: ${JSON.stringify(lang)}`);
        }
        await shot("chat-light.png");
    } finally {
        changeSettings((s) => (s["workbench.colorTheme"] = "Default Dark Modern"));
    }
    await waitFor("the dark theme back", async () => (await page.$(".monaco-workbench.vs-dark")) !== null);
});

/** Restarts zot from the "settings changed" toast (as a user would). */
async function restartFromToast() {
    const restart = page.locator(".notifications-toasts .notification-list-item", { hasText: "settings changed" }).getByRole("button", { name: "Restart" });
    await restart.first().waitFor({ timeout: HANG });
    await restart.first().click();
}

test("a message that cannot be sent (no API key) stays in the input, one error with its fix; Set API Key fixes it", async () => {
    const chat = await ensureChat();
    const original = fs.readFileSync(settingsFiles()[0], "utf8");
    // No key anywhere, and the provider's own endpoint (a loopback base URL
    // needs no key): zot starts without an agent and says why.
    changeSettings((s) => {
        s["zot.serverArgs"] = [];
        s["zot.serverEnv"] = { ...s["zot.serverEnv"], ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" };
    });
    await restartFromToast();
    await waitFor("the no-API-key banner with its fix", async () => {
        const b = await text(chat, "#banner");
        return b.includes("no API key") && b.includes("Set API Key") && !b.includes("initializationOptions");
    });
    const notices = (await chat.$$(".item.notice.notice-error")).length;
    await send(chat, "keep this text");
    await waitFor("the text back in the input", async () => (await chat.$eval("#input", (i) => i.value)) === "keep this text");
    await shot("send-failed.png");
    const toastsAfterFailure = await toastText();
    // Checked now: each restart below reloads the transcript, which would
    // wipe a second error or a stray bubble before a later check saw it.
    if ((await chat.$$(".item.notice.notice-error")).length !== notices) {
        throw new Error(`the error was shown again inline: ${await text(chat, ".item.notice.notice-error")}`);
    }
    if ((await text(chat, ".item.user")).includes("keep this text")) {
        throw new Error("the message that was not sent is shown as sent");
    }
    // The banner's button: the key goes to VS Code's secret storage, zot restarts with it.
    await chat.locator("#banner button", { hasText: "Set API Key" }).click();
    const box = page.locator(`${QUICK_INPUT} input`).first();
    await waitFor("the API key box", async () => (await page.$eval(QUICK_INPUT, (e) => e.textContent)).includes("API key"));
    if ((await box.getAttribute("type")) !== "password") {
        throw new Error("the API key box shows the key");
    }
    await box.fill("test-key");
    await box.press("Enter");
    await waitFor("the banner gone (zot has a key now)", async () => chat.$eval("#banner", (b) => b.hidden));
    if (fs.readFileSync(settingsFiles()[0], "utf8").includes("test-key")) {
        throw new Error("the API key was written to settings.json");
    }
    // Back to the scripted model; the kept text is still there to send.
    const keyed = await waitFor("one zot lsp process", async () => {
        const p = zotLspPids();
        return p.length === 1 ? p : undefined;
    });
    for (const f of settingsFiles()) {
        fs.writeFileSync(f, original);
    }
    await restartFromToast();
    await waitFor("a new zot lsp process", async () => {
        const p = zotLspPids();
        return p.length === 1 && p[0] !== keyed[0];
    });
    await waitFor("zot back with the scripted model", async () => (await statusItems()).some((t) => /zot: \S/.test(t) && !/loading|spin/.test(t)) && (await chat.$eval("#banner", (b) => b.hidden)));
    await waitFor("the models of the scripted provider in the picker", async () => (await chat.$$eval("#model option", (o) => o.length)) > 0);
    if ((await chat.$eval("#input", (i) => i.value)) !== "keep this text") {
        throw new Error("the kept text left the input");
    }
    await chat.press("#input", "Enter");
    await waitFor("the kept message sent and answered", async () => (await text(chat, ".item.assistant")).includes("Sent after all."));
    await idle(chat);
    if (toastsAfterFailure.includes("API key")) {
        throw new Error(`the error was shown again as a toast: ${toastsAfterFailure}`);
    }
    const sent = (await text(chat, ".item.user")).split("\n").filter((l) => l.includes("keep this text")).length;
    if (sent !== 1) {
        throw new Error(`the message should appear once, when sent; it appears ${sent} times`);
    }
});

test("a window reload brings the last conversation back, scrolled to the end, with the input's draft", async () => {
    const chat = await ensureChat();
    await chat.fill("#input", "a half-typed draft");
    await chat.dispatchEvent("#input", "input");
    // A user pauses before reloading; the test waits until the extension
    // host has the draft (its file in the workspace storage).
    await waitFor("the draft kept by the extension host", async () => findFiles(path.join(path.dirname(ws), "ud"), "chat-draft.txt").some((f) => fs.readFileSync(f, "utf8") === "a half-typed draft"));
    await page.reload({ waitUntil: "domcontentloaded", timeout: HANG });
    await page.waitForSelector(".monaco-workbench", { timeout: HANG });
    const again = await ensureChat();
    await waitFor("the last conversation back", async () => (await text(again, ".item.assistant")).includes("Sent after all."));
    await waitFor("the restored notice", async () => (await text(again, ".item.notice")).includes("Restored the last conversation"));
    await waitFor("the transcript scrolled to the end", async () =>
        again.$eval("#transcript", (t) => t.scrollHeight - t.scrollTop - t.clientHeight < 40),
    );
    // Whichever chat frame is live now (VS Code may make the view again).
    await waitFor("the draft back in the input", async () => {
        const values = [];
        for (const f of page.frames()) {
            if (!f.isDetached() && (await f.$("#zot-chat").catch(() => null))) {
                values.push(await f.$eval("#input", (i) => i.value));
            }
        }
        if (!values.includes("a half-typed draft")) {
            throw new Error(`the chat's input holds ${JSON.stringify(values)}`);
        }
        return true;
    });
    await shot("reload.png");
    await again.fill("#input", "");
    await again.dispatchEvent("#input", "input");
});


// ------------------------------------------------------------------ context, actions on answers

const CALC = "def add(a, b):\n    return a + b\n";

test("@ in the input completes workspace files; the chip reaches the model as a context block", async () => {
    fs.writeFileSync(path.join(ws, "calc.py"), CALC);
    const chat = await ensureChat();
    const before = (await modelRequests()).length;
    await chat.fill("#input", "");
    await chat.type("#input", "@cal");
    const item = chat.locator("#completions .at-item", { hasText: "calc.py" }).first();
    await waitFor("calc.py in the @ list", async () => (await item.count()) > 0);
    await item.dispatchEvent("mousedown");
    await waitFor("the calc.py chip above the input", async () => (await text(chat, "#chips .chip:not(.chip-active)")).includes("calc.py"));
    if ((await chat.$eval("#input", (i) => i.value)).includes("@")) {
        throw new Error("the @word stayed in the input");
    }
    await chat.type("#input", "what does this do?");
    await shot("chips.png");
    await chat.press("#input", "Enter");
    await waitFor("the answer", async () => (await text(chat, ".item.assistant")).includes("It adds two numbers."));
    await idle(chat);
    const body = await requestNumber(before + 1);
    const last = requestTexts(body).filter((m) => m.role === "user").pop();
    const block = last.texts.find((t) => t.startsWith('<context kind="file" label="calc.py"'));
    if (last.texts[0] !== "what does this do?" || !block || !block.includes("def add(a, b):") || !block.trimEnd().endsWith("</context>")) {
        throw new Error(`the model did not get calc.py as context: ${JSON.stringify(last).slice(0, 800)}`);
    }
    const chips = (await chat.locator(".item.user").last().locator(".msg-chips").textContent()) ?? "";
    if (!chips.includes("calc.py")) {
        throw new Error(`the sent message shows no calc.py chip: ${chips}`);
    }
    if ((await text(chat, "#chips .chip:not(.chip-active)")) !== "") {
        throw new Error("the chip stayed above the input after sending");
    }
});

test("Retry replaces the last answer; Edit and resend replaces the prompt and what followed", async () => {
    const chat = await ensureChat();
    const before = (await modelRequests()).length;
    const retry = chat.locator(".item.assistant", { hasText: "It adds two numbers." }).last().locator('.msg-action[data-action="retry"]');
    await retry.click();
    await waitFor("the retried answer", async () => (await text(chat, ".item.assistant")).includes("It adds two numbers (retried)."));
    await idle(chat);
    const answers = (await chat.$$eval(".item.assistant", (els) => els.map((e) => e.textContent))).filter((t) => t.includes("It adds two numbers"));
    if (answers.length !== 1 || !answers[0].includes("(retried)")) {
        throw new Error(`the old answer is still shown, or the retried one is not: ${JSON.stringify(answers)}`);
    }
    const retried = JSON.stringify(requestTexts(await requestNumber(before + 1)));
    if (retried.includes("It adds two numbers.") || !retried.includes("what does this do?") || !retried.includes('<context kind=\\"file\\" label=\\"calc.py\\"')) {
        throw new Error(`the retried request: ${retried.slice(-800)}`);
    }

    const prompt = chat.locator(".item.user", { hasText: "what does this do?" }).last();
    await prompt.hover();
    await prompt.locator('.msg-action[data-action="edit"]').click();
    await waitFor("the message in the input, being edited", async () => (await chat.$eval("#input", (i) => i.value)) === "what does this do?" && !(await chat.$eval("#editing", (e) => e.hidden)));
    await waitFor("its chip back above the input", async () => (await text(chat, "#chips .chip:not(.chip-active)")).includes("calc.py"));
    await send(chat, "explain calc.py briefly");
    await waitFor("the answer to the edited prompt", async () => (await text(chat, ".item.assistant")).includes("Briefly: addition."));
    await idle(chat);
    const users = await text(chat, ".item.user");
    const all = await text(chat, ".item.assistant");
    if (users.includes("what does this do?") || !users.includes("explain calc.py briefly") || all.includes("It adds two numbers")) {
        throw new Error(`the edited prompt did not replace the old one and its answer: ${users} / ${all}`);
    }
    const resent = requestTexts(await requestNumber(before + 2));
    const flat = JSON.stringify(resent);
    if (flat.includes("what does this do?") || flat.includes("It adds two numbers") || resent.filter((m) => m.role === "user").pop().texts[0] !== "explain calc.py briefly") {
        throw new Error(`the resent request: ${flat.slice(-800)}`);
    }
    await shot("retry-edit.png");
});

test("Apply on a code block puts the code into the open file (undoable, unsaved)", async () => {
    const chat = await ensureChat();
    await openFile("calc.py", "return a + b");
    await send(chat, "check calc.py");
    await waitFor("the answer with code", async () => (await text(chat, ".item.assistant")).includes("Here it is, checked"));
    await idle(chat);
    const apply = chat.locator(".item.assistant", { hasText: "Here it is, checked" }).last().locator('.code-action[data-action="apply"]');
    await apply.click();
    await waitFor("the code in the editor", async () => (await editorText()).includes("return a + b  # checked"));
    await waitFor("calc.py's tab dirty (the edit not saved)", async () => tabDirty("calc.py"));
    if (fs.readFileSync(path.join(ws, "calc.py"), "utf8") !== CALC) {
        throw new Error("Apply saved the file; the edit should stay in the editor, unsaved");
    }
    // One undo takes it back; redo puts it back for the next tests.
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Z");
    await waitFor("the apply undone", async () => !(await editorText()).includes("# checked") && (await editorText()).includes("return a + b"));
    await page.keyboard.press("Control+Shift+Z");
    await waitFor("the apply redone", async () => (await editorText()).includes("return a + b  # checked"));
    if (fs.readFileSync(path.join(ws, "calc.py"), "utf8") !== CALC) {
        throw new Error("calc.py was saved after the apply");
    }
});

test("ask mode: the edit card shows the diff and Accept from the card applies it (the notification up)", async () => {
    const chat = await ensureChat();
    await setMode(chat, "ask");
    await clearNotifications();
    await send(chat, "change calc.py");
    const card = chat.locator(".item.tool", { hasText: "calc.py" }).last();
    const accept = card.locator('.tool-action[data-action="accept"]');
    await waitFor("Accept on the card", async () => (await accept.count()) > 0);
    await waitFor("the review diff editor", async () => (await page.$$(`${DIFF} .editor.modified .view-lines`)).length > 0);
    await reviewButtonsLabelled(toast("zot wants to change calc.py (edit)"));
    const added = (await card.locator(".diff-add").allTextContents()).join("\n");
    const removed = (await card.locator(".diff-del").allTextContents()).join("\n");
    if (!added.includes("# checked twice") || !removed.includes("# checked") || removed.includes("twice")) {
        throw new Error(`the card's diff: +${added} −${removed}`);
    }
    if ((await card.locator('.tool-action[data-action="diff"]').count()) !== 1) {
        throw new Error("no Open diff on the card");
    }
    await shot("card-review.png");
    await accept.click();
    await waitFor("the answer after accepting", async () => (await text(chat, ".item.assistant")).includes("Accepted from the card."));
    await idle(chat);
    await waitFor("the diff editor to close", async () => (await page.$$(DIFF)).length === 0);
    await waitFor("the change in the editor", async () => (await editorText()).includes("# checked twice"));
    if ((await card.locator('.tool-action[data-action="accept"]').count()) !== 0) {
        throw new Error("Accept stayed on the card after the review");
    }
    // The notification stays (VS Code cannot close it); its Reject now
    // rejects nothing (no reason asked) and says so.
    await clickInNotificationCenter("zot wants to change calc.py (edit)", "Reject");
    await waitFor("the status bar: already accepted", async () => (await statusItems()).some((t) => t.includes("zot: the change to calc.py was already accepted")));
    await waitFor("the change still in the editor", async () => (await editorText()).includes("# checked twice"));
    await setMode(chat, "auto");
});

test("ask mode: Open Diff and Accept in the review notification (labelled buttons) apply the edit", async () => {
    const chat = await ensureChat();
    const note = await askForChange(chat, "change calc.py once more", "# checked thrice", "calc.py");
    await waitFor("the notification faded in (for the screenshot)", async () => note.evaluate((e) => !!e.closest(".notification-toast.notification-fade-in-done")));
    await shot("review-notification.png");
    // Open Diff: the diff, and the notification again (a click closes a message).
    const first = await note.elementHandle({ timeout: HANG });
    await notificationButton(note, "Open Diff").click();
    await waitFor("the clicked notification to close", async () => !(await first.evaluate((e) => e.isConnected)));
    await waitFor("the review diff in front", async () => (await activeTab()).includes("↔"));
    await reviewButtonsLabelled(note);
    await notificationButton(note, "Accept").click();
    await waitFor("the answer after accepting", async () => (await text(chat, ".item.assistant")).includes("Accepted from the notification."));
    await idle(chat);
    await waitFor("the diff editor to close", async () => (await page.$$(DIFF)).length === 0);
    await waitFor("the change in the editor", async () => (await editorText()).includes("# checked thrice"));
    await setMode(chat, "auto");
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

/**
 * After a failed test: back to a known state, so the next test starts
 * clean — no palette or modal dialog open, no review pending (its diff
 * rejected), no run in progress (stopped), the normal window size.
 */
async function reset() {
    await page.setViewportSize(VIEWPORT);
    for (let i = 0; i < 3 && ((await quickInputOpen()) || (await page.$(".monaco-dialog-box"))); i++) {
        await page.keyboard.press("Escape");
        await sleep(200);
    }
    if ((await page.$$(DIFF)).length > 0) {
        await runCommand("Zot: Reject Proposed Change", { maxOpens: 3 }).catch(() => undefined);
        // It asks why (optional): Enter rejects without a reason.
        await page.waitForSelector(`${QUICK_INPUT} input`, { timeout: 5_000 }).then(() => page.keyboard.press("Enter")).catch(() => undefined);
        await waitFor("the review diff to close", async () => (await page.$$(DIFF)).length === 0, 10_000).catch(() => undefined);
    }
    if (chatFrame && !chatFrame.isDetached()) {
        const running = await chatFrame.$eval("#stop", (b) => !b.hidden).catch(() => false);
        if (running) {
            await chatFrame.click("#stop").catch(() => undefined);
            await idle(chatFrame).catch(() => undefined);
        }
    }
}

(async () => {
    const t0 = Date.now();
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    page = await browser.newPage({ viewport: VIEWPORT });
    usePage(page);
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
            await reset().catch((r) => console.log(`     (reset after the failure: ${firstLine(r)})`));
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

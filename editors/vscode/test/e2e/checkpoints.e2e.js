// End-to-end test in real VS Code (code-server): restore the code from
// the chat. A turn edits hello.txt (open in an editor, with the user's
// unsaved typing) and bash adds made.txt; the user message's "Restore checkpoint…" → Compare shows the
// diff to the checkpoint (a multi-file diff), → Restore code puts the
// disk and the open editor back and removes the added file.
// scripts/e2e.sh runs it (ZOT_E2E_SPECS=checkpoints for this spec alone)
// in its own code-server, workspace (hello.txt: "hello world") and
// scripted LLM (checkpoints-script.json).
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go).

const fs = require("fs");
const path = require("path");
const { runSpec, waitFor, frameWith, statusItems, quickInput, runCommand, sleep, firstLine, sendTo, idleOf, toolResultsOf, openChat } = require("./harness");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "checkpoints");
const HANG = 90_000; // a wait this long is a hang, not a slow machine
const QUICK_INPUT = ".quick-input-widget:not([style*='display: none'])";

fs.mkdirSync(art, { recursive: true });

let page;

let chat;
async function ensureChat() {
    chat = await openChat();
    return chat;
}

const send = (text) => sendTo(chat, text);
const idle = () => idleOf(chat);
const toolResults = () => toolResultsOf(chat);

async function editorText() {
    return (await page.$$eval(".monaco-editor .view-lines", (els) => els.map((e) => e.innerText).join("\n"))).replace(/\u00a0/g, " ");
}

/** Whether the hello.txt tab shows unsaved changes. */
async function helloDirty() {
    return page.$$eval(".tabs-container .tab", (tabs) => tabs.some((t) => (t.getAttribute("aria-label") ?? "").startsWith("hello.txt") && t.classList.contains("dirty")));
}

async function toastText() {
    return page.$$eval(".notifications-toasts .notification-list-item", (els) => els.map((e) => e.textContent).join("\n"));
}

/** Opens hello.txt with Quick Open, as a user would (the Zot view hides the explorer). */
async function openHello() {
    await waitFor("hello.txt in Quick Open", async () => {
        if (await page.$(QUICK_INPUT)) {
            await page.keyboard.press("Escape");
        }
        await page.keyboard.press("Control+P");
        await page.waitForSelector(`${QUICK_INPUT} input`, { timeout: 10_000 });
        await page.keyboard.type("hello.txt");
        await sleep(500);
        const rows = (await quickInput())?.rows ?? [];
        const i = rows.indexOf("hello.txt");
        if (i < 0) {
            await page.keyboard.press("Escape");
            return false;
        }
        await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(i).click();
        return true;
    });
    await waitFor("hello.txt in an editor", async () => (await editorText()).includes("hello"));
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
const read = (f) => fs.readFileSync(path.join(ws, f), "utf8");
const exists = (f) => fs.existsSync(path.join(ws, f));

/** Picks the row labelled label (codicons aside) in the open quick pick. */
async function pickRow(label) {
    await waitFor(`"${label}" in the quick pick`, async () => ((await quickInput())?.rows ?? []).some((r) => r.endsWith(label)));
    const rows = (await quickInput()).rows;
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(rows.findIndex((r) => r.endsWith(label))).click();
}

/** The user message's "Restore checkpoint…", then the choice label. */
async function restoreChoice(promptText, label) {
    const prompt = chat.locator(".item.user", { hasText: promptText }).last();
    await prompt.hover();
    await prompt.locator('.msg-action[data-action="checkpoint"]').click();
    await waitFor("the checkpoint's choices", async () => ((await quickInput())?.title ?? "").includes(`checkpoint before "${promptText}"`));
    await pickRow(label);
}

async function notices() {
    return chat.$$eval(".item.notice", (els) => els.map((e) => e.textContent ?? "").join("\n"));
}

/** Whether the hello.txt tab shows unsaved changes. */
async function helloDirty() {
    return page.$$eval(".tabs-container .tab", (tabs) => tabs.some((t) => (t.getAttribute("aria-label") ?? "").startsWith("hello.txt") && t.classList.contains("dirty")));
}

test("a turn edits a file and bash adds one; Compare shows the diff to the checkpoint", async () => {
    await ensureChat();
    await openHello();
    // Unsaved typing: the checkpoint records the buffer too (e2e.sh
    // turns autosave off).
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.type("typed, not saved");
    await page.keyboard.press("Enter");
    await waitFor("the typing in the editor, dirty", async () => (await editorText()).includes("typed, not saved") && (await helloDirty()));
    await ensureChat();
    await send("change hello");
    await waitFor("the bash result", async () => (await toolResults()).some((t) => t.includes("bash-done")));
    await idle();
    if (read("hello.txt") !== "hello zot\n" || read("made.txt") !== "made by bash\n") {
        throw new Error(`after the turn: hello.txt ${JSON.stringify(read("hello.txt"))}, made.txt ${exists("made.txt")}`);
    }
    await restoreChoice("change hello", "Compare");
    // The multi-file diff: its title, and both files with the checkpoint's
    // text beside now's.
    await waitFor("the compare view with both files", async () => {
        const t = await page.$$eval(".tabs-container .tab", (tabs) => tabs.map((x) => x.getAttribute("aria-label") ?? "").join("|"));
        const body = await editorText();
        return t.includes('since "change hello"') && body.includes("hello world") && body.includes("hello zot") && body.includes("made by bash");
    });
    await page.screenshot({ path: path.join(art, "compare.png") });
    await page.keyboard.press("Control+W"); // close the compare view
});

test("Restore code: the disk and the open editor get the checkpoint's text; the added file goes", async () => {
    await ensureChat();
    await openHello();
    await waitFor("the editor showing the typing and zot's edit", async () => {
        const t = await editorText();
        return t.includes("typed, not saved") && t.includes("hello zot");
    });
    await ensureChat();
    await restoreChoice("change hello", "Restore code");
    await waitFor("the files restored on disk", async () => read("hello.txt") === "hello world\n" && !exists("made.txt"));
    await waitFor("the restored notice", async () => (await notices()).includes('Restored 2 file(s) to before "change hello"'));
    await openHello();
    // The buffer gets the checkpoint's text through the editor: the
    // unsaved typing back, zot's edit gone (the disk alone would not show
    // in a dirty buffer).
    await waitFor("the editor's buffer showing the restored text", async () => {
        const t = await editorText();
        return t.includes("typed, not saved") && t.includes("hello world") && !t.includes("hello zot");
    });
    // The conversation stays: code only.
    if (!(await chat.$$eval(".item.assistant", (els) => els.some((e) => (e.textContent ?? "").includes("made made.txt"))))) {
        throw new Error("the conversation changed on a code-only restore");
    }
    await page.screenshot({ path: path.join(art, "restored.png") });
});

runSpec(tests, { url, art, onPage: (p) => (page = p) });

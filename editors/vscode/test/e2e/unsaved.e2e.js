// End-to-end test in real VS Code (code-server): your unsaved typing is
// yours. The user types in hello.txt without saving; the model edits the
// same file and runs bash. bash sees the saved text plus zot's edit, the
// file on disk is that, the editor keeps the user's text plus zot's edit,
// still dirty, and the user's later save succeeds without VS Code's "The
// content of the file is newer" conflict.
// scripts/e2e.sh runs it (ZOT_E2E_SPECS=unsaved for this spec alone) in
// its own code-server, workspace (hello.txt: "hello world") and scripted
// LLM (unsaved-script.json).
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go).

const fs = require("fs");
const path = require("path");
const { runSpec, waitFor, frameWith, statusItems, quickInput, runCommand, sleep, firstLine, sendTo, idleOf, toolResultsOf, openChat } = require("./harness");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "unsaved");
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
const hello = () => fs.readFileSync(path.join(ws, "hello.txt"), "utf8");

test("unsaved typing stays unsaved: disk = saved text + zot's edit, editor = typing + zot's edit, still dirty", async () => {
    // VS Code in the browser saves after a delay by default; desktop VS
    // Code does not, and unsaved typing is what this is about: e2e.sh
    // turns autosave off in the user's settings before code-server starts.
    await ensureChat();
    await openHello();
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.type("typed, not saved");
    await page.keyboard.press("Enter");
    await waitFor("the typing in the editor, dirty", async () => (await editorText()).includes("typed, not saved") && (await helloDirty()));
    if (hello() !== "hello world\n") {
        throw new Error(`disk before the run: ${JSON.stringify(hello())}`);
    }
    await ensureChat();
    await send("edit hello.txt and show it");
    await waitFor("the bash result", async () => (await toolResults()).some((t) => t.includes("disk-end")));
    await idle();
    const bash = (await toolResults()).find((t) => t.includes("disk-end")) ?? "";
    if (!bash.includes("hello zot") || bash.includes("typed, not saved")) {
        throw new Error(`bash saw: ${bash}`);
    }
    if (hello() !== "hello zot\n") {
        throw new Error(`disk after the run: ${JSON.stringify(hello())}`);
    }
    await waitFor("the editor: the typing and zot's edit", async () => {
        const t = await editorText();
        return t.includes("typed, not saved") && t.includes("hello zot") && !t.includes("hello world");
    });
    if (!(await helloDirty())) {
        throw new Error("the editor is no longer dirty: the user's typing was saved");
    }
    await page.screenshot({ path: path.join(art, "unsaved-after-run.png") });
});

test("the user's save later writes both, with no conflict question", async () => {
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+S");
    await waitFor("the save on disk, or a conflict", async () => hello() === "typed, not saved\nhello zot\n" || /newer|Failed to save/i.test(await toastText()));
    const toasts = await toastText();
    if (/newer|Failed to save|compare/i.test(toasts)) {
        await page.screenshot({ path: path.join(art, "unsaved-conflict.png") });
        throw new Error(`VS Code reported a conflict: ${toasts}`);
    }
    await waitFor("the tab no longer dirty", async () => !(await helloDirty()));
});

runSpec(tests, { url, art, onPage: (p) => (page = p) });

// End-to-end test of a pi extension in real VS Code (code-server):
// extensions/testdata/piext/editors.ts, written against pi's ExtensionAPI
// and run unmodified by the pi runtime the package carries. Its
// permission-gate style question is a QuickPick with its own text and
// choices (Yes → the command runs; No → blocked, the model is told),
// /pistatus shows its status in the status bar and its widget above the
// chat's input, its registerShortcut runs from the palette ("Zot: Run
// Extension Shortcut") and from a keybinding (keybindings.json: ctrl+alt+y
// → zot.runShortcut with the key as args), and zot.piFlags reaches its
// getFlag; /pidraft reads the chat's input (getEditorText) and sets and
// pastes into it (setEditorText, pasteToEditor); /pieditor's ui.editor is
// an untitled document the user edits and confirms with Done. scripts/e2e.sh runs it (ZOT_E2E_SPECS=pi for this spec alone)
// with pi-script.json as the scripted LLM's replies, consumed in order.
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go), LLM_URL (the scripted LLM).

const fs = require("fs");
const path = require("path");
const { runSpec, waitFor, statusItems, quickInput, runCommand, sleep, firstLine, sendTo, idleOf, toolResultsOf } = require("./harness");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "pi");
const HANG = 90_000; // a wait this long is a hang, not a slow machine
const QUICK_INPUT = ".quick-input-widget:not([style*='display: none'])";

fs.mkdirSync(art, { recursive: true });

let page;

/** The frames that hold selector, each with whether it is on screen. */
async function framesWith(selector) {
    const out = [];
    for (const f of page.frames()) {
        if (!f.isDetached() && (await f.$(selector).catch(() => null))) {
            const box = await f
                .frameElement()
                .then((el) => el.boundingBox())
                .catch(() => null);
            out.push({ frame: f, shown: !!box && box.width > 0 && box.height > 0 });
        }
    }
    return out;
}

/** The webview frame on screen that holds selector (webviews are nested
 * iframes; one VS Code keeps for a view it hid is not the one the user sees). */
async function frameWith(selector, what) {
    return waitFor(what, async () => (await framesWith(selector)).find((x) => x.shown)?.frame);
}

let chat;
async function ensureChat() {
    await waitFor("the zot status bar item (the extension active)", async () => (await statusItems()).some((t) => /zot/.test(t)));
    await runCommand("Zot: Focus Chat");
    chat = await frameWith("#zot-chat", "the chat webview");
    const n = (await framesWith("#zot-chat")).length;
    if (n > 1) {
        console.log(`     (${n} chat frames)`);
    }
    await waitFor("a model in the chat's picker", async () => (await chat.$$eval("#model option", (o) => o.length)) > 0);
    return chat;
}

const send = (text) => sendTo(chat, text);
const idle = () => idleOf(chat);
const toolResults = () => toolResultsOf(chat);

/** The bodies (JSON text) of the requests the scripted model got so far (zot mock-llm's GET /llmtest/requests). */
async function recordedRequests() {
    const r = await fetch(`${process.env.LLM_URL}/llmtest/requests`);
    if (!r.ok) {
        throw new Error(`GET /llmtest/requests: ${r.status}`);
    }
    return r.json();
}

const isModelRequest = (x) => x.body && x.body.messages;

async function modelRequests() {
    return (await recordedRequests()).filter(isModelRequest).map((x) => JSON.stringify(x.body));
}

/** Waits for the pi extension's QuickPick about command and picks choice. */
async function answerPi(command, choice) {
    const q = await waitFor(`the pi extension's question about ${command}`, async () => {
        const q = await quickInput();
        return q && q.title.includes("[editors]") && q.title.includes("Dangerous command:") && q.title.includes(command) ? q : undefined;
    });
    if (JSON.stringify(q.rows) !== JSON.stringify(["Yes", "No"])) {
        throw new Error(`the choices are not the extension's: ${JSON.stringify(q.rows)}`);
    }
    await page.screenshot({ path: path.join(art, `question-${choice}.png`) });
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(q.rows.indexOf(choice)).click();
    await waitFor("the question to close", async () => (await page.$(QUICK_INPUT)) === null);
}

async function assistantText() {
    return chat.$$eval(".item.assistant", (els) => els.map((e) => e.textContent).join("\n"));
}

async function widgetLines() {
    return chat.$$eval("#widgets:not([hidden]) .widget-line", (els) => els.map((e) => e.textContent));
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test("the pi extension asks in a QuickPick with its own text; Yes → the command runs", async () => {
    fs.mkdirSync(path.join(ws, "gone"), { recursive: true });
    await ensureChat();
    await send("clean up");
    await answerPi("rm -rf gone && echo removed-it", "Yes");
    await waitFor("the command's output in the chat", async () => (await chat.$$eval(".item.tool .tool-result", (els) => els.map((e) => e.textContent ?? ""))).some((t) => t.includes("removed-it") && !t.includes("echo")));
    await idle();
    if (fs.existsSync(path.join(ws, "gone"))) {
        throw new Error("the allowed command did not remove gone/");
    }
});

test("the pi extension: No → the command is blocked and the model is told", async () => {
    fs.mkdirSync(path.join(ws, "kept"), { recursive: true });
    await ensureChat();
    await send("remove kept");
    await answerPi("rm -rf kept && echo removed-kept", "No");
    await waitFor("the block in the tool card", async () => (await toolResults()).some((t) => t.includes("Blocked by user")));
    await waitFor("the model's answer after the block", async () => (await assistantText()).includes("Understood, I left it."));
    await idle();
    if (!fs.existsSync(path.join(ws, "kept"))) {
        throw new Error("the blocked command ran");
    }
});

test("/pistatus: the pi extension's status in the status bar, its widget above the chat's input", async () => {
    await ensureChat();
    await send("/pistatus");
    await waitFor('"pi: on" in the status bar', async () => (await statusItems()).includes("pi: on"));
    await waitFor("the widget above the input", async () => JSON.stringify(await widgetLines()) === JSON.stringify(["pi line 1", "pi line 2"]));
    await page.screenshot({ path: path.join(art, "status-widget.png") });
});

test("registerShortcut: Zot: Run Extension Shortcut offers it; a keybinding runs it by its key", async () => {
    await ensureChat();
    await runCommand("Zot: Run Extension Shortcut");
    const q = await waitFor("the shortcuts' QuickPick", async () => {
        const q = await quickInput();
        return q && q.title.includes("extension shortcut") && q.rows.length > 0 ? q : undefined;
    });
    if (JSON.stringify(q.rows) !== JSON.stringify(["ctrl+shift+y"])) {
        throw new Error(`the shortcuts offered: ${JSON.stringify(q.rows)}`);
    }
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(0).click();
    await waitFor('"shortcut ran 1" in the status bar', async () => (await statusItems()).includes("shortcut ran 1"));
    // keybindings.json: ctrl+alt+y → zot.runShortcut "ctrl+shift+y".
    await page.locator(".statusbar").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("Control+Alt+y");
    await waitFor('"shortcut ran 2" in the status bar (the keybinding)', async () => (await statusItems()).includes("shortcut ran 2"));
});

/** Runs an extension's command from "Zot: Run Command" (the chat's input is left as it is). */
async function runFromPicker(name) {
    await runCommand("Zot: Run Command");
    await waitFor("the slash commands' QuickPick", async () => {
        const q = await quickInput();
        return q && q.title.includes("run a slash command") && q.rows.length > 0;
    });
    await page.keyboard.type(name);
    await waitFor(`/${name} first in the list`, async () => ((await quickInput())?.rows ?? [])[0]?.startsWith(`/${name}`));
    await page.keyboard.press("Enter");
    await waitFor(`the arguments box of /${name}`, async () => (await quickInput())?.title === `/${name}`);
    await page.keyboard.press("Enter");
}

test("/pidraft: the pi extension reads what the user typed in the chat's input, then sets and pastes into it", async () => {
    await ensureChat();
    await chat.fill("#input", "typed by me");
    await runFromPicker("pidraft");
    // (The item's text may run into the palette's hover text in the DOM: its start is the item's.)
    await waitFor('"input was: typed by me" in the status bar', async () => (await statusItems()).some((t) => t.startsWith("input was: typed by me")));
    await waitFor("the extension's text in the chat's input", async () => (await chat.$eval("#input", (i) => i.value)) === "pi draft + pasted");
    await chat.fill("#input", "");
});

test("/pieditor: ui.editor is an untitled document with the extension's text; Done answers what the user wrote", async () => {
    await ensureChat();
    await send("/pieditor");
    const done = "Done: [editors] Pi notes";
    await waitFor(`"${done}" in the status bar`, async () => (await statusItems()).some((t) => t.includes(done)));
    const lines = () => page.$$eval(".editor-instance .view-lines .view-line", (els) => els.map((e) => (e.textContent ?? "").replace(/\u00a0/g, " ")));
    await waitFor("the prefilled document", async () => JSON.stringify(await lines()) === JSON.stringify(["line 1", "line 2"]));
    await page.locator(".editor-instance .view-lines").first().click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("\nline 3");
    await waitFor("the user's line in the document", async () => (await lines()).includes("line 3"));
    await page.screenshot({ path: path.join(art, "editor-dialog.png") });
    await page.locator(".statusbar-item", { hasText: done }).click();
    await waitFor('"editor: line 1 | line 2 | line 3" in the status bar', async () => (await statusItems()).includes("editor: line 1 | line 2 | line 3"));
    await waitFor("the dialog's buttons gone", async () => !(await statusItems()).some((t) => t.includes(done)));
});

/** The argv of the running node process that hosts the pi extension "editors": zot's log of the extension names its pid (one Node
 * process hosts every pi extension of a session: its argv is host.js --shared). */
function piHostArgvs() {
    const log = path.join(ws, "..", "zothome", "logs", "ext-editors.log");
    const out = [];
    const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
    for (const m of text.matchAll(/started editors \(pid (\d+)/g)) {
        try {
            const argv = fs.readFileSync(`/proc/${m[1]}/cmdline`, "utf8").split("\0");
            if (argv.some((a) => a.endsWith("host.js"))) {
                out.push(argv);
            }
        } catch {
            // gone
        }
    }
    return out;
}

test("the pi runtime that runs it is the one the package carries (bin/pi-runtime), nothing fetched", async () => {
    const exts = path.resolve(ws, "..", "..", "exts");
    const argvs = await waitFor("the pi extension's host process", async () => {
        const a = piHostArgvs();
        return a.length ? a : undefined;
    });
    const host = argvs[0].find((a) => a.endsWith("host.js"));
    if (!host.startsWith(exts + path.sep) || !host.endsWith(path.join("bin", "pi-runtime", "host.js"))) {
        throw new Error(`the pi runtime is not the package's: ${host} (want ${exts}/…/bin/pi-runtime/host.js)`);
    }
});

test("zot.piFlags reach the pi extension's getFlag", async () => {
    await ensureChat();
    await send("/piflag");
    await waitFor('"flag: from vscode" in the status bar', async () => (await statusItems()).includes("flag: from vscode"));
});

/** What a failed test leaves for the reader of CI's output (the logs of
 * the run are gone with its machine): the chat's last items, the model
 * requests so far, each zot extension log's last lines. */
async function failureDump() {
    const out = [];
    const items = chat ? await chat.$$eval(".item", (els) => els.slice(-6).map((e) => `${e.className}: ${(e.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 160)}`)).catch((e) => [`(chat: ${firstLine(e)})`]) : ["(no chat)"];
    out.push("chat's last items:", ...items.map((l) => "  " + l));
    const chats = await framesWith("#zot-chat").catch(() => []);
    out.push(`chat frames: ${chats.length} (${chats.map((x) => (x.frame === chat ? "the test's, " : "") + (x.shown ? "shown" : "hidden")).join("; ")})`);
    const all = await recordedRequests().catch(() => []);
    const odd = all.filter((x) => !isModelRequest(x) && x.path !== "/v1/models");
    if (odd.length) {
        out.push(`requests without messages: ${odd.map((x) => `${x.path} ${JSON.stringify(x.body).slice(0, 200)}`).join(" | ")}`);
    }
    const reqs = all.filter(isModelRequest).map((x) => JSON.stringify(x.body));
    out.push(`model requests so far: ${reqs.length}; the last one ends: ${reqs.length ? reqs[reqs.length - 1].slice(-300) : "-"}`);
    out.push(`quick input: ${JSON.stringify(await quickInput().catch((e) => firstLine(e)))}`);
    out.push(`status bar: ${JSON.stringify(await statusItems().catch((e) => firstLine(e)))}`);
    const toasts = await page.$$eval(".notification-toast, .monaco-dialog-box", (els) => els.map((e) => (e.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 200))).catch(() => []);
    out.push(`notifications and dialogs: ${JSON.stringify(toasts)}`);
    const logs = path.join(ws, "..", "zothome", "logs");
    for (const f of fs.existsSync(logs) ? fs.readdirSync(logs).sort() : []) {
        const lines = fs.readFileSync(path.join(logs, f), "utf8").trimEnd().split("\n").slice(-8);
        out.push(`${f}:`, ...lines.map((l) => "  " + l.slice(0, 240)));
    }
    return out.map((l) => "     | " + l).join("\n");
}

runSpec(tests, { url, art, onPage: (p) => (page = p), onFailure: failureDump });

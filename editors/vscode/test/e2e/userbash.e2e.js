// End-to-end test in real VS Code (code-server): the user's own shell
// command from the chat. "!cmd" runs it in the workspace and shows a card
// named "!" with its output (a failing one marked as an error); "!!cmd"
// the same, named "!!". scripts/e2e.sh runs it (ZOT_E2E_SPECS=userbash)
// in its own code-server, workspace and scripted LLM
// (userbash-script.json: the model is not called by a user's command).
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go).

const fs = require("fs");
const path = require("path");
const { runSpec, waitFor, frameWith, statusItems, quickInput, runCommand, sleep, firstLine, sendTo, idleOf, toolResultsOf, openChat } = require("./harness");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "userbash");
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

runSpec(tests, { url, art, onPage: (p) => (page = p) });

// End-to-end test of the settings that choose what runs (zot.serverPath,
// serverArgs, serverEnv, extensions) in a remote window: code-server
// runs the extension host on the server, and these machine-scoped settings
// come from the remote machine's settings file (<user-data-dir>/Machine/
// settings.json), not from the user's. scripts/e2e.sh (settings_layout)
// puts them there only, with zot.serverPath a wrapper that logs each start
// to launches.log, and gives the workspace a .vscode/settings.json that
// points each of them at things inside the repository.
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go).

const fs = require("fs");
const path = require("path");
const { runSpec, waitFor, frameWith, statusItems, sleep, firstLine } = require("./harness");

const url = process.env.CS_URL;
const ws = process.env.WS;
const dir = path.dirname(ws);
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "settings");
const HANG = 90_000; // a wait this long is a hang, not a slow machine
const QUICK_INPUT = ".quick-input-widget:not([style*='display: none'])";
const machineSettings = path.join(dir, "ud", "Machine", "settings.json");
const launches = path.join(dir, "launches.log");

fs.mkdirSync(art, { recursive: true });

let page;

async function quickRows() {
    return page.$$eval(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, (rows) => rows.map((r) => (r.querySelector(".label-name")?.textContent ?? "").trim()));
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
        const i = (await quickRows()).indexOf(title);
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
    // The first activation waits for the remote extension host, which on
    // a loaded machine gives up resolving the shell environment first.
    await waitFor("the zot status bar item (the extension active)", async () => (await statusItems()).some((t) => /zot/.test(t)), 2 * HANG);
    await runCommand("Zot: Focus Chat");
    chat = await frameWith("#zot-chat", "the chat webview");
    await waitFor("a model in the chat's picker", async () => (await chat.$$eval("#model option", (o) => o.length)) > 0);
    return chat;
}

/** Sends a message and waits for a reply of the scripted model (one of
 * settings-script.json's, in whatever order a failed test left them). */
async function ask(message) {
    const replies = () => chat.$$eval(".item.assistant", (els) => els.map((e) => e.textContent ?? ""));
    const before = (await replies()).length;
    await chat.fill("#input", message);
    await chat.press("#input", "Enter");
    await waitFor(`a reply to "${message}"`, async () => (await replies()).slice(before).some((t) => t.includes("Hello ")));
    await waitFor("the run to end (Send button back)", async () => chat.$eval("#send", (b) => !b.hidden));
}

const readLaunches = () => (fs.existsSync(launches) ? fs.readFileSync(launches, "utf8") : "");

/** The extensions zot lists (Zot: Show Extensions): "name version — state · source" rows. */
async function listedExtensions() {
    await runCommand("Zot: Show Extensions");
    await page.waitForSelector(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { timeout: 10_000 });
    const rows = await page.$$eval(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, (rows) =>
        rows.map((r) => `${(r.querySelector(".label-name")?.textContent ?? "").trim()} — ${(r.querySelector(".label-description")?.textContent ?? "").trim()}`),
    );
    await page.keyboard.press("Escape");
    return rows;
}

/** Nothing of the workspace's settings reached zot: its binary did not
 * run (no marker) and no start saw its flag or environment. */
function assertWorkspaceIgnored() {
    if (fs.existsSync(path.join(ws, "evil", "RAN"))) {
        throw new Error("the workspace's zot.serverPath (./evil/zot) was started");
    }
    const l = readLaunches();
    if (l.includes("--evil-arg") || l.includes("mark=workspace")) {
        throw new Error(`the workspace's serverArgs or serverEnv reached zot:\n${l}`);
    }
}

/** Edits the remote machine's settings.json as a user would. */
function changeMachineSettings(change) {
    const s = JSON.parse(fs.readFileSync(machineSettings, "utf8"));
    change(s);
    fs.writeFileSync(machineSettings, JSON.stringify(s, null, 2));
}

/** Restarts zot from the "settings changed" toast (as a user would). */
async function restartFromToast() {
    const restart = page.locator(".notifications-toasts .notification-list-item", { hasText: "settings changed" }).getByRole("button", { name: "Restart" });
    await restart.first().waitFor({ timeout: HANG });
    await restart.first().click();
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test("zot starts with the remote machine's serverPath, serverArgs, serverEnv and extensions; the workspace's are ignored", async () => {
    // Whichever binary started: the machine's wrapper logs, the
    // workspace's leaves a marker (and a zot given its flag would not run).
    await waitFor("a zot started", async () => readLaunches() !== "" || fs.existsSync(path.join(ws, "evil", "RAN")), 2 * HANG);
    assertWorkspaceIgnored();
    await ensureChat();
    await ask("hello");
    const l = readLaunches();
    if (!/^start mark=machine-1 args=lsp --base-url \S+ --api-key test-key$/m.test(l)) {
        throw new Error(`zot was not started by the machine's serverPath with its serverArgs and serverEnv; launches:\n${l}`);
    }
    // The machine's zot.extensions (todo) is loaded; the workspace's
    // (evil-todo, inside the repository) is not even listed.
    const exts = await waitFor("todo loaded (the machine's zot.extensions)", async () => {
        const rows = await listedExtensions();
        return rows.some((r) => /\btodo 1\.0\.0 — loaded\b/.test(r)) ? rows : undefined;
    });
    if (exts.some((r) => r.includes("evil-todo"))) {
        throw new Error(`the workspace's zot.extensions reached zot: ${JSON.stringify(exts)}`);
    }
    assertWorkspaceIgnored();
    await page.screenshot({ path: path.join(art, "machine-settings.png") });
});

test("a change to the remote machine's settings while zot runs is offered as a restart and applied, the second time too", async () => {
    await ensureChat();
    for (const mark of ["machine-2", "machine-3"]) {
        changeMachineSettings((s) => (s["zot.serverEnv"] = { ...s["zot.serverEnv"], ZOT_E2E_MARK: mark }));
        await restartFromToast();
        await waitFor(`a start with the changed serverEnv (${mark})`, async () => readLaunches().includes(`start mark=${mark} args=lsp --base-url`), HANG);
        await ensureChat();
        await ask(`hello ${mark}`);
        assertWorkspaceIgnored();
    }
    const starts = readLaunches().trim().split("\n");
    if (starts.length !== 3) {
        throw new Error(`expected three starts of zot, saw:\n${starts.join("\n")}`);
    }
});

runSpec(tests, { url, art, onPage: (p) => (page = p) });

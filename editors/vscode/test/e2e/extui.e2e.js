// End-to-end test of extension UI in real VS Code (code-server): the
// example extensions permission-gate (zot/ui/request: its question is a
// QuickPick), plan-mode (zot/ui/status: "plan" in the status bar) and
// lint-on-write (a tool_result hook: its findings reach the model), the
// test extension capext (zot/ui/widget: lines above the chat's input, gone
// when the extension stops), and the MCP servers' lines in the Zot view
// (fakemcp ready, one that exits at start failed; restart), and a
// redacting extension (an assistant_message intercept: the chat shows only
// its rewritten text).
// scripts/e2e.sh runs it (ZOT_E2E_SPECS=extui for this spec alone) in its
// own code-server, workspace and scripted LLM (extui-script.json), whose
// replies the tests below consume in order.
// Env: CS_URL (code-server URL with ?folder=), WS (the workspace folder),
// ART (where screenshots go), LLM_URL (the scripted LLM).

const fs = require("fs");
const path = require("path");
const { runSpec, waitFor, statusItems, quickInput, runCommand, sleep, firstLine, sendTo, idleOf, toolResultsOf } = require("./harness");

const url = process.env.CS_URL;
const ws = process.env.WS;
const art = process.env.ART || path.join(__dirname, "..", "..", "test-artifacts", "extui");
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

/** Waits for permission-gate's QuickPick about command and picks choice. */
async function answerGate(command, choice) {
    const q = await waitFor(`permission-gate's question about ${command}`, async () => {
        const q = await quickInput();
        return q && q.title.includes("[permission-gate]") && q.title.includes(command) ? q : undefined;
    });
    const want = ["Deny", "Allow once", "Always allow this command"];
    if (JSON.stringify(q.rows) !== JSON.stringify(want)) {
        throw new Error(`the choices: ${JSON.stringify(q.rows)}`);
    }
    await page.screenshot({ path: path.join(art, "gate.png") });
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).nth(q.rows.indexOf(choice)).click();
    await waitFor("the question to close", async () => (await page.$(QUICK_INPUT)) === null);
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test("permission-gate asks in a QuickPick; Allow once → the command runs", async () => {
    fs.mkdirSync(path.join(ws, "gone"), { recursive: true });
    await ensureChat();
    await send("clean up");
    await answerGate("rm -rf gone && echo removed-it", "Allow once");
    // (The card's args hold the command, "echo removed-it" too: its result only.)
    await waitFor("the command's output in the chat", async () => (await chat.$$eval(".item.tool .tool-result", (els) => els.map((e) => e.textContent ?? ""))).some((t) => t.includes("removed-it") && !t.includes("echo")));
    await idle();
    if (fs.existsSync(path.join(ws, "gone"))) {
        throw new Error("the allowed command did not remove gone/");
    }
});

test("permission-gate: Deny → the command does not run and the model is told", async () => {
    fs.mkdirSync(path.join(ws, "kept"), { recursive: true });
    await ensureChat();
    const before = (await modelRequests()).length;
    await send("remove kept");
    await answerGate("rm -rf kept && echo removed-kept", "Deny");
    await waitFor("the denial in the tool card", async () => (await toolResults()).some((t) => t.includes("the user denied running: rm -rf kept")));
    await waitFor("the model's answer after the denial", async () => (await chat.$$eval(".item.assistant", (els) => els.map((e) => e.textContent).join("\n"))).includes("Understood, I left it."));
    await idle();
    if (!fs.existsSync(path.join(ws, "kept"))) {
        throw new Error("the denied command ran");
    }
    const sent = (await modelRequests()).slice(before);
    if (sent.length !== 2 || !sent[1].includes("the user denied running: rm -rf kept")) {
        throw new Error(`the model was not told of the denial (${sent.length} requests): ${sent.map((b) => b.slice(-300)).join(" | ")}`);
    }
});

test("plan-mode: /plan shows \"plan\" in the status bar; /plan again removes it", async () => {
    await ensureChat();
    await send("/plan");
    await waitFor('"plan" in the status bar', async () => (await statusItems()).includes("plan"));
    await page.screenshot({ path: path.join(art, "plan-status.png") });
    await send("/plan");
    await waitFor('"plan" gone from the status bar', async () => {
        const items = await statusItems();
        return items.some((t) => /zot/.test(t)) && !items.includes("plan");
    });
});

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

test("lint-on-write: gofmt's findings are in the write's card and reach the model", async () => {
    await ensureChat();
    const before = (await modelRequests()).length;
    await send("write bad.go");
    await waitFor("the findings in the tool card", async () => (await toolResults()).some((t) => t.includes("lint-on-write found problems in bad.go")));
    await waitFor("the model's answer", async () => (await chat.$$eval(".item.assistant", (els) => els.map((e) => e.textContent).join("\n"))).includes("I will fix bad.go."));
    await idle();
    const sent = (await modelRequests()).slice(before);
    if (sent.length !== 2) {
        throw new Error(`want 2 model requests for this prompt, got ${sent.length}`);
    }
    if (sent[0].includes("lint-on-write found") || !sent[1].includes("lint-on-write found problems in bad.go") || !sent[1].includes("expected")) {
        throw new Error(`the model was not told gofmt's findings: ${sent[1].slice(-600)}`);
    }
});

async function widgetLines() {
    return chat.$$eval("#widgets:not([hidden]) .widget-line", (els) => els.map((e) => e.textContent));
}

test("widgets: capext's lines show above the chat's input; gone when the extension stops (reload)", async () => {
    await ensureChat();
    await send("show the widget");
    await waitFor("the widget above the input", async () => JSON.stringify(await widgetLines()) === JSON.stringify(["line 1", "line 2"]));
    await idle();
    const w = await chat.$eval("#widgets", (e) => e.getBoundingClientRect().toJSON());
    const i = await chat.$eval("#input", (e) => e.getBoundingClientRect().toJSON());
    if (!(w.height > 0 && w.bottom <= i.top + 1)) {
        throw new Error(`the widget is not above the input: widget ${JSON.stringify(w)}, input ${JSON.stringify(i)}`);
    }
    await page.screenshot({ path: path.join(art, "widget.png") });
    await runCommand("Zot: Reload Extensions");
    await waitFor("the widget gone with the stopped extension", async () => (await widgetLines()).length === 0 && (await chat.$eval("#widgets", (e) => e.hidden)));
});

async function mcpLines() {
    return chat.$$eval("#mcp:not([hidden]) .mcp-server", (els) =>
        els.map((e) => ({ name: e.dataset.name, text: (e.textContent ?? "").trim(), disabled: e.querySelector("button")?.disabled ?? null })),
    );
}

test("MCP servers in the Zot view: a line per server (state, tools, last error); restart", async () => {
    await ensureChat();
    // (broken is retried with backoff: it may be "restarting" for a while.)
    await waitFor("both MCP servers settled: fake ready with its 4 tools, broken failed with its error", async () => {
        const l = await mcpLines();
        const fake = l.find((x) => x.name === "fake");
        const broken = l.find((x) => x.name === "broken");
        const summary = await chat.$eval("#mcp-summary", (e) => e.textContent);
        return fake && /ready · 4 tools/.test(fake.text) && broken && /failed · 0 tools/.test(broken.text) && /DATABASE_URL/.test(broken.text) && summary === "MCP: 1 ready, 1 failed";
    });
    if (!(await chat.$eval("#mcp", (e) => e.open))) {
        throw new Error("the section did not open for the failed server");
    }
    await page.screenshot({ path: path.join(art, "mcp.png") });
    // A restart is a new fakemcp process (the line alone reads the same before and after).
    const [old] = await waitFor("one fake MCP server process", async () => {
        const p = fakeMcpPids();
        return p.length === 1 ? p : undefined;
    });
    await chat.click('#mcp .mcp-restart[data-name="fake"]');
    await waitFor("fake restarted (a new process) and ready again (its line redrawn)", async () => {
        const p = fakeMcpPids();
        const fake = (await mcpLines()).find((x) => x.name === "fake");
        return p.length === 1 && p[0] !== old && fake && fake.disabled === false && /ready · 4 tools/.test(fake.text);
    });
});

/** The pids of the "fake" MCP server: this spec's fakemcp (e2e.sh builds it beside the workspace's directory), not "broken" (the same binary with FAKEMCP_MODE=exit). */
function fakeMcpPids() {
    const bin = path.resolve(ws, "..", "..", "fakemcp");
    const out = [];
    for (const d of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(d)) {
            continue;
        }
        try {
            const argv = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
            if (argv[0] === bin && !fs.readFileSync(`/proc/${d}/environ`, "utf8").split("\0").includes("FAKEMCP_MODE=exit")) {
                out.push(Number(d));
            }
        } catch {
            // gone
        }
    }
    return out;
}

test("an extension that asks and then dies: its question closes, the run goes on", async () => {
    await ensureChat();
    fs.rmSync(path.join(ws, "crash-now"), { force: true });
    await send("ask then crash");
    // capext dies only once the test saw its question (crash_when): the
    // question must have opened for its closing to mean anything.
    await waitFor("capext's question open", async () => {
        const q = await quickInput();
        return q && q.title.includes("Really?") && q.rows.includes("Yes") ? q : undefined;
    });
    await page.screenshot({ path: path.join(art, "ask-then-crash.png") });
    fs.writeFileSync(path.join(ws, "crash-now"), "");
    await waitFor("the model's answer after the crash", async () => (await chat.$$eval(".item.assistant", (els) => els.map((e) => e.textContent).join("\n"))).includes("Went on after the crash."));
    await idle();
    await waitFor("no question left open (QuickPick or dialog)", async () => (await page.$(QUICK_INPUT)) === null && (await page.$(".monaco-dialog-box")) === null);
    const card = (await toolResults()).find((t) => t.includes("ask_then_crash"));
    if (!card || /unknown tool|not found/i.test(card)) {
        throw new Error(`capext's tool did not run (it restarted after the reload?): ${card}`);
    }
});

test("a redacting extension: the chat shows only the rewritten answer, never the secret, not even while it streams", async () => {
    await ensureChat();
    // Everything the chat ever shows, from now on: a MutationObserver in
    // the webview records each text that appears (a delta drawn and
    // replaced later would be seen here, not only in the final DOM).
    await chat.evaluate(() => {
        const seen = [];
        window.__zotSeen = seen;
        new MutationObserver((muts) => {
            for (const m of muts) {
                for (const n of m.addedNodes) {
                    seen.push(n.textContent ?? "");
                }
                if (m.type === "characterData") {
                    seen.push(m.target.textContent ?? "");
                }
            }
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await send("what is the key?");
    await waitFor("the rewritten answer", async () => (await chat.$$eval(".item.assistant", (els) => els.map((e) => e.textContent).join("\n"))).includes("The key is [redacted], keep it."));
    await idle();
    const shown = await chat.$$eval(".item", (els) => els.map((e) => e.textContent ?? "").join("\n"));
    const seen = await chat.evaluate(() => window.__zotSeen.join("\n"));
    for (const [what, text] of [["the chat", shown], ["what the chat ever drew", seen]]) {
        if (text.includes("SEC")) {
            throw new Error(`${what} showed (a prefix of) the secret: ${text.slice(0, 400)}`);
        }
    }
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

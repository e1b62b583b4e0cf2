// The VS Code half of `make bench-editors` (scripts/bench-editors.sh runs
// it through scripts/e2e.sh with ZOT_E2E_SPECS=bench). Not a test: it
// measures, nothing about time is asserted; its one check is that every
// prompt's answer was drawn. WARM + N prompts typed in the chat and sent
// with Enter, against zot mock-llm (no latency). In the chat webview's own
// page clock (performance.now): the Enter keydown (a capture listener, so
// before the chat's own handler), the answer's first text in the DOM (a
// MutationObserver) and "painted": a MessageChannel task queued from the
// first requestAnimationFrame after that DOM change, i.e. after the frame
// that drew it. The floor: before each prompt a bare socket posts a model
// request to the same mock and times its first byte. CPU over the N
// measured prompts from /proc/PID/stat: Chromium's renderers (code-server
// serves webviews from its own origin, so the workbench and the chat's
// webview share them), the extension host (zot's parent) and zot.
// Env: as chat.e2e.js, plus ZOT_BENCH_N (20), ZOT_BENCH_WARM (3); results
// in ART/bench.json.

const { chromium } = require("playwright-core");
const fs = require("fs");
const net = require("net");
const path = require("path");

const url = process.env.CS_URL;
const art = process.env.ART;
const N = Number(process.env.ZOT_BENCH_N || 20);
const WARM = Number(process.env.ZOT_BENCH_WARM || 3);
const HANG = 90_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, fn, timeout = HANG) {
    const end = Date.now() + timeout;
    let last;
    for (;;) {
        try {
            const v = await fn();
            if (v) {
                return v;
            }
        } catch (e) {
            last = String(e).split("\n")[0];
        }
        if (Date.now() > end) {
            throw new Error(`timed out waiting for ${what}${last ? ` (${last})` : ""}`);
        }
        await sleep(50);
    }
}

// ------------------------------------------------------------------ processes and CPU

const HZ = 100; // USER_HZ: the unit of /proc/PID/stat's utime and stime

function procStat(pid) {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / HZ };
}

function cmdline(pid) {
    try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
        return [];
    }
}

function allPids() {
    return fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
}

/** Descendants of root (pids). */
function descendants(root) {
    const kids = new Map();
    for (const p of allPids()) {
        try {
            const pp = procStat(p).ppid;
            kids.set(pp, [...(kids.get(pp) ?? []), p]);
        } catch {
            // gone
        }
    }
    const out = [];
    const todo = [root];
    while (todo.length) {
        for (const k of kids.get(todo.pop()) ?? []) {
            out.push(k);
            todo.push(k);
        }
    }
    return out;
}

function cpuOf(pids) {
    let sum = 0;
    for (const p of pids) {
        try {
            sum += procStat(p).cpu;
        } catch {
            // gone
        }
    }
    return sum * 1000;
}

// ------------------------------------------------------------------ the floor

const llm = new URL(process.env.LLM_URL);
function floor() {
    const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 1024, stream: true, messages: [{ role: "user", content: "floor" }] });
    const req = [
        "POST /v1/messages HTTP/1.1",
        `Host: ${llm.host}`,
        "Content-Type: application/json",
        "x-api-key: bench-key",
        "anthropic-version: 2023-06-01",
        "Connection: close",
        `Content-Length: ${Buffer.byteLength(body)}`,
        "",
        body,
    ].join("\r\n");
    return new Promise((resolve, reject) => {
        const t0 = process.hrtime.bigint();
        const s = net.connect(Number(llm.port), llm.hostname, () => s.write(req));
        s.once("data", () => {
            resolve(Number(process.hrtime.bigint() - t0) / 1e6);
            s.destroy();
        });
        s.on("error", reject);
    });
}

// ------------------------------------------------------------------ the webview's marks

/** Installed in the chat's frame: marks each prompt's Enter, DOM and paint. */
function instrument() {
    const input = document.getElementById("input");
    const transcript = document.getElementById("transcript");
    const b = (window.__bench = { runs: [] });
    input.addEventListener(
        "keydown",
        (e) => {
            if (e.key === "Enter" && !e.shiftKey) {
                b.cur = { enter: performance.now() };
                b.runs.push(b.cur);
            }
        },
        true,
    );
    new MutationObserver(() => {
        const c = b.cur;
        if (!c || c.dom) {
            return;
        }
        const answers = transcript.querySelectorAll(".item.assistant");
        const last = answers[answers.length - 1];
        if (last && last.textContent.includes("Hello")) {
            c.dom = performance.now();
            requestAnimationFrame(() => {
                const ch = new MessageChannel();
                ch.port1.onmessage = () => {
                    c.paint = performance.now();
                };
                ch.port2.postMessage(0);
            });
        }
    }).observe(transcript, { childList: true, subtree: true, characterData: true });
}

(async () => {
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: HANG });
    await page.waitForSelector(".monaco-workbench", { timeout: HANG });
    await waitFor("the zot status bar item", async () =>
        (await page.$$eval(".statusbar-item", (els) => els.map((e) => e.textContent))).some((t) => /zot/.test(t)),
    );
    // The chat: Zot: Focus Chat from the palette, until its frame is there.
    const chat = await waitFor("the chat webview", async () => {
        for (const f of page.frames()) {
            if (!f.isDetached() && (await f.$("#zot-chat").catch(() => null))) {
                return f;
            }
        }
        await page.keyboard.press("Escape");
        await page.keyboard.press("F1");
        await page.waitForSelector(".quick-input-widget input", { timeout: 10_000 });
        await page.keyboard.type("Zot: Focus Chat");
        await sleep(1000);
        await page.keyboard.press("Enter");
        await sleep(1000);
        return undefined;
    });
    await waitFor("a model in the chat's picker", async () => (await chat.$$eval("#model option", (o) => o.length)) > 0);
    await chat.evaluate(instrument);

    const zotBin = process.env.ZOT_BIN;
    const zot = await waitFor("zot lsp", async () => allPids().find((p) => cmdline(p)[0] === zotBin && cmdline(p)[1] === "lsp"));
    const exthost = procStat(zot).ppid;
    // Chromium is a child of this process (Playwright starts it); it
    // rewrites its command line as one string (its process title).
    const renderers = () => descendants(process.pid).filter((p) => cmdline(p).join(" ").includes("--type=renderer"));
    const result = { warm: WARM, marks: ["dom"], prompts: [], floor: [] };
    let cpu0;
    for (let i = 1; i <= WARM + N; i++) {
        if (i === WARM + 1) {
            cpu0 = { webview: cpuOf(renderers()), exthost: cpuOf([exthost]), zot: cpuOf([zot]) };
        }
        const fl = await floor();
        await chat.fill("#input", `bench ${i}`);
        await chat.press("#input", "Enter");
        const run = await waitFor(`prompt ${i}'s answer painted`, async () =>
            chat.evaluate((n) => {
                const r = window.__bench.runs[n - 1];
                return r && r.paint !== undefined ? r : undefined;
            }, i),
        );
        await waitFor(`prompt ${i}'s run to end`, async () => chat.$eval("#send", (s) => !s.hidden));
        if (i > WARM) {
            result.floor.push(fl);
            result.prompts.push({ dom: run.dom - run.enter, paint: run.paint - run.enter });
        }
        await sleep(100); // as a user would: not the next Enter in the same frame
    }
    result.cpu = {
        webview_renderer_ms: (cpuOf(renderers()) - cpu0.webview) / N,
        extension_host_ms: (cpuOf([exthost]) - cpu0.exthost) / N,
        zot_ms: (cpuOf([zot]) - cpu0.zot) / N,
    };
    fs.writeFileSync(path.join(art, "bench.json"), JSON.stringify(result));
    await browser.close();
    console.log(`ok   bench: ${N} prompts after ${WARM} warm-ups, every answer drawn`);
    console.log("1 passed, 0 failed");
})().catch((e) => {
    console.error(e);
    console.log("0 passed, 1 failed");
    process.exit(1);
});

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
// The answer is the first .item.assistant that was not there at Enter
// (the previous answer says Hello too). "recv": the message with the
// answer's first delta reached the webview (a capture listener, before
// the chat's). The prompt is typed and sent as keyboard input and each
// prompt's end awaited as one promise in the page: the benchmark's own
// calls into the page count as the webview's CPU, so it makes few. The
// CPU of the same processes idle, over as long as the prompts took, is
// measured after them (idle_cpu). ZOT_BENCH_PROFILE=1: CPU profiles of
// the renderer (CDP) and the extension host (its inspector, opened with
// SIGUSR1 on port 9229) over the measured prompts, and the WebSocket
// frames between the browser and code-server (renderer.cpuprofile,
// exthost.cpuprofile, wsframes.json); ZOT_BENCH_TRACE=1: a Chromium
// trace (trace.json). Both slow what they measure.
// Env: as chat.e2e.js, plus ZOT_BENCH_N (20), ZOT_BENCH_WARM (3); results
// in ART/bench.json.

const { chromium } = require("playwright-core");
const { performance } = require("perf_hooks");
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

// ------------------------------------------------------------------ profiles (ZOT_BENCH_PROFILE=1)

/**
 * A CPU profile of a Node process (the extension host) over the measured
 * prompts: SIGUSR1 opens its inspector (port 9229), the profiler runs
 * until stop() and the profile goes to file.
 */
async function nodeProfiler(pid, file) {
    process.kill(pid, "SIGUSR1");
    const list = await waitFor("the extension host's inspector", async () => {
        const r = await fetch("http://127.0.0.1:9229/json/list");
        return r.ok ? r.json() : undefined;
    }, 10_000);
    const WS = globalThis.WebSocket ? undefined : require("playwright-core/lib/utilsBundle").ws;
    const sock = WS ? new WS(list[0].webSocketDebuggerUrl) : new WebSocket(list[0].webSocketDebuggerUrl);
    await new Promise((res, rej) => {
        if (WS) {
            sock.once("open", res).once("error", rej);
        } else {
            sock.onopen = res;
            sock.onerror = rej;
        }
    });
    let id = 0;
    const waiting = new Map();
    const onMsg = (data) => {
        const m = JSON.parse(String(data));
        if (m.id && waiting.has(m.id)) {
            waiting.get(m.id)(m.result);
            waiting.delete(m.id);
        }
    };
    if (WS) {
        sock.on("message", onMsg);
    } else {
        sock.onmessage = (e) => onMsg(e.data);
    }
    const send = (method, params = {}) =>
        new Promise((res) => {
            waiting.set(++id, res);
            sock.send(JSON.stringify({ id, method, params }));
        });
    await send("Profiler.enable");
    await send("Profiler.setSamplingInterval", { interval: 200 });
    await send("Profiler.start");
    return async () => {
        const { profile } = await send("Profiler.stop");
        fs.writeFileSync(file, JSON.stringify(profile));
        sock.close();
    };
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
                // The answers already there (the last one says Hello too):
                // the prompt's answer is the first one not among them.
                b.cur = { enter: performance.now(), enterEpoch: performance.timeOrigin + performance.now(), before: new Set(transcript.querySelectorAll(".item.assistant")) };
                b.runs.push(b.cur);
            }
        },
        true,
    );
    window.addEventListener(
        "message",
        (e) => {
            const c = b.cur;
            if (c && !c.recv && e.data && e.data.type === "events" && e.data.firstDelta) {
                c.recv = performance.now();
                c.recvEpoch = performance.timeOrigin + c.recv;
            }
        },
        true,
    );
    new MutationObserver(() => {
        const c = b.cur;
        if (!c || c.dom) {
            return;
        }
        const answer = [...transcript.querySelectorAll(".item.assistant")].find((a) => !c.before.has(a));
        if (answer && answer.textContent.includes("Hello")) {
            c.dom = performance.now();
            requestAnimationFrame(() => {
                const ch = new MessageChannel();
                ch.port1.onmessage = () => {
                    c.paint = performance.now();
                    b.check();
                };
                ch.port2.postMessage(0);
            });
        }
    }).observe(transcript, { childList: true, subtree: true, characterData: true });
    // Run n over: its answer painted and Send back (the run ended). One
    // promise per prompt, no polling: the benchmark's own calls into the
    // page would count as the webview's CPU.
    const send = document.getElementById("send");
    const waiting = [];
    b.check = () => {
        for (let i = waiting.length - 1; i >= 0; i--) {
            const r = b.runs[waiting[i].n - 1];
            if (r && r.paint !== undefined && !send.hidden) {
                const { enter, recv, dom, paint, enterEpoch, recvEpoch } = r;
                const focused = document.hasFocus() && document.activeElement === document.getElementById("input");
                waiting.splice(i, 1)[0].resolve({ enter, recv, dom, paint, enterEpoch, recvEpoch, focused });
            }
        }
    };
    new MutationObserver(() => b.check()).observe(send, { attributes: true });
    b.done = (n) =>
        new Promise((resolve) => {
            waiting.push({ n, resolve });
            b.check();
        });
}

/** Resolves with p, or fails after ms naming what did not happen. */
function within(p, ms, what) {
    let timer;
    return Promise.race([p, new Promise((_, rej) => (timer = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), ms)))]).finally(() => clearTimeout(timer));
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
    let focused = false;

    const zotBin = process.env.ZOT_BIN;
    const zot = await waitFor("zot lsp", async () => allPids().find((p) => cmdline(p)[0] === zotBin && cmdline(p)[1] === "lsp"));
    const exthost = procStat(zot).ppid;
    // Chromium is a child of this process (Playwright starts it); it
    // rewrites its command line as one string (its process title).
    const renderers = () => descendants(process.pid).filter((p) => cmdline(p).join(" ").includes("--type=renderer"));
    const result = { warm: WARM, marks: ["recv", "dom"], prompts: [], floor: [] };
    let cpu0;
    let prof;
    let stopHostProfile;
    const frames = [];
    for (let i = 1; i <= WARM + N; i++) {
        if (i === WARM + 1) {
            cpu0 = { webview: cpuOf(renderers()), exthost: cpuOf([exthost]), zot: cpuOf([zot]), t: performance.now() };
            if (process.env.ZOT_BENCH_TRACE) {
                await browser.startTracing(page, { categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "toplevel", "blink", "v8"] });
            }
            if (process.env.ZOT_BENCH_PROFILE) {
                prof = await page.context().newCDPSession(page);
                await prof.send("Profiler.enable");
                await prof.send("Profiler.setSamplingInterval", { interval: 200 });
                await prof.send("Profiler.start");
                stopHostProfile = await nodeProfiler(exthost, path.join(art, "exthost.cpuprofile"));
                await prof.send("Network.enable");
                prof.on("Network.webSocketFrameReceived", (e) => frames.push({ dir: "in", data: e.response.payloadData, op: e.response.opcode }));
                prof.on("Network.webSocketFrameSent", (e) => frames.push({ dir: "out", data: e.response.payloadData, op: e.response.opcode }));
            }
        }
        const fl = await floor();
        if (!focused) {
            await chat.focus("#input");
        }
        // Typed and sent as keyboard input (Input.insertText, then the
        // Enter key) into the input, which keeps the focus between
        // prompts: no element lookups, scrolling or stability checks in
        // the page, which would count as the webview's CPU.
        await page.keyboard.insertText(`bench ${i}`);
        await page.keyboard.press("Enter");
        const run = await within(
            chat.evaluate((n) => window.__bench.done(n), i),
            HANG,
            `prompt ${i}'s answer painted and its run ended`,
        );
        focused = run.focused;
        if (i > WARM) {
            result.floor.push(fl);
            result.prompts.push({ recv: run.recv - run.enter, dom: run.dom - run.enter, paint: run.paint - run.enter, enterEpoch: run.enterEpoch, recvEpoch: run.recvEpoch });
        }
        await sleep(100); // as a user would: not the next Enter in the same frame
    }
    const promptMs = (performance.now() - cpu0.t) / N;
    result.cpu = {
        webview_renderer_ms: (cpuOf(renderers()) - cpu0.webview) / N,
        extension_host_ms: (cpuOf([exthost]) - cpu0.exthost) / N,
        zot_ms: (cpuOf([zot]) - cpu0.zot) / N,
    };
    if (process.env.ZOT_BENCH_TRACE) {
        fs.writeFileSync(path.join(art, "trace.json"), await browser.stopTracing());
    }
    if (frames.length) {
        fs.writeFileSync(path.join(art, "wsframes.json"), JSON.stringify(frames));
    }
    if (stopHostProfile) {
        await stopHostProfile();
    }
    if (prof) {
        const { profile } = await prof.send("Profiler.stop");
        fs.writeFileSync(path.join(art, "renderer.cpuprofile"), JSON.stringify(profile));
    }
    // What the same processes spend with nothing to do (the workbench's
    // own timers, VS Code's other extensions) over as long as a prompt
    // took: part of the CPU above is that, not the prompt.
    const idle0 = { webview: cpuOf(renderers()), exthost: cpuOf([exthost]), zot: cpuOf([zot]), t: performance.now() };
    await sleep(Math.max(3000, promptMs * 10));
    const idleScale = promptMs / (performance.now() - idle0.t);
    result.idle_cpu = {
        webview_renderer_ms: (cpuOf(renderers()) - idle0.webview) * idleScale,
        extension_host_ms: (cpuOf([exthost]) - idle0.exthost) * idleScale,
        zot_ms: (cpuOf([zot]) - idle0.zot) * idleScale,
    };
    result.prompt_ms = promptMs;
    fs.writeFileSync(path.join(art, "bench.json"), JSON.stringify(result));
    await browser.close();
    console.log(`ok   bench: ${N} prompts after ${WARM} warm-ups, every answer drawn`);
    console.log("1 passed, 0 failed");
})().catch((e) => {
    console.error(e);
    console.log("0 passed, 1 failed");
    process.exit(1);
});

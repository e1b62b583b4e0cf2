import { test } from "node:test";
import assert from "node:assert/strict";
import { FrameScheduler, browserFrame } from "../../src/webview/scheduler";
import * as st from "../../src/webview/chat/state";
import { ItemRenderer } from "../../src/webview/chat/render";

/** A fake requestAnimationFrame: frames run when the test says. */
function fakeFrames() {
    const queue: (() => void)[] = [];
    return {
        raf: (cb: () => void) => queue.push(cb),
        frame() {
            const q = queue.splice(0);
            q.forEach((cb) => cb());
        },
        get waiting() {
            return queue.length;
        },
    };
}

test("many schedules between frames flush once", () => {
    const f = fakeFrames();
    let flushes = 0;
    const s = new FrameScheduler(f.raf, () => flushes++);
    for (let i = 0; i < 5000; i++) {
        s.schedule();
    }
    assert.equal(f.waiting, 1);
    f.frame();
    assert.equal(flushes, 1);
    s.schedule();
    f.frame();
    assert.equal(flushes, 2);
    f.frame();
    assert.equal(flushes, 2, "no frame without a schedule");
});

test("a burst of 20,000 deltas renders a few times, and the last render has all the text", () => {
    const f = fakeFrames();
    const state = st.createState();
    const r = new ItemRenderer();
    const rendered = new Map<string, string>();
    let renders = 0;
    const s = new FrameScheduler(f.raf, () => {
        for (const it of st.takeDirty(state).dirty) {
            renders++;
            rendered.set(it.id, r.html(it));
        }
    });
    st.applyEvent(state, { type: "assistant_start", runId: "r" });
    for (let i = 0; i < 20000; i++) {
        st.applyEvent(state, { type: "text_delta", delta: i % 500 === 499 ? "word\n\n" : "word ", runId: "r" });
        s.schedule();
        if (i % 2000 === 1999) {
            f.frame(); // the browser paints now and then
        }
    }
    st.applyEvent(state, { type: "done", runId: "r" });
    s.schedule();
    f.frame();
    assert.ok(renders <= 11, `rendered ${renders} times`);
    const html = [...rendered.values()][0];
    assert.equal((html.match(/word/g) ?? []).length, 20000);
});

/** A fake window: frames and timers run when the test says, no real time passes. */
function fakeWindow() {
    const frames: (() => void)[] = [];
    const timers: { cb: () => void; ms: number }[] = [];
    return {
        requestAnimationFrame: (cb: () => void) => frames.push(cb),
        setTimeout: (cb: () => void, ms: number) => timers.push({ cb, ms }),
        frames,
        timers,
        fire(list: (() => void)[]) {
            list.splice(0).forEach((cb) => cb());
        },
    };
}

test("browserFrame falls back to a timer when no frame comes (hidden webview)", () => {
    const w = fakeWindow();
    let ran = 0;
    browserFrame(w)(() => ran++);
    assert.equal(ran, 0, "nothing runs before a frame or the timer");
    assert.equal(w.timers.length, 1);
    assert.ok(w.timers[0].ms > 0, `the fallback waits for a frame first (${w.timers[0].ms} ms)`);
    w.fire(w.timers.map((t) => t.cb)); // no frame came: the timer runs it
    w.timers.length = 0;
    assert.equal(ran, 1);
    w.fire(w.frames); // a frame after all: not a second time
    assert.equal(ran, 1, "the late frame does not run it again");
});

test("browserFrame runs the callback once when the frame comes before the timer", () => {
    const w = fakeWindow();
    let ran = 0;
    browserFrame(w)(() => ran++);
    w.fire(w.frames);
    assert.equal(ran, 1);
    w.fire(w.timers.map((t) => t.cb));
    assert.equal(ran, 1, "the frame and the timer run the callback once");
});

test("flushNow flushes before any frame; a frame already requested then flushes nothing", () => {
    const f = fakeFrames();
    let flushes = 0;
    const s = new FrameScheduler(f.raf, () => flushes++);
    s.schedule();
    s.flushNow();
    assert.equal(flushes, 1, "flushed with no frame run");
    assert.equal(s.isPending, false);
    f.frame();
    assert.equal(flushes, 1, "the frame requested before flushNow does not flush again");
    s.schedule();
    assert.equal(f.waiting, 1, "a new schedule requests a frame");
    f.frame();
    assert.equal(flushes, 2);
});

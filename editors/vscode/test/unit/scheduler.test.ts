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

test("browserFrame falls back to a timer when no frame comes (hidden webview)", async () => {
    let ran = 0;
    const frame = browserFrame({ requestAnimationFrame: () => 0, setTimeout: (cb, ms) => setTimeout(cb, ms) });
    frame(() => ran++);
    await new Promise((res) => setTimeout(res, 400));
    assert.equal(ran, 1);
    let twice = 0;
    const both = browserFrame({ requestAnimationFrame: (cb) => (cb(), 0), setTimeout: (cb, ms) => setTimeout(cb, ms) });
    both(() => twice++);
    await new Promise((res) => setTimeout(res, 400));
    assert.equal(twice, 1, "the frame and the timer run the callback once");
});

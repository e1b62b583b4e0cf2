import { test } from "node:test";
import assert from "node:assert/strict";
import { setRetry, type RetryHost } from "../../src/webview/chat/render";

/**
 * A drawn item: its action row (if any) holds buttons by action. Only the
 * two selectors setRetry uses are answered; any other is a failure.
 */
function drawnItem(actions: string[] | undefined) {
    const el: RetryHost = {
        querySelector(selector: string) {
            if (!actions) {
                return null;
            }
            if (selector === ':scope > .msg-actions > [data-action="retry"]') {
                return actions.includes("retry")
                    ? { remove: () => actions.splice(actions.indexOf("retry"), 1), insertAdjacentHTML: () => assert.fail("insert into a button") }
                    : null;
            }
            if (selector === ":scope > .msg-actions") {
                return {
                    remove: () => assert.fail("the action row removed"),
                    insertAdjacentHTML: (_where: string, html: string) => actions.push(/data-action="(\w+)"/.exec(html)![1]),
                };
            }
            return assert.fail(`unexpected selector ${selector}`);
        },
    };
    return { el, actions };
}

test("Retry moves between drawn answers without drawing them again", () => {
    const prev = drawnItem(["copy", "retry"]);
    const next = drawnItem(["copy"]);
    assert.equal(setRetry(prev.el, false), true);
    assert.deepEqual(prev.actions, ["copy"], "the previous answer keeps Copy and loses Retry");
    assert.equal(setRetry(next.el, true), true);
    assert.deepEqual(next.actions, ["copy", "retry"]);
    // Once only.
    assert.equal(setRetry(next.el, true), true);
    assert.deepEqual(next.actions, ["copy", "retry"]);
});

test("an item without an action row asks to be drawn", () => {
    assert.equal(setRetry(drawnItem(undefined).el, true), false);
});

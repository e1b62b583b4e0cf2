import { test } from "node:test";
import assert from "node:assert/strict";
import { applyStatusBar, type StatusBarView } from "../../src/state";

/** A status bar item that counts the properties set on it (each is a message to the window). */
function countingItem() {
    const sets: string[] = [];
    const values: Record<string, unknown> = { text: "", tooltip: "", backgroundColor: undefined };
    const item = {} as { text: string; tooltip: unknown; backgroundColor: string | undefined };
    for (const k of Object.keys(values)) {
        Object.defineProperty(item, k, {
            get: () => values[k],
            set: (v: unknown) => {
                sets.push(k);
                values[k] = v;
            },
        });
    }
    return { item, sets };
}

const color = (name: string) => `color:${name}`;

test("the status bar item is set once for a view and not again for the same view", () => {
    const { item, sets } = countingItem();
    const idle: StatusBarView = { text: "$(sparkle) zot: m", tooltip: "zot — p/m, agent mode" };
    let shown = applyStatusBar(item, idle, undefined, color);
    assert.deepEqual(sets, ["text", "tooltip", "backgroundColor"]);
    assert.equal(item.text, idle.text);
    // The same look again (a usage event that changes nothing shown): no property set.
    shown = applyStatusBar(item, { ...idle }, shown, color);
    assert.deepEqual(sets, ["text", "tooltip", "backgroundColor"]);
    // A change is shown, with its background.
    const warn: StatusBarView = { ...idle, tooltip: "zot — p/m\nslow", background: "statusBarItem.warningBackground" };
    shown = applyStatusBar(item, warn, shown, color);
    assert.equal(sets.length, 6);
    assert.equal(item.tooltip, warn.tooltip);
    assert.equal(item.backgroundColor, "color:statusBarItem.warningBackground");
    // Back to no background.
    applyStatusBar(item, idle, shown, color);
    assert.equal(item.backgroundColor, undefined);
    assert.equal(sets.length, 9);
});

import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { resetFake, fake } from "./fake/vscode";
import { ExtensionUI } from "../../src/extui";
import type { HostToChat } from "../../src/webview/protocol";

beforeEach(() => resetFake());

test("zot/ui/request: confirm is a No/Yes QuickPick (closable, unlike a modal; the safe answer first), select a QuickPick of the options, input an InputBox", async () => {
    const ui = new ExtensionUI();
    fake.answers.push("Yes", "No", "Deny", "my text");
    assert.deepEqual(await ui.request({ extension: "gate", kind: "confirm", title: "Allow?", message: "rm -rf build" }), { value: true });
    assert.deepEqual(await ui.request({ extension: "gate", kind: "confirm", title: "Allow?", message: "rm -rf build" }), { value: false });
    assert.deepEqual(fake.quickPicks.slice(0, 2), [
        ["No", "Yes"],
        ["No", "Yes"],
    ]);
    assert.deepEqual(await ui.request({ extension: "gate", kind: "select", title: "Allow?", options: ["Allow once", "Deny"] }), { value: "Deny" });
    assert.deepEqual(await ui.request({ extension: "x", kind: "input", title: "Name?", default: "d" }), { value: "my text" });
});

test("zot/ui/request: dismissed dialogs and answers outside the options are cancelled", async () => {
    const ui = new ExtensionUI();
    assert.deepEqual(await ui.request({ extension: "gate", kind: "confirm", message: "ok?" }), { cancelled: true });
    fake.answers.push("not an option");
    assert.deepEqual(await ui.request({ extension: "gate", kind: "select", options: ["a", "b"] }), { cancelled: true });
    assert.deepEqual(await ui.request({ extension: "x", kind: "input" }), { cancelled: true });
});

test("zot/ui/status: one status bar item per key, removed by null and with the client", () => {
    const ui = new ExtensionUI();
    ui.status({ extension: "plan-mode", key: "mode", text: "plan" });
    ui.status({ extension: "other", key: "mode", text: "busy" });
    assert.deepEqual([...ui.shown()].sort(), [["status:other/mode", "busy"], ["status:plan-mode/mode", "plan"]]);
    ui.status({ extension: "plan-mode", key: "mode", text: null });
    assert.deepEqual([...ui.shown()], [["status:other/mode", "busy"]]);
    ui.dispose();
    assert.equal(ui.shown().size, 0);
});

test("zot/ui/widget: lines above the chat's input, a burst drawn once with the last lines, removed by null and with the client", async () => {
    const posted: HostToChat[] = [];
    const ui = new ExtensionUI({ post: (m) => void posted.push(m) });
    for (let i = 0; i < 500; i++) {
        ui.widget({ extension: "todo", key: "list", lines: [`- item ${i}`] });
    }
    ui.widget({ extension: "capext", key: "w", lines: ["line 1", "line 2"] });
    await ui.widgetsSettled();
    assert.deepEqual(posted, [
        {
            type: "widgets",
            widgets: [
                { extension: "capext", key: "w", lines: ["line 1", "line 2"] },
                { extension: "todo", key: "list", lines: ["- item 499"] },
            ],
        },
    ]);
    assert.equal(ui.shown().size, 0, "widgets are not status bar items");
    ui.widget({ extension: "todo", key: "list", lines: null });
    await ui.widgetsSettled();
    assert.deepEqual(posted.at(-1), { type: "widgets", widgets: [{ extension: "capext", key: "w", lines: ["line 1", "line 2"] }] });
    ui.dispose();
    assert.deepEqual(posted.at(-1), { type: "widgets", widgets: [] }, "the client stopped: its widgets go");
    assert.equal(posted.length, 3);
});

import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { resetFake, fake, fireClosed, type FakeDocument } from "./fake/vscode";
import { ExtensionUI, EDITOR_OPEN_CONTEXT, finishEditorDialog } from "../../src/extui";
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

/** Waits until the editor dialog's document is shown. */
async function shownDialog(): Promise<FakeDocument> {
    for (let i = 0; i < 100 && fake.shown.length === 0; i++) {
        await new Promise((r) => setImmediate(r));
    }
    assert.ok(fake.shown.length > 0, "the dialog's document was not shown");
    return fake.shown[0];
}

test("zot/ui/request editor: an untitled document prefilled with the text; Done answers what the user wrote, and the document closes unsaved", async () => {
    const ui = new ExtensionUI();
    const closing: string[] = [];
    fake.commands.set("workbench.action.revertAndCloseActiveEditor", () => {
        const doc = (vscode.window.activeTextEditor as unknown as { document: FakeDocument }).document;
        closing.push(doc.uri.toString());
        doc.isClosed = true;
        fireClosed(doc);
    });
    const answer = ui.request({ extension: "notes", kind: "editor", title: "Notes", default: "line 1\nline 2" });
    const doc = await shownDialog();
    assert.equal(doc.getText(), "line 1\nline 2");
    assert.equal(doc.uri.scheme, "untitled");
    assert.equal(fake.contexts.get(EDITOR_OPEN_CONTEXT), true);
    assert.deepEqual(
        fake.statusItems.map((i) => [i.text, i.command]),
        [
            ["$(check) Done: [notes] Notes", "zot.editorDialogDone"],
            ["$(close) Cancel", "zot.editorDialogCancel"],
        ],
    );
    doc.text = "line 1\nline 2\nline 3";
    finishEditorDialog(true);
    assert.deepEqual(await answer, { value: "line 1\nline 2\nline 3" });
    assert.ok(fake.statusItems.every((i) => i.disposed), "Done and Cancel go with the dialog");
    assert.equal(fake.contexts.get(EDITOR_OPEN_CONTEXT), false);
    for (let i = 0; i < 100 && closing.length === 0; i++) {
        await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(closing, [doc.uri.toString()], "the document closes without a save question");
});

test("zot/ui/request editor: Cancel, closing the document and zot's cancellation each answer cancelled", async () => {
    const ui = new ExtensionUI();
    let answer = ui.request({ extension: "x", kind: "editor", default: "a" });
    await shownDialog();
    finishEditorDialog(false);
    assert.deepEqual(await answer, { cancelled: true });

    fake.shown.length = 0;
    answer = ui.request({ extension: "x", kind: "editor" });
    const doc = await shownDialog();
    assert.equal(doc.getText(), "");
    fireClosed(doc);
    assert.deepEqual(await answer, { cancelled: true });

    fake.shown.length = 0;
    const source = new vscode.CancellationTokenSource();
    answer = ui.request({ extension: "x", kind: "editor", default: "b" }, source.token);
    await shownDialog();
    source.cancel();
    assert.deepEqual(await answer, { cancelled: true });
    assert.equal(fake.contexts.get(EDITOR_OPEN_CONTEXT), false);
});

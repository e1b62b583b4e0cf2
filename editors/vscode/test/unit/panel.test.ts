import { test } from "node:test";
import assert from "node:assert/strict";
import { toPanelKey } from "../../src/webview/panel/keys";
import { renderLines, renderFooter, stripAnsi } from "../../src/webview/panel/render";

test("browser keys map to zot's panel key names", () => {
    const cases: [string, unknown][] = [
        ["ArrowUp", { key: "up" }],
        ["ArrowDown", { key: "down" }],
        ["ArrowLeft", { key: "left" }],
        ["ArrowRight", { key: "right" }],
        ["Enter", { key: "enter" }],
        ["Escape", { key: "esc" }],
        ["Tab", { key: "tab" }],
        ["PageUp", { key: "pageup" }],
        ["PageDown", { key: "pagedown" }],
        ["Home", { key: "home" }],
        ["End", { key: "end" }],
        ["Backspace", { key: "backspace" }],
        ["Delete", { key: "delete" }],
        ["a", { key: "rune", text: "a" }],
        [" ", { key: "rune", text: " " }],
        ["é", { key: "rune", text: "é" }],
        ["😀", { key: "rune", text: "😀" }],
    ];
    for (const [key, want] of cases) {
        assert.deepEqual(toPanelKey({ key }), want, key);
    }
});

test("ctrl+c goes to zot, which closes the panel as esc does; cmd+c stays copy", () => {
    assert.deepEqual(toPanelKey({ key: "c", ctrlKey: true }), { key: "ctrl+c" });
    assert.deepEqual(toPanelKey({ key: "C", ctrlKey: true }), { key: "ctrl+c" });
    assert.equal(toPanelKey({ key: "c", metaKey: true }), undefined);
    assert.deepEqual(toPanelKey({ key: "q" }), { key: "rune", text: "q" });
    assert.deepEqual(toPanelKey({ key: ":" }), { key: "rune", text: ":" });
});

test("modifier chords and unnamed keys stay with VS Code", () => {
    assert.equal(toPanelKey({ key: "p", ctrlKey: true }), undefined);
    assert.equal(toPanelKey({ key: "p", metaKey: true }), undefined);
    assert.equal(toPanelKey({ key: "Enter", altKey: true }), undefined);
    assert.equal(toPanelKey({ key: "Shift" }), undefined);
    assert.equal(toPanelKey({ key: "F5" }), undefined);
    assert.equal(toPanelKey({ key: "a", isComposing: true }), undefined);
});

test("panel lines render escaped, one per row, ANSI stripped", () => {
    const html = renderLines({ panelId: "p", extension: "x", title: "T", lines: ["› □ <b>buy</b>", "", "\x1b[1mbold\x1b[0m"], footer: "q close" });
    assert.equal(html, '<div class="line">› □ &lt;b&gt;buy&lt;/b&gt;</div><div class="line">&nbsp;</div><div class="line">bold</div>');
    assert.equal(renderFooter({ panelId: "p", extension: "x", title: "T", lines: [], footer: "a & b" }), "a &amp; b");
    assert.equal(stripAnsi("\x1b]0;title\x07x"), "x");
});

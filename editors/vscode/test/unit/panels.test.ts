import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { resetFake, fake } from "./fake/vscode";
import { PanelManager, type PanelSink } from "../../src/panels";
import type { Panel, PanelKeyParams, PanelCloseParams } from "../../src/lsp_ext";

const panel = (p: Partial<Panel> = {}): Panel => ({ panelId: "p1", extension: "todo", title: "Todos", lines: ["□ a"], footer: "q close", ...p });

function setup(connected = true) {
    const keys: PanelKeyParams[] = [];
    const closed: PanelCloseParams[] = [];
    const sink: PanelSink = { key: (p) => keys.push(p), closed: (p) => closed.push(p) };
    const m = new PanelManager(vscode.Uri.file("/ext"), () => (connected ? sink : undefined));
    return { m, keys, closed };
}

beforeEach(() => resetFake());

test("open: a webview with a strict CSP; it renders once its script is ready", () => {
    const { m } = setup();
    m.open(panel());
    assert.equal(fake.panels.length, 1);
    const wp = fake.panels[0];
    assert.equal(wp.title, "Todos");
    assert.match(wp.webview.html, /default-src 'none'/);
    assert.match(wp.webview.html, /script-src 'nonce-/);
    assert.deepEqual(wp.posted, [], "nothing is posted before the webview is ready");
    wp.receive({ type: "ready" });
    assert.deepEqual(wp.posted, [{ type: "render", panel: panel() }]);
    assert.deepEqual(m.ids, ["p1"]);
});

test("render: new lines re-render in place, a new title renames, the extension is kept", () => {
    const { m } = setup();
    m.open(panel());
    const wp = fake.panels[0];
    m.render(panel({ lines: ["■ a"], title: "" , extension: "" }));
    assert.deepEqual(wp.posted, [], "not ready yet");
    wp.receive({ type: "ready" });
    assert.deepEqual(wp.posted, [{ type: "render", panel: panel({ lines: ["■ a"] }) }]);
    m.render(panel({ title: "Todos (1)" }));
    assert.equal(wp.title, "Todos (1)");
    assert.equal(wp.posted.length, 2);
    m.render(panel({ panelId: "other" }));
    assert.equal(wp.posted.length, 2, "a render for an unknown panel draws nothing");
    m.open(panel({ lines: ["x"] }));
    assert.equal(fake.panels.length, 1, "opening an open panel reveals it");
    assert.equal(wp.revealed, 1);
});

test("keys go to zot as zot/panel/key with the panel id", () => {
    const { m, keys } = setup();
    m.open(panel());
    fake.panels[0].receive({ type: "key", key: "down" });
    fake.panels[0].receive({ type: "key", key: "rune", text: "x" });
    assert.deepEqual(keys, [
        { panelId: "p1", key: "down", text: undefined },
        { panelId: "p1", key: "rune", text: "x" },
    ]);
});

test("the user closing the panel sends zot/panel/closed; the server closing it does not", () => {
    const { m, closed } = setup();
    m.open(panel());
    m.open(panel({ panelId: "p2", extension: "" }));
    fake.panels[0].dispose();
    assert.deepEqual(closed, [{ panelId: "p1", extension: "todo" }]);
    m.close({ panelId: "p2" });
    assert.equal(fake.panels[1].disposed, true);
    assert.deepEqual(closed, [{ panelId: "p1", extension: "todo" }], "no closed for a panel the server closed");
    assert.deepEqual(m.ids, []);
});

test("closeAll (the server went away) closes every panel without telling it", () => {
    const { m, closed } = setup();
    m.open(panel());
    m.open(panel({ panelId: "p2" }));
    m.closeAll();
    assert.ok(fake.panels.every((p) => p.disposed));
    assert.deepEqual(closed, []);
    assert.deepEqual(m.ids, []);
});

test("keys while disconnected go nowhere (no throw)", () => {
    const { m, keys } = setup(false);
    m.open(panel());
    fake.panels[0].receive({ type: "key", key: "up" });
    assert.deepEqual(keys, []);
});

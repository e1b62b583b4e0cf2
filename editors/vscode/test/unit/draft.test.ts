import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DraftStore, DRAFT_FILE } from "../../src/draft";

function memento() {
    const m = new Map<string, unknown>();
    return { get: <T>(k: string) => m.get(k) as T | undefined, update: async (k: string, v: unknown) => void m.set(k, v), m };
}

test("draft: written to the storage folder at once, read back by a new store (a window reload)", async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "zot-draft-")), "not", "yet");
    const first = new DraftStore(dir, memento());
    first.set("a half-typed draft");
    assert.equal(first.get(), "a half-typed draft", "this window has it while the write is under way");
    await first.written();
    assert.equal(fs.readFileSync(path.join(dir, DRAFT_FILE), "utf8"), "a half-typed draft", "on disk without waiting for the memento");
    assert.equal(new DraftStore(dir, memento()).get(), "a half-typed draft", "a new store (after a reload, an empty memento) has it");
    first.set("");
    await first.written();
    assert.equal(new DraftStore(dir, memento()).get(), "", "sent: the draft is gone");
    assert.deepEqual(fs.readdirSync(dir), [DRAFT_FILE], "no temp file left");
});

test("draft: no storage folder (no workspace) keeps it in the memento", () => {
    const m = memento();
    new DraftStore(undefined, m).set("typed");
    assert.equal(new DraftStore(undefined, m).get(), "typed");
});

test("draft: an older version's draft in the memento is still offered", () => {
    const m = memento();
    m.m.set("zot.draft", "from before");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zot-draft-"));
    assert.equal(new DraftStore(dir, m).get(), "from before");
});

test("draft: a storage folder that cannot be written is logged, the memento still has the draft", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "zot-draft-")), "a-file");
    fs.writeFileSync(file, "");
    const logs: string[] = [];
    const m = memento();
    const store = new DraftStore(path.join(file, "sub"), m, (s) => logs.push(s));
    store.set("typed");
    await store.written();
    assert.equal(logs.length, 1);
    assert.match(logs[0], /keeping the draft/);
    assert.equal(m.m.get("zot.draft"), "typed");
});

// Each memento update crosses to the window (code-server: a WebSocket
// message and the browser's storage): with a file, the memento is left
// alone, and an older draft in it is dropped (it would come back were
// the file lost).
test("draft: with a storage folder the memento is not written per keystroke", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zot-draft-"));
    const m = memento();
    m.m.set("zot.draft", "from before");
    const updates: unknown[] = [];
    const store = new DraftStore(dir, { get: m.get, update: (k: string, v: unknown) => (updates.push(v), m.update(k, v)) });
    store.set("t");
    await store.written();
    store.set("ty");
    await store.written();
    store.set("typ");
    await store.written();
    assert.deepEqual(updates, [undefined], "only the older draft dropped, once");
    assert.equal(new DraftStore(dir, memento()).get(), "typ");
});

// Keystrokes typed while a write is under way: one write after it, of the
// last text (the file never ends older than what was typed last).
test("draft: keystrokes during a write make one more write, of the latest text", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zot-draft-"));
    const store = new DraftStore(dir, memento());
    const renames: string[] = [];
    const rename = fs.promises.rename;
    fs.promises.rename = async (from: fs.PathLike, to: fs.PathLike) => {
        await rename(from, to);
        renames.push(fs.readFileSync(to, "utf8"));
    };
    try {
        store.set("a");
        store.set("ab");
        store.set("abc");
        store.set("abcd");
        await store.written();
    } finally {
        fs.promises.rename = rename;
    }
    assert.deepEqual(renames, ["a", "abcd"]);
    assert.equal(new DraftStore(dir, memento()).get(), "abcd");
});

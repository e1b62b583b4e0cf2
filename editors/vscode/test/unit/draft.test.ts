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

test("draft: written to the storage folder at once, read back by a new store (a window reload)", () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "zot-draft-")), "not", "yet");
    const first = new DraftStore(dir, memento());
    first.set("a half-typed draft");
    assert.equal(fs.readFileSync(path.join(dir, DRAFT_FILE), "utf8"), "a half-typed draft", "on disk before anything is flushed");
    assert.equal(new DraftStore(dir, memento()).get(), "a half-typed draft", "a new store (after a reload, an empty memento) has it");
    first.set("");
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

test("draft: a storage folder that cannot be written is logged, the memento still has the draft", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "zot-draft-")), "a-file");
    fs.writeFileSync(file, "");
    const logs: string[] = [];
    const m = memento();
    new DraftStore(path.join(file, "sub"), m, (s) => logs.push(s)).set("typed");
    assert.equal(logs.length, 1);
    assert.match(logs[0], /keeping the draft/);
    assert.equal(m.m.get("zot.draft"), "typed");
});

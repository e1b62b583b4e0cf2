import { test } from "node:test";
import assert from "node:assert/strict";
import { checkpointFor, checkpointText } from "../../src/checkpoint_text";
import type { CheckpointInfo } from "../../src/lsp_ext";

// Diffs as `zot/checkpoint/diff` gives them (git's unified format).
test("a changed line in the middle, context around it", () => {
    const diff = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
    assert.equal(checkpointText(diff, "one\nTWO\nthree\nfour\n"), "one\ntwo\nthree\nfour\n");
});

test("lines added and removed in two hunks", () => {
    const now = "a\nb\nnew1\nnew2\nc\nd\ne\nf\ng\nh\ni\nj\n";
    const diff = "@@ -1,4 +1,6 @@\n a\n b\n+new1\n+new2\n c\n d\n@@ -8,4 +10,3 @@\n h\n i\n-gone\n j\n";
    assert.equal(checkpointText(diff, now), "a\nb\nc\nd\ne\nf\ng\nh\ni\ngone\nj\n");
});

test("an insertion at the very top (count 0 on the old side)", () => {
    assert.equal(checkpointText("@@ -0,0 +1,2 @@\n+x\n+y\n", "x\ny\nz\n"), "z\n");
});

test("a deletion at the end (count 0 on the new side)", () => {
    assert.equal(checkpointText("@@ -2,2 +1,0 @@\n-b\n-c\n", "a\n"), "a\nb\nc\n");
});

test("a final newline added since the checkpoint", () => {
    const diff = "@@ -1 +1 @@\n-last\n\\ No newline at end of file\n+last\n";
    assert.equal(checkpointText(diff, "last\n"), "last");
});

test("checkpointFor: the latest prompt checkpoint of that message, not a restore's", () => {
    const cp = (id: string, messageIndex: number, kind: "prompt" | "restore"): CheckpointInfo => ({ id, messageIndex, kind, prompt: "", time: "", filesChanged: 0 });
    const list = [cp("a", 0, "prompt"), cp("b", 2, "prompt"), cp("c", 4, "restore"), cp("d", 2, "prompt")];
    assert.equal(checkpointFor(list, 2)?.id, "d", "sent again: the newer one");
    assert.equal(checkpointFor(list, 0)?.id, "a");
    assert.equal(checkpointFor(list, 4), undefined, "a restore's checkpoint belongs to no message");
});

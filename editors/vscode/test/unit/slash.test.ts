import { test } from "node:test";
import assert from "node:assert/strict";
import { argQuery, completions, parseSlash, promptText } from "../../src/webview/chat/slash";
import type { CommandInfo } from "../../src/lsp_ext";

const cmds: CommandInfo[] = [
    { name: "help", description: "", source: "builtin" },
    { name: "model", description: "", source: "builtin" },
    { name: "mode", description: "", source: "builtin" },
    { name: "todos", description: "", source: "extension", extension: "todo" },
    { name: "reload-ext", description: "", source: "builtin" },
];

test("completions: while typing /word, prefix matches first", () => {
    assert.deepEqual(completions("/", cmds).map((c) => c.name), ["help", "model", "mode", "todos", "reload-ext"]);
    assert.deepEqual(completions("/mo", cmds).map((c) => c.name), ["model", "mode"]);
    assert.deepEqual(completions("/o", cmds).map((c) => c.name), ["model", "mode", "todos", "reload-ext"]);
    assert.deepEqual(completions("/to", cmds).map((c) => c.name), ["todos"]);
    assert.deepEqual(completions("/model x", cmds), [], "none once arguments start");
    assert.deepEqual(completions("hello /", cmds), []);
    assert.deepEqual(completions("", cmds), []);
});

test("parseSlash", () => {
    assert.deepEqual(parseSlash("/todos"), { name: "todos", args: "" });
    assert.deepEqual(parseSlash("  /mode ask  "), { name: "mode", args: "ask" });
    assert.deepEqual(parseSlash("/todos buy milk\nand eggs"), { name: "todos", args: "buy milk\nand eggs" });
    assert.equal(parseSlash("hello"), undefined);
    assert.equal(parseSlash("//not a command"), undefined);
    assert.equal(parseSlash("/"), undefined);
    assert.equal(promptText("//not a command"), "/not a command");
});

test("argQuery: the argument of a listed command as it is typed", () => {
    assert.deepEqual(argQuery("/mode ", cmds), { name: "mode", args: "" });
    assert.deepEqual(argQuery("/todos buy mi", cmds), { name: "todos", args: "buy mi" });
    assert.equal(argQuery("/mode", cmds), undefined, "the name is still being typed");
    assert.equal(argQuery("/nosuch x", cmds), undefined, "a command zot did not list");
    assert.equal(argQuery("//mode x", cmds), undefined, "a prompt starting with /");
    assert.equal(argQuery("/todos a\nb", cmds), undefined, "a multi-line argument");
    assert.equal(argQuery("hello /mode x", cmds), undefined);
});

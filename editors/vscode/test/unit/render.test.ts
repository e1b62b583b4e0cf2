import { test } from "node:test";
import assert from "node:assert/strict";
import { ItemRenderer, formatUsage, renderTool, summarizeArgs, statusText, renderCompletions } from "../../src/webview/chat/render";
import { renderMarkdown, StreamingMarkdown, stableSplit, highlight } from "../../src/webview/chat/markdown";
import type { ToolItem } from "../../src/webview/chat/state";

test("markdown: emphasis, inline code, lists, links", () => {
    const html = renderMarkdown("Some **bold** and `code`.\n\n- one\n- two\n\n[site](https://example.org)");
    assert.match(html, /<strong>bold<\/strong>/);
    assert.match(html, /<code>code<\/code>/);
    assert.match(html, /<li>one<\/li>/);
    assert.match(html, /<a href="https:\/\/example.org" title="https:\/\/example.org">site<\/a>/);
});

test("markdown: raw HTML and script links are not rendered", () => {
    const html = renderMarkdown('<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))');
    assert.doesNotMatch(html, /<script/);
    assert.doesNotMatch(html, /<img/);
    assert.doesNotMatch(html, /href="javascript:/);
    assert.match(html, /&lt;script&gt;/);
});

test("code blocks are highlighted by language; unknown ones are escaped", () => {
    const html = renderMarkdown("```go\nfunc main() { return \"x\" }\n```\n");
    assert.match(html, /<pre class="code-block"><code class="hljs language-go">/);
    assert.match(html, /<span class="hljs-keyword">func<\/span>/);
    assert.match(html, /<span class="hljs-string">&quot;x&quot;<\/span>/);
    assert.equal(highlight("<b>", "nosuchlang"), "&lt;b&gt;");
});

test("stableSplit: cuts after a blank line, never inside a code fence", () => {
    assert.equal(stableSplit("one line"), -1);
    const t = "para one\n\npara two\n";
    assert.equal(stableSplit(t), t.indexOf("para two"));
    const fenced = "intro\n\n```\ncode\n\nmore code\n";
    assert.equal(stableSplit(fenced), fenced.indexOf("```"));
    const closed = fenced + "```\n\nafter\n";
    assert.equal(stableSplit(closed), closed.indexOf("after"));
});

test("streaming markdown equals a full render, and re-parses only the tail", () => {
    const paragraphs = Array.from({ length: 200 }, (_, i) => `Paragraph ${i} with *emphasis* and \`code\`.`);
    const full = paragraphs.join("\n\n") + "\n\n```ts\nconst x = 1;\n```\n\nThe end.";
    const sm = new StreamingMarkdown();
    let out = "";
    for (let n = 1; n <= full.length; n += 97) {
        out = sm.render(full.slice(0, n));
    }
    out = sm.render(full);
    assert.equal(out, renderMarkdown(full));
    assert.ok(sm.parsed < full.length / 4, `parsed ${sm.parsed} of ${full.length}`);
});

test("tool cards: name, args summary, state, progress, result", () => {
    const t: ToolItem = { kind: "tool", id: "t-1", callId: "1", name: "bash", args: { command: "go test ./..." }, progress: "ok\n", status: "running" };
    let html = renderTool(t);
    assert.match(html, /tool-name">bash</);
    assert.match(html, /go test \.\/\.\.\./);
    assert.match(html, /codicon-loading/);
    assert.match(html, /tool-progress">ok\n</);
    t.status = "error";
    t.result = "FAIL <x>";
    html = renderTool(t);
    assert.match(html, /codicon-error/);
    assert.match(html, /<details class="tool-result-details" data-key="result" open>/);
    assert.match(html, /FAIL &lt;x&gt;/);
    assert.doesNotMatch(html, /tool-progress/);
});

test("args summaries", () => {
    assert.equal(summarizeArgs("read", { path: "a.go" }), "a.go");
    assert.equal(summarizeArgs("edit", { path: "a.go", edits: [{}, {}] }), "a.go (2 edits)");
    assert.equal(summarizeArgs("grep", { pattern: "TODO", path: "src" }), "TODO in src");
    assert.equal(summarizeArgs("todo", { action: "add", text: "x" }), "action=add text=x");
    assert.ok(summarizeArgs("bash", { command: "x".repeat(500) }).length <= 120);
});

test("item renderer: classes and a streaming assistant item", () => {
    const r = new ItemRenderer();
    const a = { kind: "assistant" as const, id: "a-1", text: "Hello **there**", thinking: "", streaming: true };
    assert.equal(r.className(a), "item assistant streaming");
    assert.match(r.html(a), /<strong>there<\/strong>/);
    a.streaming = false;
    assert.equal(r.className(a), "item assistant");
    assert.match(r.html({ kind: "notice", id: "n", level: "display", text: "/help <x>" }), /<pre>\/help &lt;x&gt;<\/pre>/);
    assert.match(r.html({ kind: "notice", id: "n", level: "info", text: "hi", source: "todo" }), /notice-source">todo</);
});

test("usage and status line", () => {
    assert.equal(formatUsage({ input: 0, output: 0, cache_read: 0, cache_write: 0, cost_usd: 0 }), "");
    assert.equal(formatUsage({ input: 1200, output: 345, cache_read: 0, cache_write: 0, cost_usd: 0.0123 }), "↑ 1.2k ↓ 345 · $0.0123");
    assert.equal(statusText({ connection: "running", permissionMode: "ask" }, true), "working… · mode: ask");
    assert.equal(statusText({ connection: "error" }, false), "zot error");
});

test("slash completion list marks the selection", () => {
    const html = renderCompletions(
        [
            { name: "help", description: "list", source: "builtin" },
            { name: "todos", description: "panel", source: "extension", extension: "todo" },
        ],
        1,
    );
    assert.match(html, /completion selected" role="option" data-index="1"/);
    assert.match(html, /\/todos/);
    assert.match(html, /completion-src">todo</);
});

test("thinking: a collapsed section above the answer, escaped, labelled while it streams", () => {
    const r = new ItemRenderer();
    const a = { kind: "assistant" as const, id: "a-2", text: "", thinking: "Is <b> safe? Check.", streaming: true };
    let html = r.html(a);
    assert.match(html, /^<details class="thinking thinking-active" data-key="thinking"><summary>/);
    assert.doesNotMatch(html, /<details[^>]* open/, "collapsed unless the user opens it");
    assert.match(html, /thinking-label">Thinking…</);
    assert.match(html, /thinking-text">Is &lt;b&gt; safe\? Check\.</);
    a.text = "It is **safe**.";
    a.streaming = false;
    html = r.html(a);
    assert.ok(html.indexOf("thinking-text") < html.indexOf("<strong>safe</strong>"), "thinking comes before the answer");
    assert.doesNotMatch(html, /thinking-active/);
    assert.match(html, /thinking-label">Thinking</);
    assert.doesNotMatch(r.html({ ...a, id: "a-3", thinking: "" }), /details/, "no section without thinking");
});

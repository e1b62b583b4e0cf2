import { test } from "node:test";
import assert from "node:assert/strict";
import { ItemRenderer, formatUsage, renderTool, summarizeArgs, statusText, renderCompletions, renderWidgets, renderMcpServer, mcpSummary, mcpNeedsAttention } from "../../src/webview/chat/render";
import { renderMarkdown, StreamingMarkdown, stableSplit, highlight, hideOpenEmphasis } from "../../src/webview/chat/markdown";
import { KnownFiles, OPEN_FILE_COMMAND } from "../../src/webview/chat/files";
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
    assert.match(html, /<span class="code-lang">go<\/span>/);
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

// ------------------------------------------------------------ file names and links

/** Links only the names in exists; records what was asked. */
function filesFake(exists: string[]) {
    const asked: string[] = [];
    return {
        asked,
        href(p: string, line: number, col: number) {
            asked.push(`${p}:${line}:${col}`);
            return exists.includes(p) ? `command:zot.openFile?${encodeURIComponent(JSON.stringify([{ path: p, line, col }]))}` : undefined;
        },
    };
}

test("file names are never web links; only http(s) addresses are", () => {
    const html = renderMarkdown("See calc.py and example.com, www.example.com or https://example.org/x.");
    assert.doesNotMatch(html, /http:\/\/calc\.py|href="http:\/\/example\.com|href="http:\/\/www/);
    assert.match(html, /<a href="https:\/\/example.org\/x"/);
});

test("existing files become links to the file at the line: text, inline code, markdown links", () => {
    const files = filesFake(["calc.py", "src/app.ts", "docs/a b.md"]);
    const html = renderMarkdown("Fix calc.py:12 and `src/app.ts`; [the app](src/app.ts#L7); not missing.py or e.g. 1.5.", files);
    const hrefs = [...html.matchAll(/<a href="([^"]*)" class="file-link"[^>]*>(.*?)<\/a>/g)].map((m) => [JSON.parse(decodeURIComponent(m[1].replace(/&quot;/g, '"').replace(/^command:zot\.openFile\?/, ""))) as unknown, m[2]]);
    assert.deepEqual(hrefs, [
        [[{ path: "calc.py", line: 12, col: 0 }], "calc.py:12"],
        [[{ path: "src/app.ts", line: 0, col: 0 }], "<code>src/app.ts</code>"],
        [[{ path: "src/app.ts", line: 7, col: 0 }], "the app"],
    ]);
    assert.ok(files.asked.includes("missing.py:0:0"), `asked: ${files.asked.join(" ")}`);
    assert.doesNotMatch(html, /missing\.py<\/a>/);
});

test("a link to a missing file, or with another scheme (command:, file:), is plain text", () => {
    const html = renderMarkdown("[run](command:workbench.action.terminal.new) [x](file:///etc/passwd) [gone](gone.py)", filesFake([]));
    assert.doesNotMatch(html, /<a /);
    assert.match(html, /run/);
    assert.match(html, /gone/);
});

test("without a file resolver (tests, notices) names stay text", () => {
    assert.doesNotMatch(renderMarkdown("calc.py:3"), /<a /);
});

test("KnownFiles asks the host once per name, batched, and links what exists", () => {
    const asks: string[][] = [];
    const later: (() => void)[] = [];
    const k = new KnownFiles((p) => asks.push(p), (f) => later.push(f));
    assert.equal(k.href("a.go", 3, 0), undefined);
    assert.equal(k.href("b.go", 0, 0), undefined);
    assert.equal(k.href("a.go", 4, 0), undefined);
    later.forEach((f) => f());
    assert.deepEqual(asks, [["a.go", "b.go"]]);
    assert.equal(k.resolved({ "a.go": true, "b.go": false }), true);
    assert.equal(k.href("a.go", 3, 2), `command:${OPEN_FILE_COMMAND}?${encodeURIComponent(JSON.stringify([{ path: "a.go", line: 3, col: 2 }]))}`);
    assert.equal(k.href("b.go", 0, 0), undefined);
    assert.equal(later.length, 1, "known names are not asked again");
    assert.equal(k.resolved({ "c.go": false }), false, "nothing new to link: no re-render");
});

test("code blocks: a header with the language, then the highlighted code", () => {
    const html = renderMarkdown("```python\nprint(1)\n```\n");
    assert.match(html, /^<div class="code-wrap" data-lang="python"><div class="code-head"><span class="code-lang">python<\/span><span class="code-actions">.*<\/span><\/div><pre class="code-block">/);
    assert.equal((html.match(/<pre/g) ?? []).length, 1, "one <pre>, not nested in another: " + html);
    assert.match(html, /data-action="copy"[^>]*aria-label="Copy"/);
    assert.match(html, /data-action="insert"[^>]*aria-label="Insert at the cursor"/);
});

// ------------------------------------------------------------ streaming emphasis

test("while streaming, an unclosed emphasis or code span shows as text, without its marker", () => {
    assert.equal(hideOpenEmphasis("Some **su"), "Some su");
    assert.equal(hideOpenEmphasis("Some **bold** and *it"), "Some **bold** and it");
    assert.equal(hideOpenEmphasis("run `go te"), "run go te");
    assert.equal(hideOpenEmphasis("a snake_case name"), "a snake_case name");
    assert.equal(hideOpenEmphasis("2 * 3 = 6"), "2 * 3 = 6");
    assert.equal(hideOpenEmphasis("- item\n- *two"), "- item\n- two");
    assert.equal(hideOpenEmphasis("```\ncode with **\n"), "```\ncode with **\n", "inside a code block nothing is emphasis");
    assert.equal(hideOpenEmphasis("closed `a*b` span"), "closed `a*b` span");
    const sm = new StreamingMarkdown();
    assert.doesNotMatch(sm.render("Some **su"), /\*\*/);
    assert.match(sm.render("Some **sure**"), /<strong>sure<\/strong>/);
});

test("widgets: a block per (extension, key), each line escaped, empty widgets left out", () => {
    const html = renderWidgets([
        { extension: "capext", key: "w", lines: ["line 1", "<b>2</b>"] },
        { extension: "todo", key: "none", lines: [] },
    ]);
    assert.equal(
        html,
        '<div class="widget" data-extension="capext" data-key="w" title="capext"><div class="widget-line">line 1</div><div class="widget-line">&lt;b&gt;2&lt;/b&gt;</div></div>',
    );
    assert.equal(renderWidgets([]), "");
});

test("MCP lines: name, state, tool count, last error (not once ready), a restart button; the summary counts states", () => {
    const srv = (name: string, state: string, tools: string[], lastError?: string) => ({ name, scope: "user", transport: "stdio", command: "x", state, tools, lastError });
    const failed = renderMcpServer(srv("db", "failed", [], "exited (exit status 3) <x>"));
    assert.match(failed, /codicon-error/);
    assert.match(failed, /<span class="mcp-name">db<\/span><span class="mcp-state">failed · 0 tools<\/span>/);
    assert.match(failed, /<span class="mcp-error" title="exited \(exit status 3\) &lt;x&gt;">exited \(exit status 3\) &lt;x&gt;<\/span>/);
    assert.match(failed, /<button class="icon mcp-restart" data-name="db" title="Restart db"/);
    const ready = renderMcpServer(srv("everything", "ready", ["a"], "old error"));
    assert.match(ready, /ready · 1 tool</);
    assert.doesNotMatch(ready, /mcp-error/);
    const m = { servers: [srv("a", "ready", []), srv("b", "failed", []), srv("c", "ready", [])] };
    assert.equal(mcpSummary(m), "MCP: 2 ready, 1 failed");
    assert.equal(mcpNeedsAttention(m), true);
    assert.equal(mcpNeedsAttention({ servers: [srv("a", "ready", [])] }), false);
    assert.equal(mcpSummary({ servers: [], disabled: false }), "", "no servers: no section");
    assert.equal(mcpSummary({ servers: m.servers, disabled: true }), "");
});

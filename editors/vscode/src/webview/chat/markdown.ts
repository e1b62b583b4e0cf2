// Markdown for the chat: markdown-it (no raw HTML: the model's text can
// never inject markup), code blocks highlighted by highlight.js (a fixed
// set of languages, colours from the VS Code theme in chat.css), and an
// incremental renderer for text that grows while it streams.

import MarkdownIt from "markdown-it";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import lua from "highlight.js/lib/languages/lua";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const languages: Record<string, Parameters<typeof hljs.registerLanguage>[1]> = {
    bash, c, cpp, css, diff, go, java, javascript, json, lua, markdown, python, rust, shell, sql, typescript, xml, yaml,
};
for (const [name, lang] of Object.entries(languages)) {
    hljs.registerLanguage(name, lang);
}

export function escapeHtml(s: string): string {
    return s.replace(/[&<>"']/g, (ch) =>
        ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : ch === '"' ? "&quot;" : "&#39;",
    );
}

/** Highlights code in lang; unknown languages are escaped only. */
export function highlight(code: string, lang: string): string {
    const l = (lang || "").trim().split(/\s+/)[0].toLowerCase();
    if (l && hljs.getLanguage(l)) {
        try {
            return hljs.highlight(code, { language: l, ignoreIllegals: true }).value;
        } catch {
            // fall through
        }
    }
    return escapeHtml(code);
}

/**
 * File names the chat turns into links. href returns the link for a path
 * (with its line and column, 1-based, 0 for none) when the file is known
 * to exist, else undefined (and may ask about it: the chat re-renders
 * when the answer comes). Only existing files become links.
 */
export interface FileLinks {
    href(path: string, line: number, col: number): string | undefined;
}

interface Env {
    files?: FileLinks;
}

/** The code block: a header with the language, then the highlighted code. */
function codeBlock(code: string, lang: string): string {
    const name = (lang || "").trim().split(/\s+/)[0];
    const body = highlight(code, name);
    const cls = name ? ` class="hljs language-${escapeHtml(name)}"` : ` class="hljs"`;
    const label = name ? `<span class="code-lang">${escapeHtml(name)}</span>` : "";
    const actions =
        `<span class="code-actions">` +
        `<button class="code-action" data-action="copy" title="Copy" aria-label="Copy"><span class="codicon codicon-copy" aria-hidden="true"></span></button>` +
        `<button class="code-action" data-action="insert" title="Insert at the cursor" aria-label="Insert at the cursor"><span class="codicon codicon-insert" aria-hidden="true"></span></button>` +
        `<button class="code-action" data-action="apply" title="Apply to file (reviewed in ask mode)" aria-label="Apply to file"><span class="codicon codicon-git-pull-request-go-to-changes" aria-hidden="true"></span><span class="code-action-label">Apply</span></button>` +
        `</span>`;
    return `<div class="code-wrap" data-lang="${escapeHtml(name)}"><div class="code-head">${label}${actions}</div><pre class="code-block"><code${cls}>${body}</code></pre></div>`;
}

const md: MarkdownIt = new MarkdownIt({
    html: false,
    linkify: true,
    breaks: false,
    typographer: false,
});
// Fenced code: our block as is (markdown-it would wrap a highlight result
// that does not start with <pre in a <pre><code> of its own).
md.renderer.rules.fence = (tokens, idx) => codeBlock(tokens[idx].content, tokens[idx].info);

// Only real web addresses become web links: "calc.py" or "example.com"
// without a scheme is not one (linkify's fuzzy links would make it
// http://calc.py). File names are linked by fileLinks below, to the file.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
md.linkify.add("ftp:", null).add("//", null);

const WEB = /^(https?:|mailto:)/i;
// A link the model wrote is a web link or a (relative) file path; any
// other scheme (command:, vscode:, file:, javascript: …) is never a link:
// a click must not run or open what the model chose.
md.validateLink = (url: string) => WEB.test(url.trim()) || !/^[a-z][a-z0-9+.-]*:/i.test(url.trim());

// Links open outside the webview (VS Code routes them); mark them so.
const defaultLinkOpen =
    md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const t = tokens[idx];
    if (!t.attrGet("title")) {
        t.attrSet("title", t.attrGet("href") ?? "");
    }
    return defaultLinkOpen(tokens, idx, options, env, self);
};

/**
 * A path as the model writes it: a/b/c.go, ./x, /abs/path.ts, name.ext,
 * optionally with :line or :line:col. Not a path: anything glued to a
 * word, a slash, a dot or a scheme before it.
 */
const FILE_RE =
    /(?<![\w/.@:~-])((?:~\/|\.{1,2}\/|\/)?(?:[\w@.+-]+\/)*[\w+-][\w.+-]*\.[A-Za-z][\w]{0,9}|(?:~\/|\.{1,2}\/|\/)?(?:[\w@.+-]+\/)+[\w.+-]*[\w+-])(?::(\d+)(?::(\d+))?)?(?![\w/])/g;

/** Splits a path with an optional :line[:col] (or #Lline) into its parts. */
export function parseFileRef(ref: string): { path: string; line: number; col: number } | undefined {
    const m = /^(.*?)(?::(\d+)(?::(\d+))?|#L(\d+)(?:C(\d+))?)?$/.exec(ref.trim());
    if (!m || !m[1]) {
        return undefined;
    }
    return { path: m[1], line: Number(m[2] ?? m[4] ?? 0), col: Number(m[3] ?? m[5] ?? 0) };
}

type Token = ReturnType<MarkdownIt["parseInline"]>[number];

function linkTokens(state: { Token: new (type: string, tag: string, nesting: -1 | 0 | 1) => Token }, href: string, title: string, inner: Token): Token[] {
    const open = new state.Token("link_open", "a", 1);
    open.attrs = [["href", href], ["class", "file-link"], ["title", title]];
    const close = new state.Token("link_close", "a", -1);
    return [open, inner, close];
}

// File links: existing files named in text, in `inline code` or as a
// markdown link's target become links to the file (at the line).
md.core.ruler.push("zot_file_links", (state) => {
    const files = (state.env as Env | undefined)?.files;
    if (!files) {
        return;
    }
    for (const block of state.tokens) {
        if (block.type !== "inline" || !block.children) {
            continue;
        }
        const out: Token[] = [];
        let depth = 0;
        const children = block.children;
        for (let i = 0; i < children.length; i++) {
            const t = children[i];
            if (t.type === "link_open") {
                const href = t.attrGet("href") ?? "";
                if (!WEB.test(href) && !href.startsWith("#")) {
                    // [calc.py](calc.py): the file's link, or no link.
                    const ref = parseFileRef(decodeURIComponent(href));
                    const to = ref && files.href(ref.path, ref.line, ref.col);
                    if (to) {
                        t.attrSet("href", to);
                        t.attrSet("class", "file-link");
                        t.attrSet("title", href);
                    } else {
                        // Drop the link, keep its text.
                        let j = i + 1;
                        let d = 1;
                        for (; j < children.length; j++) {
                            d += children[j].nesting === 1 && children[j].type === "link_open" ? 1 : children[j].type === "link_close" ? -1 : 0;
                            if (d === 0) {
                                break;
                            }
                        }
                        for (let k = i + 1; k < j; k++) {
                            out.push(children[k]);
                        }
                        i = j;
                        continue;
                    }
                }
                depth++;
                out.push(t);
                continue;
            }
            if (t.type === "link_close") {
                depth--;
                out.push(t);
                continue;
            }
            if (depth > 0) {
                out.push(t);
                continue;
            }
            if (t.type === "code_inline") {
                const ref = parseFileRef(t.content);
                const to = ref && /^[^\s`]+$/.test(t.content) && new RegExp(`^(?:${FILE_RE.source})$`).test(t.content) ? files.href(ref.path, ref.line, ref.col) : undefined;
                if (to) {
                    out.push(...linkTokens(state, to, t.content, t));
                } else {
                    out.push(t);
                }
                continue;
            }
            if (t.type !== "text") {
                out.push(t);
                continue;
            }
            let last = 0;
            const text = t.content;
            FILE_RE.lastIndex = 0;
            for (let m = FILE_RE.exec(text); m; m = FILE_RE.exec(text)) {
                const to = files.href(m[1], Number(m[2] ?? 0), Number(m[3] ?? 0));
                if (!to) {
                    continue;
                }
                if (m.index > last) {
                    const before = new state.Token("text", "", 0);
                    before.content = text.slice(last, m.index);
                    out.push(before);
                }
                const inner = new state.Token("text", "", 0);
                inner.content = m[0];
                out.push(...linkTokens(state, to, m[0], inner));
                last = m.index + m[0].length;
            }
            if (last === 0) {
                out.push(t);
            } else if (last < text.length) {
                const after = new state.Token("text", "", 0);
                after.content = text.slice(last);
                out.push(after);
            }
        }
        block.children = out;
    }
});

export function renderMarkdown(text: string, files?: FileLinks): string {
    return md.render(text, { files } satisfies Env);
}

/**
 * While an answer streams, an emphasis or code span that is opened but
 * not closed yet (`**su`) would show its raw markers until it closes and
 * they vanish. Its opening marker is left out until then: the text shows
 * plain, then styled.
 */
export function hideOpenEmphasis(text: string): string {
    if ((text.match(/^ {0,3}(```|~~~)/gm) ?? []).length % 2 === 1) {
        return text; // inside a code block: nothing is emphasis
    }
    // Only the last paragraph can still be open.
    const start = text.lastIndexOf("\n\n") + 1;
    const head = text.slice(0, start);
    const tail = text.slice(start);
    // Code spans first: inside one, * and _ are literal.
    const ticks = [...tail.matchAll(/(?<!\\)`+/g)];
    if (ticks.length % 2 === 1) {
        const t = ticks[ticks.length - 1];
        return head + tail.slice(0, t.index) + tail.slice(t.index + t[0].length);
    }
    const masked = tail.replace(/`[^`]*`/g, (m) => " ".repeat(m.length));
    // Delimiter runs of * and _: an opener is followed by a non-space (and
    // for _ not preceded by a word character); a closer is preceded by a
    // non-space. Openers left without a closer are dropped.
    const open: { ch: string; at: number; len: number }[] = [];
    for (const m of masked.matchAll(/(?<!\\)(\*+|_+)/g)) {
        const at = m.index;
        const run = m[0];
        const before = at > 0 ? masked[at - 1] : " ";
        const after = masked[at + run.length] ?? " ";
        const canClose = !/\s/.test(before);
        const canOpen = !/\s/.test(after) && !/\w/.test(before);
        let top = open.length - 1;
        while (top >= 0 && open[top].ch !== run[0]) {
            top--;
        }
        if (canClose && top >= 0) {
            open.splice(top);
        } else if (canOpen) {
            open.push({ ch: run[0], at, len: run.length });
        }
    }
    if (open.length === 0) {
        return text;
    }
    let out = tail;
    for (const o of open.reverse()) {
        out = out.slice(0, o.at) + out.slice(o.at + o.len);
    }
    return head + out;
}

/**
 * Where text can be cut so that the part before renders the same on its
 * own: after the last blank line that is outside a code fence. -1 if none.
 */
export function stableSplit(text: string): number {
    let fence: string | null = null;
    let split = -1;
    let pos = 0;
    let prevBlank = false;
    while (pos < text.length) {
        const nl = text.indexOf("\n", pos);
        const end = nl < 0 ? text.length : nl;
        const line = text.slice(pos, end);
        const outside = fence === null; // at the start of this line
        const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
        if (m) {
            if (fence === null) {
                fence = m[1];
            } else if (m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) {
                fence = null;
            }
        }
        const blank = line.trim() === "";
        if (nl < 0) {
            break; // the last line may still grow
        }
        // A blank line followed by a line that does not start with
        // whitespace (no lazy continuation, no indented list content).
        if (outside && prevBlank && !blank && !/^\s/.test(line) && !/^([-*+]|\d+[.)])\s/.test(line)) {
            split = pos;
        }
        prevBlank = blank;
        pos = nl + 1;
    }
    return split;
}

/**
 * Renders text that only grows (a streaming answer) without re-parsing
 * all of it each frame: the part up to the last safe split is rendered
 * once and cached; only the tail is rendered again. The final render (not
 * streaming) should use renderMarkdown on the whole text.
 */
export class StreamingMarkdown {
    private prefixLen = 0;
    private prefixHtml = "";
    private lastText = "";
    /** How many characters were parsed in the last render (for tests). */
    parsed = 0;

    constructor(private readonly files?: FileLinks) {}

    render(text: string): string {
        if (!text.startsWith(this.lastText.slice(0, this.prefixLen))) {
            this.prefixLen = 0;
            this.prefixHtml = "";
        }
        this.lastText = text;
        const split = stableSplit(text);
        // Re-cut only when the tail has grown enough to be worth it.
        if (split > this.prefixLen && split - this.prefixLen > 256) {
            this.prefixHtml += renderMarkdown(text.slice(this.prefixLen, split), this.files);
            this.parsed = split - this.prefixLen;
            this.prefixLen = split;
        } else {
            this.parsed = 0;
        }
        const tail = text.slice(this.prefixLen);
        this.parsed += tail.length;
        return this.prefixHtml + renderMarkdown(hideOpenEmphasis(tail), this.files);
    }
}

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

const md: MarkdownIt = new MarkdownIt({
    html: false,
    linkify: true,
    breaks: false,
    typographer: false,
    highlight: (code, lang) => {
        const body = highlight(code, lang);
        const cls = lang ? ` class="hljs language-${escapeHtml(lang.split(/\s+/)[0])}"` : ` class="hljs"`;
        return `<pre class="code-block"><code${cls}>${body}</code></pre>`;
    },
});

// Links open outside the webview (VS Code routes them); mark them so.
const defaultLinkOpen =
    md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx].attrSet("title", tokens[idx].attrGet("href") ?? "");
    return defaultLinkOpen(tokens, idx, options, env, self);
};

export function renderMarkdown(text: string): string {
    return md.render(text);
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

    render(text: string): string {
        if (!text.startsWith(this.lastText.slice(0, this.prefixLen))) {
            this.prefixLen = 0;
            this.prefixHtml = "";
        }
        this.lastText = text;
        const split = stableSplit(text);
        // Re-cut only when the tail has grown enough to be worth it.
        if (split > this.prefixLen && split - this.prefixLen > 256) {
            this.prefixHtml += renderMarkdown(text.slice(this.prefixLen, split));
            this.parsed = split - this.prefixLen;
            this.prefixLen = split;
        } else {
            this.parsed = 0;
        }
        const tail = text.slice(this.prefixLen);
        this.parsed += tail.length;
        return this.prefixHtml + renderMarkdown(tail);
    }
}

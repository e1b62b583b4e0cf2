// Attachments (chips) as the chat shows them. zot expands each attachment
// into a `<context kind="…" label="…" …>` text block of the user's message
// (docs/protocol.md, "Attachments"); the chat shows such blocks as chips,
// never as text. Pure: no DOM, no 'vscode'.

import type { WireContent } from "../../lsp_ext";

/** A chip: what the header of a context block says. */
export interface Chip {
    kind: string;
    label: string;
    path?: string;
    uri?: string;
    lines?: string;
    server?: string;
}

const OPEN = "<context ";
const CLOSE = "</context>";

function unescapeXml(s: string): string {
    return s.replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos);/gi, (m, e: string) => {
        switch (e.toLowerCase()) {
            case "amp":
                return "&";
            case "lt":
                return "<";
            case "gt":
                return ">";
            case "quot":
                return '"';
            case "apos":
                return "'";
        }
        const n = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(n) ? String.fromCodePoint(n) : m;
    });
}

/** The chip of a context block, or undefined for any other text. */
export function parseContextBlock(text: string): Chip | undefined {
    if (!text.startsWith(OPEN) || !text.endsWith(CLOSE)) {
        return undefined;
    }
    const nl = text.indexOf("\n");
    const head = nl >= 0 ? text.slice(0, nl) : text;
    if (!head.endsWith(">")) {
        return undefined;
    }
    const attrs: Record<string, string> = {};
    const re = /(\w+)="([^"]*)"/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(head.slice(OPEN.length - 1, -1))) !== null) {
        attrs[m[1]] = unescapeXml(m[2]);
    }
    if (!attrs.kind) {
        return undefined;
    }
    return {
        kind: attrs.kind,
        label: attrs.label || attrs.path || attrs.uri || attrs.kind,
        path: attrs.path,
        uri: attrs.uri,
        lines: attrs.lines,
        server: attrs.server,
    };
}

/** A user message as the chat shows it: the user's text and its chips. */
export function splitUserContent(content: WireContent[] | undefined): { text: string; chips: Chip[] } {
    const texts: string[] = [];
    const chips: Chip[] = [];
    for (const c of content ?? []) {
        if (c.type === "text" && c.text) {
            const chip = parseContextBlock(c.text);
            if (chip) {
                chips.push(chip);
            } else {
                texts.push(c.text);
            }
        } else if (c.type === "image") {
            texts.push(`[image ${c.mime_type ?? ""}${c.bytes ? `, ${c.bytes} bytes` : ""}]`);
        }
    }
    return { text: texts.join("\n"), chips };
}

/** The codicon of a chip's kind. */
export function chipIcon(kind: string): string {
    switch (kind) {
        case "file":
            return "file";
        case "selection":
            return "selection";
        case "problems":
            return "warning";
        case "terminal":
            return "terminal";
        case "mcpResource":
            return "plug";
        default:
            return "paperclip";
    }
}

/**
 * Fuzzy match of query against a path, as VS Code's quick open does it: the
 * query's characters in order, case-insensitive. The score favours matches
 * in the file name, at word starts and in runs; undefined when it does not
 * match. Lower is better.
 */
export function fuzzyScore(query: string, path: string): number | undefined {
    const q = query.toLowerCase();
    if (!q) {
        return path.length;
    }
    const p = path.toLowerCase();
    const nameStart = p.lastIndexOf("/") + 1;
    let score = 0;
    let pi = 0;
    let prev = -2;
    for (const ch of q) {
        const i = p.indexOf(ch, pi);
        if (i < 0) {
            return undefined;
        }
        score += i - pi; // skipped characters
        if (i !== prev + 1) {
            score += 3; // a new run
        }
        if (i < nameStart) {
            score += 2; // in the directories
        }
        const before = i > 0 ? p[i - 1] : "/";
        if (before === "/" || before === "." || before === "_" || before === "-") {
            score -= 2; // a word start
        }
        prev = i;
        pi = i + 1;
    }
    // A query found whole in the file name wins.
    if (p.slice(nameStart).includes(q)) {
        score -= 20;
    }
    return score + path.length / 100;
}

/** The best matches of query among paths, best first. */
export function fuzzyFilter(query: string, paths: readonly string[], max = 20): string[] {
    const scored: { p: string; s: number }[] = [];
    for (const p of paths) {
        const s = fuzzyScore(query, p);
        if (s !== undefined) {
            scored.push({ p, s });
        }
    }
    scored.sort((a, b) => a.s - b.s || a.p.localeCompare(b.p));
    return scored.slice(0, max).map((x) => x.p);
}

/** The `@word` being typed at the cursor, or undefined. */
export function atQueryAt(text: string, cursor: number): { start: number; query: string } | undefined {
    const before = text.slice(0, cursor);
    const m = /(^|\s)@([^\s@]*)$/.exec(before);
    if (!m) {
        return undefined;
    }
    return { start: cursor - m[2].length - 1, query: m[2] };
}

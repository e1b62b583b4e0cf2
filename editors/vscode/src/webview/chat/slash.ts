// Slash commands in the input box: completion and parsing. Pure.

import type { CommandInfo } from "../../lsp_ext";

/**
 * The commands to offer for the input: only while the input is a single
 * "/word" being typed (no space yet). Prefix matches first, then matches
 * inside the name.
 */
export function completions(input: string, commands: CommandInfo[]): CommandInfo[] {
    const m = /^\/(\S*)$/.exec(input);
    if (!m) {
        return [];
    }
    const q = m[1].toLowerCase();
    const prefix = commands.filter((c) => c.name.toLowerCase().startsWith(q));
    const inner = commands.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q));
    return [...prefix, ...inner];
}

/**
 * The slash command whose argument is being typed: "/name " and what
 * follows (the argument so far, spaces kept); undefined otherwise, or for
 * a name zot did not list.
 */
export function argQuery(input: string, commands: CommandInfo[]): { name: string; args: string } | undefined {
    const m = /^\/([^\s/]\S*) ([\s\S]*)$/.exec(input);
    if (!m || m[2].includes("\n") || !commands.some((c) => c.name === m[1])) {
        return undefined;
    }
    return { name: m[1], args: m[2] };
}

/** "/name args" → {name, args}; anything else → undefined. "//x" is a prompt starting with "/x". */
export function parseSlash(text: string): { name: string; args: string } | undefined {
    const t = text.trim();
    const m = /^\/([^\s/][^\s]*)(?:\s+([\s\S]*))?$/.exec(t);
    if (!m) {
        return undefined;
    }
    return { name: m[1], args: (m[2] ?? "").trim() };
}

/** The prompt text to send when the input is not a command ("//x" → "/x"). */
export function promptText(text: string): string {
    return text.startsWith("//") ? text.slice(1) : text;
}

// Browser key events → zot's panel key names (as extensions receive them).
// Pure, for tests.

import type { PanelKey } from "../../lsp_ext";

export interface KeyLike {
    key: string;
    ctrlKey?: boolean;
    metaKey?: boolean;
    altKey?: boolean;
    isComposing?: boolean;
}

const named: Record<string, PanelKey> = {
    ArrowUp: "up",
    ArrowDown: "down",
    ArrowLeft: "left",
    ArrowRight: "right",
    Enter: "enter",
    Escape: "esc",
    Tab: "tab",
    PageUp: "pageup",
    PageDown: "pagedown",
    Home: "home",
    End: "end",
    Backspace: "backspace",
    Delete: "delete",
};

/** The zot key for a keydown, or undefined for keys zot has no name for (and chords VS Code should keep). */
export function toPanelKey(e: KeyLike): { key: PanelKey; text?: string } | undefined {
    if (e.isComposing) {
        return undefined;
    }
    // zot's terminal UI closes a panel on esc and ctrl+c: both go to zot,
    // which closes it (cmd+c stays copy on macOS).
    if (e.ctrlKey && !e.metaKey && !e.altKey && e.key.toLowerCase() === "c") {
        return { key: "ctrl+c" };
    }
    const k = named[e.key];
    if (k) {
        if (e.ctrlKey || e.metaKey || e.altKey) {
            return undefined;
        }
        return { key: k };
    }
    // Printable characters: one code point.
    if ([...e.key].length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
        return { key: "rune", text: e.key };
    }
    return undefined;
}

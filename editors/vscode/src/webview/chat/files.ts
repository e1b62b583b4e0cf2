// Which file names in the chat are links: the webview cannot look at the
// disk, so it asks the extension host about the names it meets (batched)
// and links those that exist. Pure: no DOM.

import type { FileLinks } from "./markdown";

/** The command the links run (registered by the extension; the only
 * command the chat's webview may run through a link). */
export const OPEN_FILE_COMMAND = "zot.openFile";

/** The most names asked about per chat (a bound, not a limit one meets). */
const MAX_KNOWN = 5000;

export class KnownFiles implements FileLinks {
    private readonly exists = new Map<string, boolean>();
    private asking = new Set<string>();
    private scheduled = false;

    /** ask: sends names to the host (answered by resolved()). */
    constructor(
        private readonly ask: (paths: string[]) => void,
        private readonly defer: (f: () => void) => void = (f) => queueMicrotask(f),
    ) {}

    href(path: string, line: number, col: number): string | undefined {
        const known = this.exists.get(path);
        if (known === undefined) {
            this.request(path);
            return undefined;
        }
        if (!known) {
            return undefined;
        }
        const arg = { path, line, col };
        return `command:${OPEN_FILE_COMMAND}?${encodeURIComponent(JSON.stringify([arg]))}`;
    }

    private request(path: string): void {
        if (this.asking.has(path) || this.exists.size + this.asking.size >= MAX_KNOWN) {
            return;
        }
        this.asking.add(path);
        if (!this.scheduled) {
            this.scheduled = true;
            this.defer(() => {
                this.scheduled = false;
                const paths = [...this.asking];
                if (paths.length) {
                    this.ask(paths);
                }
            });
        }
    }

    /** The host's answer; true when a name became a link (re-render then). */
    resolved(answer: Record<string, boolean>): boolean {
        let linked = false;
        for (const [p, ok] of Object.entries(answer)) {
            this.asking.delete(p);
            this.exists.set(p, ok);
            linked ||= ok;
        }
        return linked;
    }

    /** Forget everything (files come and go; a new transcript asks again). */
    clear(): void {
        this.exists.clear();
    }
}

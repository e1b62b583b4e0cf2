// The chat input's draft, kept across window reloads. Each change is
// written at once to a file in the extension's workspace storage (on the
// machine the extension host runs on). workspaceState alone lost it: the
// window flushes those writes, and a reload (in code-server, the
// browser's) dropped the last ones.
import * as fs from "fs";
import * as path from "path";

/** Where a draft is also kept when there is no storage folder (no workspace, a non-file scheme). */
export interface DraftMemento {
    get<T>(key: string): T | undefined;
    update(key: string, value: unknown): Thenable<void>;
}

const KEY = "zot.draft";
export const DRAFT_FILE = "chat-draft.txt";

export class DraftStore {
    private readonly file?: string;

    /** dir: the extension's workspace storage folder (context.storageUri's path), if any. */
    constructor(
        dir: string | undefined,
        private readonly memento: DraftMemento,
        private readonly log: (s: string) => void = () => undefined,
    ) {
        this.file = dir ? path.join(dir, DRAFT_FILE) : undefined;
    }

    get(): string {
        if (this.file) {
            try {
                return fs.readFileSync(this.file, "utf8");
            } catch {
                // none yet: the memento may have one from an older version
            }
        }
        return this.memento.get<string>(KEY) ?? "";
    }

    set(text: string): void {
        void this.memento.update(KEY, text);
        if (!this.file) {
            return;
        }
        try {
            // Whole or not at all: a reload in the middle of a write
            // leaves the previous draft, never half of one.
            fs.mkdirSync(path.dirname(this.file), { recursive: true });
            const tmp = `${this.file}.${process.pid}.tmp`;
            fs.writeFileSync(tmp, text);
            fs.renameSync(tmp, this.file);
        } catch (e) {
            this.log(`[chat] keeping the draft in ${this.file}: ${e instanceof Error ? e.message : String(e)}`);
        }
    }
}

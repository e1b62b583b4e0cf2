// The chat input's draft, kept across window reloads. Each change is
// written as it comes (without blocking the extension host; keystrokes
// during a write make one more) to a file in the extension's workspace
// storage (on the machine the extension host runs on). workspaceState
// alone lost it: the window flushes those writes, and a reload (in
// code-server, the browser's) dropped the last ones.
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
    /** The file's folder exists (made once, not at every keystroke). */
    private dirMade = false;
    /** The draft last set in this window (what get() returns while writes are under way). */
    private latest?: string;
    /** The text waiting for the file write under way to end. */
    private pending?: string;
    /** The writes under way (one at a time, the latest text last). */
    private writing?: Promise<void>;

    /** dir: the extension's workspace storage folder (context.storageUri's path), if any. */
    constructor(
        dir: string | undefined,
        private readonly memento: DraftMemento,
        private readonly log: (s: string) => void = () => undefined,
    ) {
        this.file = dir ? path.join(dir, DRAFT_FILE) : undefined;
    }

    get(): string {
        if (this.latest !== undefined) {
            return this.latest;
        }
        if (this.file) {
            try {
                return fs.readFileSync(this.file, "utf8");
            } catch {
                // none yet: the memento may have one from an older version
            }
        }
        return this.memento.get<string>(KEY) ?? "";
    }

    /**
     * Keeps text as the draft: in the file, else (no storage folder, or it
     * cannot be written) in the memento. Not both: every memento update
     * crosses to the window (code-server: a WebSocket message and a write
     * of the browser's storage), once per keystroke. The file is written
     * without blocking the extension host (a write on a busy disk took
     * milliseconds, at every keystroke and right after each send); writes
     * go one at a time, and keystrokes typed during one make one more.
     */
    set(text: string): void {
        this.latest = text;
        if (!this.file) {
            void this.memento.update(KEY, text);
            return;
        }
        this.pending = text;
        this.writing ??= this.writeAll(this.file);
    }

    /** Resolves when what was set is in the file (or the memento). */
    async written(): Promise<void> {
        while (this.writing) {
            await this.writing;
        }
    }

    /** Writes what is pending until nothing is (always awaits first: set() has assigned writing by then). */
    private async writeAll(file: string): Promise<void> {
        try {
            while (this.pending !== undefined) {
                const text = this.pending;
                this.pending = undefined;
                if (await this.writeFile(file, text)) {
                    if (this.memento.get<string>(KEY) !== undefined) {
                        // An older draft there would come back were the file lost.
                        void this.memento.update(KEY, undefined);
                    }
                } else {
                    void this.memento.update(KEY, text);
                }
            }
        } finally {
            // In the same step as the last check of pending: a set() after
            // it starts a new write.
            this.writing = undefined;
        }
    }

    private async writeFile(file: string, text: string): Promise<boolean> {
        try {
            // Whole or not at all: a reload in the middle of a write
            // leaves the previous draft, never half of one.
            if (!this.dirMade) {
                await fs.promises.mkdir(path.dirname(file), { recursive: true });
                this.dirMade = true;
            }
            const tmp = `${file}.${process.pid}.tmp`;
            await fs.promises.writeFile(tmp, text);
            await fs.promises.rename(tmp, file);
            return true;
        } catch (e) {
            this.dirMade = false;
            this.log(`[chat] keeping the draft in ${file}: ${e instanceof Error ? e.message : String(e)}`);
            return false;
        }
    }
}

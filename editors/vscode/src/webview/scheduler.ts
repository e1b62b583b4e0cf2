// Coalesces renders onto animation frames: any number of schedule() calls
// between two frames cause one flush. Thousands of deltas a second cost one
// render per frame. The frame function is injected (tests use a fake).

export type FrameFn = (cb: () => void) => unknown;

export class FrameScheduler {
    private pending = false;
    /** Bumped by flushNow: a frame requested before it has nothing left to flush. */
    private generation = 0;
    /** Frames flushed so far. */
    frames = 0;

    constructor(
        private readonly requestFrame: FrameFn,
        private readonly flush: () => void,
    ) {}

    schedule(): void {
        if (this.pending) {
            return;
        }
        this.pending = true;
        const gen = this.generation;
        this.requestFrame(() => {
            if (gen !== this.generation) {
                return; // flushNow did it
            }
            this.pending = false;
            this.frames++;
            this.flush();
        });
    }

    /**
     * Flushes now, not on the next frame (an answer's first delta: the DOM
     * has it at once and the next paint shows it, whenever frame callbacks
     * run). A frame already requested then does nothing; the next
     * schedule() requests one again.
     */
    flushNow(): void {
        this.generation++;
        this.pending = false;
        this.flush();
    }

    get isPending(): boolean {
        return this.pending;
    }
}

/**
 * requestAnimationFrame, with a timer fallback: a hidden webview gets no
 * frames, and its state would otherwise wait for them forever.
 */
export function browserFrame(win: { requestAnimationFrame(cb: () => void): number; setTimeout(cb: () => void, ms: number): unknown }): FrameFn {
    return (cb) => {
        let done = false;
        const run = () => {
            if (!done) {
                done = true;
                cb();
            }
        };
        win.requestAnimationFrame(run);
        win.setTimeout(run, 250);
    };
}

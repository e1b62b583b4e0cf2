// Which way the chat's messages go: the chat channel (a WebSocket to zot,
// channel.ts) or the extension host (postMessage). The way is decided
// once, when the page loads: until the socket has opened or failed, what
// the user does waits here, in order, and goes once the way is known
// (docs/decisions.md "The chat's own channel: nothing lost while it
// connects"). Before, a message sent in that window went to the host
// while the host still believed an earlier page read the channel, and its
// answer could be drawn before the snapshot that then wiped it.

import type { ChatToHost } from "../protocol";
import type { RunStarted, ZotEvent } from "../../lsp_ext";
import { ChatChannel, type ChannelMethods, type ChannelSocket } from "./channel";
import { parseSlash, promptText } from "./slash";

/** Where the chat's events come from, shown on the page (data-channel-state) for a look and the end-to-end tests. */
export type ChannelState = "connecting" | "open" | "failed" | "closed" | "none";

/** What the transport needs of the page. */
export interface TransportPage {
    /** A message to the extension host (vscode.postMessage). */
    post(m: ChatToHost): void;
    /** zot/event that came on the channel. */
    events(evs: ZotEvent[]): void;
    /** zot accepted a prompt sent on the channel. */
    runStarted(r: RunStarted): void;
    /** A prompt sent on the channel was refused, or lost with the socket: its text goes back to the input with the error. */
    sendFailed(text: string, error: string): void;
    /** The channel's state changed. */
    state(s: ChannelState): void;
}

/** The chat channel the page names: its URL and the methods (the page cannot load lsp_ext.ts). */
export interface ChannelConfig {
    url: string;
    methods: ChannelMethods;
    /** How long to wait for the socket to open before going on without it. */
    waitMs: number;
    /** Makes the socket (the browser's WebSocket; a fake in tests). */
    socket(url: string): ChannelSocket;
}

export class ChatTransport {
    /** deciding: the socket is connecting, messages wait; then channel or host. */
    private phase: "deciding" | "channel" | "host";
    private waiting: ChatToHost[] = [];
    private channel?: ChatChannel;

    constructor(
        private readonly page: TransportPage,
        private readonly config?: ChannelConfig,
    ) {
        this.phase = config ? "deciding" : "host";
    }

    /** Opens the channel (when the page names one), then tells the host the page is ready; resolves once the way is decided. */
    async start(): Promise<void> {
        if (!this.config) {
            this.page.state("none");
            this.page.post({ type: "ready" });
            return;
        }
        this.page.state("connecting");
        const c = this.config;
        this.channel = await ChatChannel.open(() => c.socket(c.url), c.methods, (evs) => this.page.events(evs), () => this.lost(), c.waitMs);
        this.phase = this.channel ? "channel" : "host";
        this.page.state(this.channel ? "open" : "failed");
        // ready first: the host answers it with the snapshot, and anything
        // it answers to what waited comes after that snapshot.
        this.page.post(this.channel ? { type: "ready", channel: true } : { type: "ready" });
        const waiting = this.waiting;
        this.waiting = [];
        for (const m of waiting) {
            this.send(m);
        }
    }

    /** The chat reads its events on the channel (a retry or a resend cuts the transcript itself then: its events may come first). */
    get onChannel(): boolean {
        return this.phase === "channel";
    }

    /**
     * Sends a message the way decided: a prompt on the channel when it is
     * open, anything else (and a prompt it cannot take) to the host; while
     * deciding, it waits, in order with the rest.
     */
    send(m: ChatToHost): void {
        if (this.phase === "deciding") {
            this.waiting.push(m);
            return;
        }
        if (m.type === "send" && this.sendOnChannel(m)) {
            return;
        }
        this.page.post(m);
    }

    /**
     * A prompt on the channel: true when the socket took it (zot's answer
     * or error comes back through the page's runStarted / sendFailed;
     * lost with the socket, it is reported there, never sent again);
     * false when not sent (a command, a shell command or an edit, which
     * the host runs; or no open socket): send it the other way.
     */
    private sendOnChannel(m: Extract<ChatToHost, { type: "send" }>): boolean {
        if (this.phase !== "channel" || !this.channel || m.resendIndex !== undefined || parseSlash(m.text) || /^\s*!/.test(m.text)) {
            return false;
        }
        const answer = this.channel.prompt({ text: promptText(m.text), attachments: m.attachments });
        if (!answer) {
            return false;
        }
        answer.then(
            (r) => this.page.runStarted(r),
            (e: unknown) => this.page.sendFailed(m.text, e instanceof Error ? e.message : String(e)),
        );
        // The host keeps the draft: the input is empty now.
        this.page.post({ type: "draft", text: "" });
        return true;
    }

    /** The socket closed (zot restarted, or dropped a chat that fell behind): back to the host, with a fresh snapshot (events may have been lost with it). */
    private lost(): void {
        this.channel = undefined;
        this.phase = "host";
        this.page.state("closed");
        this.page.post({ type: "ready" });
    }
}

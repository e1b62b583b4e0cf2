// The chat's own line to zot (zot/chat/channel, docs/protocol.md "The chat
// channel"): a WebSocket the extension host opened for this webview
// (vscode.env.asExternalUri: code-server's proxy, or localhost). Prompts go
// out and the runs' events come in on it, skipping the workbench and the
// extension host, which cost ~10 ms each way in code-server
// (docs/decisions.md "The chat's own channel"). Everything else stays on
// postMessage.

import type { Attachment, RunStarted, ZotEvent } from "../../lsp_ext";

/** What the channel needs of a WebSocket (the browser's; a fake in tests). */
export interface ChannelSocket {
    readonly readyState: number;
    send(data: string): void;
    close(): void;
    onopen: ((ev: Event) => unknown) | null;
    onclose: ((ev: CloseEvent) => unknown) | null;
    onerror: ((ev: Event) => unknown) | null;
    onmessage: ((ev: MessageEvent) => unknown) | null;
}

const OPEN = 1;

/** A prompt that went out on the socket and may have reached zot: it must not be sent again. */
export class ChannelLost extends Error {
    constructor() {
        super("the connection to zot closed before it answered: the message may have been sent (see the transcript)");
    }
}

/** The channel carries no JSON-RPC error as an exception: zot's answer. */
export class ZotError extends Error {}

/** The methods the channel speaks, as lsp_ext.ts declares them (the host puts them in the page: the webview cannot load lsp_ext.ts). */
export interface ChannelMethods {
    prompt: string;
    event: string;
}

interface RpcMessage {
    id?: number;
    method?: string;
    params?: ZotEvent;
    result?: RunStarted;
    error?: { message?: string };
}

export interface PromptParams {
    text: string;
    attachments?: Attachment[];
}

export class ChatChannel {
    private nextId = 1;
    private readonly pending = new Map<number, { resolve(r: RunStarted): void; reject(e: Error): void }>();
    private closed = false;

    /**
     * Opens one: resolves once the socket is open, undefined when it
     * cannot be (refused, closed) or is not open after waitMs (the chat
     * then uses postMessage and does not wait for it any longer).
     */
    static open(socket: () => ChannelSocket, methods: ChannelMethods, onEvents: (evs: ZotEvent[]) => void, onClose: () => void, waitMs: number): Promise<ChatChannel | undefined> {
        return new Promise((resolve) => {
            let ws: ChannelSocket;
            try {
                ws = socket();
            } catch {
                resolve(undefined); // a CSP refusal or a bad URL throws here
                return;
            }
            const timer = setTimeout(() => {
                ws.onopen = ws.onclose = ws.onerror = ws.onmessage = null;
                ws.close();
                resolve(undefined);
            }, waitMs);
            ws.onopen = () => {
                clearTimeout(timer);
                resolve(new ChatChannel(ws, methods, onEvents, onClose));
            };
            ws.onclose = ws.onerror = () => {
                clearTimeout(timer);
                ws.onopen = ws.onclose = ws.onerror = null;
                resolve(undefined);
            };
        });
    }

    private constructor(
        private readonly ws: ChannelSocket,
        private readonly methods: ChannelMethods,
        private readonly onEvents: (evs: ZotEvent[]) => void,
        private readonly onClose: () => void,
    ) {
        ws.onmessage = (e) => this.receive(e.data);
        ws.onclose = ws.onerror = () => this.lost();
    }

    /** The socket is open: a prompt sent now goes on it. */
    get open(): boolean {
        return !this.closed && this.ws.readyState === OPEN;
    }

    /**
     * Sends zot/prompt. undefined: not sent (the socket is not open; send
     * it the other way). Else zot's answer; ZotError when zot refused it,
     * ChannelLost when the socket closed before the answer came.
     */
    prompt(p: PromptParams): Promise<RunStarted> | undefined {
        if (!this.open) {
            return undefined;
        }
        const id = this.nextId++;
        const params: PromptParams = { text: p.text };
        if (p.attachments?.length) {
            params.attachments = p.attachments;
        }
        try {
            this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method: this.methods.prompt, params }));
        } catch {
            return undefined; // the browser did not take it
        }
        return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    }

    close(): void {
        this.ws.close();
        this.lost();
    }

    /** One frame: a message, or a batch of them (zot sends what waits together). */
    private receive(data: unknown): void {
        let frame: RpcMessage | RpcMessage[];
        try {
            frame = JSON.parse(String(data)) as typeof frame;
        } catch {
            return;
        }
        const events: ZotEvent[] = [];
        for (const m of Array.isArray(frame) ? frame : [frame]) {
            if (m.method === this.methods.event && m.params) {
                events.push(m.params);
                continue;
            }
            if (events.length) {
                this.onEvents(events.splice(0)); // in order with the answer
            }
            this.answer(m);
        }
        if (events.length) {
            this.onEvents(events);
        }
    }

    private answer(m: RpcMessage): void {
        const p = m.id !== undefined ? this.pending.get(m.id) : undefined;
        if (!p) {
            return;
        }
        this.pending.delete(m.id!);
        if (m.error) {
            p.reject(new ZotError(m.error.message ?? "zot refused the message"));
        } else {
            p.resolve(m.result!);
        }
    }

    private lost(): void {
        if (this.closed) {
            return;
        }
        this.closed = true;
        for (const p of this.pending.values()) {
            p.reject(new ChannelLost());
        }
        this.pending.clear();
        this.onClose();
    }
}

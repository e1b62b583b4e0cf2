import type { ChannelSocket } from "../../../src/webview/chat/channel";

/** A WebSocket the test plays zot's side of. */
export class FakeSocket implements ChannelSocket {
    readyState = 0;
    sent: { id: number; method: string; params: unknown }[] = [];
    closed = 0;
    onopen: ChannelSocket["onopen"] = null;
    onclose: ChannelSocket["onclose"] = null;
    onerror: ChannelSocket["onerror"] = null;
    onmessage: ChannelSocket["onmessage"] = null;
    /** As a browser's: throws while connecting, drops what is sent once closed. */
    send(data: string): void {
        if (this.readyState === 0) {
            throw new Error("InvalidStateError: still in CONNECTING state");
        }
        if (this.readyState !== 1) {
            return;
        }
        this.sent.push(JSON.parse(data) as FakeSocket["sent"][number]);
    }
    close(): void {
        this.closed++;
        this.readyState = 3;
    }
    open(): void {
        this.readyState = 1;
        this.onopen?.({} as Event);
    }
    drop(): void {
        this.readyState = 3;
        this.onclose?.({} as CloseEvent);
    }
    message(m: unknown): void {
        this.onmessage?.({ data: JSON.stringify(m) } as MessageEvent);
    }
}

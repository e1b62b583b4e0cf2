"use strict";
// zot's extension protocol v1: one JSON object per line, "type" as the
// discriminator. Replies the runtime waits for (ui_response, action_result)
// are matched by id; everything else goes to the handler set with onFrame.

// $ZOT_PI_DEBUG=1 logs every frame (the extension's log: zot ext logs NAME).
const DEBUG = !!process.env.ZOT_PI_DEBUG;

class Wire {
	// input: a readable stream of lines, or null when lines are handed to
	// line() (a member of the shared process); onExit: what exit(code)
	// does (default: end the process).
	constructor(input, output, onExit) {
		this.out = output;
		this.onExit = onExit || ((code) => process.exit(code));
		this.pending = new Map(); // id → {resolve, reject}
		this.nextID = 1;
		this.handler = null;
		this.early = []; // frames that came before onFrame (held, in order)
		this.ack = null;
		this.ackWaiters = [];
		this.closed = false;
		if (!input) return;
		let buf = "";
		input.setEncoding("utf8");
		input.on("data", (chunk) => {
			buf += chunk;
			let nl;
			while ((nl = buf.indexOf("\n")) >= 0) {
				const line = buf.slice(0, nl);
				buf = buf.slice(nl + 1);
				if (line.trim()) this.line(line);
			}
		});
		input.on("end", () => {
			this.closed = true;
			// The host closed our stdin: zot is gone or stopped us.
			this.exit(0);
		});
	}

	// exit ends this extension: the process, or the member.
	exit(code) {
		this.closed = true;
		this.onExit(code);
	}

	line(line) {
		if (DEBUG) process.stderr.write(`[pi] <- ${line.slice(0, 400)}\n`);
		let f;
		try {
			f = JSON.parse(line);
		} catch {
			process.stderr.write(`[pi] a line that is not JSON: ${line.slice(0, 200)}\n`);
			return;
		}
		if (f.type === "hello_ack") {
			this.ack = f;
			for (const w of this.ackWaiters.splice(0)) w(f);
			return;
		}
		if ((f.type === "ui_response" || f.type === "action_result") && this.pending.has(f.id)) {
			const p = this.pending.get(f.id);
			this.pending.delete(f.id);
			p.resolve(f);
			return;
		}
		if (f.type === "error" && f.ref && this.pending.has(f.ref)) {
			const p = this.pending.get(f.ref);
			this.pending.delete(f.ref);
			p.resolve(f);
			return;
		}
		if (this.handler) this.handler(f);
		else this.early.push(f);
	}

	onFrame(fn) {
		this.handler = fn;
		for (const f of this.early.splice(0)) fn(f);
	}

	waitHello() {
		if (this.ack) return Promise.resolve(this.ack);
		return new Promise((resolve) => this.ackWaiters.push(resolve));
	}

	send(f) {
		if (this.closed) return;
		const line = JSON.stringify(f);
		if (DEBUG) process.stderr.write(`[pi] -> ${line.slice(0, 400)}\n`);
		this.out.write(line + "\n");
	}

	// request sends f with a fresh id and resolves with the host's reply
	// (ui_response, action_result, or an error frame naming it).
	request(f, signal) {
		const id = `pi-${this.nextID++}`;
		return new Promise((resolve) => {
			this.pending.set(id, { resolve });
			this.send({ ...f, id });
			if (signal) {
				const onAbort = () => {
					if (!this.pending.has(id)) return;
					this.pending.delete(id);
					// Tell the host it is over (a dialog closes in the front,
					// an exec's processes are stopped).
					this.send({ type: "cancel", id });
					resolve({ type: "ui_response", id, cancelled: true, aborted: true });
				};
				if (signal.aborted) onAbort();
				else signal.addEventListener("abort", onAbort, { once: true });
			}
		});
	}
}

module.exports = { Wire };

"use strict";
// pi-ai's AssistantMessageEventStream: what a provider's streamSimple
// returns. The provider pushes events ({type: "start" | "text_delta" | …
// | "done" | "error"}); the reader iterates them (for await) and
// result() resolves with the final AssistantMessage.

class AssistantMessageEventStream {
	constructor() {
		this.queue = [];
		this.waiters = [];
		this.ended = false;
		this.final = null;
		this.resultWaiters = [];
	}

	push(event) {
		if (this.ended) return;
		if (event && (event.type === "done" || event.type === "error")) {
			this.final = event.type === "done" ? event.message : event.error;
			for (const r of this.resultWaiters.splice(0)) r(this.final);
		}
		const w = this.waiters.shift();
		if (w) w({ value: event, done: false });
		else this.queue.push(event);
	}

	end(result) {
		if (this.ended) return;
		this.ended = true;
		if (result !== undefined && this.final === null) {
			this.final = result;
			for (const r of this.resultWaiters.splice(0)) r(result);
		}
		for (const w of this.waiters.splice(0)) w({ value: undefined, done: true });
	}

	result() {
		if (this.final !== null) return Promise.resolve(this.final);
		return new Promise((r) => this.resultWaiters.push(r));
	}

	[Symbol.asyncIterator]() {
		return {
			next: () => {
				if (this.queue.length) return Promise.resolve({ value: this.queue.shift(), done: false });
				if (this.ended) return Promise.resolve({ value: undefined, done: true });
				return new Promise((r) => this.waiters.push(r));
			},
			return: () => Promise.resolve({ value: undefined, done: true }),
		};
	}
}

function createAssistantMessageEventStream() {
	return new AssistantMessageEventStream();
}

// calculateCost fills usage.cost from the model's prices (per million
// tokens), as pi-ai does.
function calculateCost(model, usage) {
	const c = (model && model.cost) || {};
	const cost = {
		input: ((c.input || 0) / 1e6) * (usage.input || 0),
		output: ((c.output || 0) / 1e6) * (usage.output || 0),
		cacheRead: ((c.cacheRead || 0) / 1e6) * (usage.cacheRead || 0),
		cacheWrite: ((c.cacheWrite || 0) / 1e6) * (usage.cacheWrite || 0),
	};
	cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	usage.cost = cost;
	return cost;
}

module.exports = { AssistantMessageEventStream, createAssistantMessageEventStream, calculateCost };

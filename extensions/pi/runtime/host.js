#!/usr/bin/env node
// zot's host for pi extensions: it loads pi modules (TypeScript through
// lib/loader.js, no build step) and speaks zot's extension protocol v1,
// with the additions of issue 12 (ui, hooks, actions, bus). Two modes:
//
//   node host.js --shared               every pi extension of a session
//   node host.js NAME MODULE [MODULE…]  one extension, the process its own
//
// --shared is zot's default (extensions/pihost.go): stdin and stdout carry
// each extension's v1 frames tagged with its member id ("ID\tFRAME"), and
// the runtime's own messages with an empty id ("\t{op…}"): load and close
// from zot; exit and log to zot. Each member is its own extension to zot.
//
// Nothing here is fetched at run time: sucrase, typebox and zod are this
// directory's pinned node_modules (npm ci), and the @mariozechner/* imports
// resolve to our own modules in lib/ (docs/decisions.md, "pi extensions").
"use strict";

const { AsyncLocalStorage } = require("node:async_hooks");
const loader = require("./lib/loader.js");
const { makeAPI } = require("./lib/api.js");
const { Wire } = require("./lib/wire.js");

const HELLO = { type: "hello", version: "pi", capabilities: ["tools", "ready", "ui", "hooks", "actions", "bus", "exec", "providers"] };

// loadExtension says hello, loads the modules, runs their factories and
// starts serving. fail(msg) ends the extension (and throws).
async function loadExtension(wire, name, modules, fail) {
	// hello first: the host's hello budget runs from spawn, and loading
	// (transpiling) the modules happens while it answers.
	wire.send({ ...HELLO, name });
	const acked = wire.waitHello();
	const rt = makeAPI(wire, name);
	for (const m of modules) {
		let factory;
		try {
			factory = loader.load(m);
		} catch (err) {
			fail(`cannot load ${m}: ${errText(err)}`);
		}
		if (typeof factory !== "function") {
			fail(`${m} has no default export function (pi extensions export \`default function (pi: ExtensionAPI)\`)`);
		}
		try {
			await factory(rt.pi);
		} catch (err) {
			fail(`${m}: the extension's factory threw: ${errText(err)}`);
		}
	}
	await acked;
	await rt.start();
}

function errText(err) {
	return err && err.stack ? String(err.stack) : String(err);
}

const failed = new Error("failed");

// ---- one extension per process ----

function single(name, modules) {
	const wire = new Wire(process.stdin, process.stdout);
	// fail ends the process: the host restarts it (1 s, 5 s, 25 s) and
	// then marks it failed. The reason goes to its log and, once hello is
	// out, to the user as an error notification (the first line: a stack
	// stays in the log).
	const fail = (msg) => {
		process.stderr.write(msg + "\n");
		wire.send({ type: "notify", level: "error", message: msg.split("\n")[0] });
		process.stdout.write("", () => process.exit(1));
		throw failed; // nothing after a failure runs
	};
	loadExtension(wire, name, modules, fail).catch((err) => {
		if (err !== failed) {
			try {
				fail(errText(err));
			} catch {}
		}
	});
}

// ---- every extension in one process ----

function shared() {
	const members = new Map(); // id → {id, name, wire}
	const writeOut = process.stdout.write.bind(process.stdout);
	const writeErr = process.stderr.write.bind(process.stderr);
	const send = (id, obj) => writeOut(id + "\t" + JSON.stringify(obj) + "\n");
	const control = (obj) => send("", obj);
	// Whose code runs: frames, factories and everything they start run in
	// their member's context, so what they print goes to that
	// extension's log (zot ext logs NAME), and never onto the wire.
	const current = new AsyncLocalStorage();
	const route = (fallback) =>
		function (chunk, encoding, cb) {
			const m = current.getStore();
			if (typeof encoding === "function") cb = encoding;
			if (!m || !members.has(m.id)) return fallback(chunk, encoding, cb);
			control({ op: "log", id: m.id, text: typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8") });
			if (typeof cb === "function") process.nextTick(cb);
			return true;
		};
	process.stderr.write = route(writeErr);
	process.stdout.write = route(writeErr); // console.log: a log line, not a frame

	function exitMember(m, code) {
		if (!members.has(m.id)) return;
		members.delete(m.id);
		m.wire.closed = true;
		control({ op: "exit", id: m.id, code });
	}

	function load(c) {
		const m = { id: c.id, name: c.name };
		m.wire = new Wire(null, { write: (line) => writeOut(m.id + "\t" + line) }, (code) => exitMember(m, code));
		members.set(m.id, m);
		const fail = (msg) => {
			process.stderr.write(msg + "\n");
			m.wire.send({ type: "notify", level: "error", message: msg.split("\n")[0] });
			exitMember(m, 1);
			throw failed;
		};
		current.run(m, () =>
			loadExtension(m.wire, c.name, c.modules || [], fail).catch((err) => {
				if (err !== failed) {
					try {
						fail(errText(err));
					} catch {}
				}
			}),
		);
	}

	function onLine(line) {
		const tab = line.indexOf("\t");
		if (tab < 0) return;
		const id = line.slice(0, tab);
		const rest = line.slice(tab + 1);
		if (id === "") {
			let c;
			try {
				c = JSON.parse(rest);
			} catch {
				writeErr(`[pi] a control line that is not JSON: ${rest.slice(0, 200)}\n`);
				return;
			}
			if (c.op === "load") load(c);
			else if (c.op === "close") {
				const m = members.get(c.id);
				if (m) current.run(m, () => m.wire.exit(0));
			}
			return;
		}
		const m = members.get(id);
		if (m) current.run(m, () => m.wire.line(rest));
	}

	// An error no handler caught, in an extension's context, fails that
	// extension alone (zot restarts it, as it would its own process); one
	// from an extension already unloaded (a timer it left) is logged; one
	// outside every extension ends the process (zot restarts them all).
	const fatal = (kind) => (err) => {
		const m = current.getStore();
		if (m) {
			process.stderr.write(`[pi] ${kind}: ${errText(err)}\n`);
			if (members.has(m.id)) {
				m.wire.send({ type: "notify", level: "error", message: `${kind}: ${err && err.message ? err.message : String(err)}` });
				exitMember(m, 1);
			}
			return;
		}
		writeErr(`[pi] ${kind} outside any extension: ${errText(err)}\n`);
		process.exit(1);
	};
	process.on("uncaughtException", fatal("uncaught exception"));
	process.on("unhandledRejection", fatal("unhandled rejection"));

	let buf = "";
	process.stdin.setEncoding("utf8");
	process.stdin.on("data", (chunk) => {
		buf += chunk;
		let nl;
		while ((nl = buf.indexOf("\n")) >= 0) {
			const line = buf.slice(0, nl);
			buf = buf.slice(nl + 1);
			if (line) onLine(line);
		}
	});
	// zot closed our stdin: it is gone or closing the session.
	process.stdin.on("end", () => process.exit(0));
}

const args = process.argv.slice(2);
if (args[0] === "--shared") {
	shared();
} else {
	const [name, ...modules] = args;
	if (!name || modules.length === 0) {
		process.stderr.write("usage: node host.js --shared | node host.js NAME MODULE [MODULE…]\n");
		process.exit(2);
	}
	single(name, modules);
}

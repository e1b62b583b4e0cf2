#!/usr/bin/env node
// zot's host for pi extensions: one Node process loads the pi modules named
// on its command line (jiti: TypeScript without a build step) and speaks
// zot's extension protocol v1, with the additions of issue 12 (ui, hooks,
// actions, bus), on stdin/stdout. The Go host treats it as any other
// extension: trust, reload, restarts, guards and the fronts are its own.
//
//   node host.js NAME MODULE [MODULE…]
//
// Nothing here is fetched at run time: jiti, typebox and zod are this
// directory's pinned node_modules (npm ci), and the @mariozechner/* imports
// resolve to our own modules in lib/ (docs/decisions.md, "pi extensions").
"use strict";

const path = require("node:path");
const { createJiti } = require("jiti");
const { makeAPI } = require("./lib/api.js");
const { Wire } = require("./lib/wire.js");

const LIB = path.join(__dirname, "lib");

// The imports pi extensions use, resolved to what this runtime ships.
const ALIASES = {
	"@mariozechner/pi-coding-agent": path.join(LIB, "pi-coding-agent.js"),
	"@mariozechner/pi-ai": path.join(LIB, "pi-ai.js"),
	"@mariozechner/pi-tui": path.join(LIB, "pi-tui.js"),
	"@mariozechner/pi-agent-core": path.join(LIB, "pi-agent-core.js"),
	"@sinclair/typebox": path.join(__dirname, "node_modules", "@sinclair", "typebox"),
	zod: path.join(__dirname, "node_modules", "zod"),
};

async function main() {
	const [name, ...modules] = process.argv.slice(2);
	if (!name || modules.length === 0) {
		process.stderr.write("usage: node host.js NAME MODULE [MODULE…]\n");
		process.exit(2);
	}
	const wire = new Wire(process.stdin, process.stdout);
	wireOut = wire;
	// hello first: the host's hello budget runs from spawn, and loading
	// (transpiling) the modules happens while it answers.
	wire.send({
		type: "hello",
		name,
		version: "pi",
		capabilities: ["tools", "ready", "ui", "hooks", "actions", "bus", "exec", "providers"],
	});
	const acked = wire.waitHello();
	const rt = makeAPI(wire, name);
	const jiti = createJiti(__filename, { alias: ALIASES, moduleCache: false, fsCache: cacheDir() });
	for (const m of modules) {
		let factory;
		try {
			const mod = await jiti.import(m);
			factory = typeof mod === "function" ? mod : mod && mod.default;
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

// jiti's transpile cache: in the user's cache, so a restart or a second
// session does not transpile again (false: none).
function cacheDir() {
	const base = process.env.XDG_CACHE_HOME || (process.env.HOME ? path.join(process.env.HOME, ".cache") : "");
	return base ? path.join(base, "zot", "pi-jiti") : false;
}

function errText(err) {
	return err && err.stack ? String(err.stack) : String(err);
}

// fail ends the process: the host restarts it (1 s, 5 s, 25 s) and then
// marks it failed. The reason goes to its log and, once hello is out, to
// the user as an error notification (the first line: a stack stays in
// the log).
let wireOut = null;
function fail(msg) {
	process.stderr.write(msg + "\n");
	if (wireOut) {
		wireOut.send({ type: "notify", level: "error", message: msg.split("\n")[0] });
	}
	process.stdout.write("", () => process.exit(1));
	throw failed; // nothing after a failure runs
}

const failed = new Error("failed");

main().catch((err) => {
	if (err !== failed) fail(errText(err));
});

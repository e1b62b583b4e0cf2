"use strict";
// The entry of the pi runtime's V8 startup snapshot. zot builds it once per
// Node binary and runtime (extensions/pisnapshot.go), in the background:
//
//   node FLAGS --snapshot-blob BLOB --build-snapshot lib/snapshot.js
//
// and starts later sessions' runtime from it:
//
//   node FLAGS --snapshot-blob BLOB -- --shared
//
// The snapshot holds TypeBox, loaded from its pack (lib/pack.js), which
// every pi extension imports: a snapshot start has it without reading,
// compiling or running ~200 files, and its heap costs less than the
// loaded package (docs/decisions.md, "pi extensions: a faster start").
// It holds nothing of a session: no environment, no extension, no
// stream; host.js runs after it, as `node host.js` would run it.
//
// While the snapshot is built, require loads Node's built-in modules
// only (and node:module may not be loaded at all): the runtime's own
// files are read and run here.

const fs = require("node:fs");
const path = require("node:path");
const v8 = require("node:v8");

const RUNTIME = path.join(__dirname, "..");
const HOST = path.join(RUNTIME, "host.js");
const TYPEBOX = path.join(RUNTIME, "node_modules", "@sinclair", "typebox");

// runFile runs one of the runtime's CommonJS files (no imports but
// Node's built-ins) and returns its exports.
function runFile(file) {
	const src = fs.readFileSync(file, "utf8");
	const fn = (0, eval)(`(function (exports, require, module, __filename, __dirname) {${src}\n})\n//# sourceURL=${file}`);
	const m = { exports: {} };
	fn.call(m.exports, m.exports, require, m, file, path.dirname(file));
	return m.exports;
}

const pack = runFile(path.join(__dirname, "pack.js"));
const defs = (0, eval)(`${pack.build(TYPEBOX)}\n//# sourceURL=${path.join(TYPEBOX, "zot-pi-pack.js")}`)();
const typebox = pack.loader(TYPEBOX, defs);
const main = JSON.parse(fs.readFileSync(path.join(TYPEBOX, "package.json"), "utf8")).main || "index.js";
typebox.load(path.join(TYPEBOX, main));

v8.startupSnapshot.setDeserializeMainFunction(() => {
	// lib/loader.js takes packed packages from here.
	globalThis[Symbol.for("zot.pi.packs")] = new Map([[TYPEBOX, typebox]]);
	const args = process.argv.slice(1);
	if (args[0] === "--probe") {
		// zot's check of a snapshot it just built, before it uses it.
		const { Type } = typebox.load(path.join(TYPEBOX, main));
		process.stdout.write(`zot-pi-snapshot ${JSON.stringify(Type.Object({ ok: Type.Boolean() }).properties.ok.type)}\n`);
		return;
	}
	// What `node host.js ARGS` would see.
	process.argv.splice(1, 0, HOST);
	require("node:module").createRequire(HOST)(HOST);
});

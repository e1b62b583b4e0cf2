"use strict";
// The TypeScript loader for pi extensions: Node's own require with a hook
// that strips types and turns ESM syntax into CommonJS with sucrase (pure
// JavaScript, a few ms per module; its output is cached, so a warm start
// does not even load it). It keeps the module
// semantics pi's jiti gives extensions: ESM and CJS mixed, `.js` imports
// that are really `.ts`, default-export interop, and the package names
// zot's runtime provides (docs/decisions.md, "a lighter loader").

const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const Module = require("node:module");

// sucrase is loaded on the first transform the cache does not hold: a
// start whose modules are all cached does not pay for it (~70 ms).
let sucrase = null;
const SUCRASE_VERSION = require("sucrase/package.json").version;

const RUNTIME = path.join(__dirname, "..");
const LIB = __dirname;

// The imports pi extensions use, resolved to what this runtime ships.
const ALIASES = {
	"@mariozechner/pi-coding-agent": path.join(LIB, "pi-coding-agent.js"),
	"@mariozechner/pi-ai": path.join(LIB, "pi-ai.js"),
	"@mariozechner/pi-tui": path.join(LIB, "pi-tui.js"),
	"@mariozechner/pi-agent-core": path.join(LIB, "pi-agent-core.js"),
	"@sinclair/typebox": path.join(RUNTIME, "node_modules", "@sinclair", "typebox"),
	zod: path.join(RUNTIME, "node_modules", "zod"),
};

const TS = [".ts", ".tsx", ".mts", ".cts"];

function aliasOf(request) {
	if (Object.prototype.hasOwnProperty.call(ALIASES, request)) return ALIASES[request];
	for (const name of Object.keys(ALIASES)) {
		// A subpath (zod/v4, @sinclair/typebox/compiler) of a provided package.
		if (request.startsWith(name + "/") && !ALIASES[name].endsWith(".js")) {
			return path.join(ALIASES[name], request.slice(name.length + 1));
		}
	}
	return null;
}

// ESM syntax at the start of a line: such a .js/.mjs file (an ESM
// package's, or an extension written as ESM) is transformed too; plain
// CommonJS is left to Node.
const ESM_SYNTAX = /^\s*(import\s*[\w{*"'$]|export\s)/m;

// The transform cache: ~/.cache/zot/pi-sucrase (or $XDG_CACHE_HOME's),
// one file per source text, transforms and sucrase version; none without
// a home. A cache that cannot be read or written is only slower.
const CACHE = (() => {
	const base = process.env.XDG_CACHE_HOME || (os.homedir() ? path.join(os.homedir(), ".cache") : "");
	return base ? path.join(base, "zot", "pi-sucrase") : "";
})();

function transformCached(src, transforms, filename) {
	let file = "";
	if (CACHE) {
		const key = crypto.createHash("sha256").update(`${SUCRASE_VERSION}\0${transforms.join(",")}\0${filename}\0`).update(src).digest("hex");
		file = path.join(CACHE, key.slice(0, 2), key + ".js");
		try {
			return fs.readFileSync(file, "utf8");
		} catch {}
	}
	if (!sucrase) sucrase = require("sucrase");
	const code = sucrase.transform(src, {
		transforms,
		filePath: filename,
		// import() becomes a require, as jiti does: the hooks above
		// (aliases, .ts) only see require.
		preserveDynamicImport: false,
		production: true,
	}).code;
	if (file) {
		try {
			fs.mkdirSync(path.dirname(file), { recursive: true });
			const tmp = `${file}.${process.pid}.tmp`;
			fs.writeFileSync(tmp, code);
			fs.renameSync(tmp, file);
		} catch {}
	}
	return code;
}

function compileWith(transforms) {
	return function (mod, filename) {
		const src = fs.readFileSync(filename, "utf8");
		let code;
		try {
			code = transformCached(src, transforms, filename);
		} catch (err) {
			err.message = `${filename}: ${err.message}`;
			throw err;
		}
		mod._compile(code, filename);
	};
}

// The runtime's packages Node would load file by file, loaded from a
// pack instead (lib/pack.js): TypeBox's ~200 files were most of a
// start's time in Node's loader. A start from zot's startup snapshot
// (lib/snapshot.js) has them in its heap already; any other opens the
// cached pack on the first import.
const PACKED = [path.join(RUNTIME, "node_modules", "@sinclair", "typebox")];
const SNAPSHOT_PACKS = Symbol.for("zot.pi.packs");
const packs = new Map(); // package dir → pack loader, or null (Node loads it)

function packFor(dir) {
	let pack = packs.get(dir);
	if (pack !== undefined) return pack;
	const fromSnapshot = globalThis[SNAPSHOT_PACKS];
	pack = (fromSnapshot && fromSnapshot.get(dir)) || null;
	if (!pack) {
		pack = require("./pack.js").open(dir, {
			lockfile: path.join(RUNTIME, "package-lock.json"),
			log: (msg) => process.stderr.write(`[pi] ${msg}\n`),
		});
	}
	packs.set(dir, pack);
	return pack;
}

// fromPack puts a packed package's file into Node's module cache (from its
// pack) before Node looks there, and returns the filename unchanged: to
// Node and to extensions it is the package's file, loaded once.
function fromPack(filename) {
	const dir = PACKED.find((d) => filename.startsWith(d + path.sep));
	if (!dir || Module._cache[filename]) return filename;
	const pack = packFor(dir);
	if (!pack || !pack.has(filename)) return filename;
	const m = new Module(filename, null);
	m.filename = filename;
	m.paths = Module._nodeModulePaths(path.dirname(filename));
	m.exports = pack.load(filename);
	m.loaded = true;
	Module._cache[filename] = m;
	return filename;
}

let installed = false;

// install hooks Node's require: the aliases, `.js` → `.ts`, and the
// transform of TypeScript and ESM files. Once per process.
function install() {
	if (installed) return;
	installed = true;
	const resolve = Module._resolveFilename;
	Module._resolveFilename = function (request, parent, isMain, options) {
		const alias = aliasOf(request);
		if (alias) return fromPack(resolve.call(this, alias, parent, isMain, options));
		try {
			return resolve.call(this, request, parent, isMain, options);
		} catch (err) {
			// `import "./util.js"` where the file is util.ts (TypeScript's
			// own convention for ESM output).
			if (err && err.code === "MODULE_NOT_FOUND" && /\.[cm]?js$/.test(request) && request.startsWith(".")) {
				const base = request.replace(/\.[cm]?js$/, "");
				for (const x of TS) {
					try {
						return resolve.call(this, base + x, parent, isMain, options);
					} catch {}
				}
			}
			throw err;
		}
	};
	const ts = compileWith(["typescript", "imports"]);
	const tsx = compileWith(["typescript", "jsx", "imports"]);
	const esm = compileWith(["imports"]);
	for (const x of [".ts", ".mts", ".cts"]) Module._extensions[x] = ts;
	Module._extensions[".tsx"] = tsx;
	Module._extensions[".mjs"] = esm;
	const js = Module._extensions[".js"];
	Module._extensions[".js"] = function (mod, filename) {
		if (filename.startsWith(RUNTIME + path.sep)) return js.call(this, mod, filename);
		const src = fs.readFileSync(filename, "utf8");
		if (ESM_SYNTAX.test(src)) return esm.call(this, mod, filename);
		// CommonJS: compile it as Node would (without its check of the
		// package's "type", which only ESM-as-CJS above would trip).
		mod._compile(src, filename);
	};
}

// load requires a pi module afresh (what it imports too, except the
// runtime's own modules): a reload runs the code on disk, and two
// extensions never share a module's state. It returns the module's
// factory, default-export interop included.
function load(file) {
	install();
	for (const key of Object.keys(require.cache)) {
		if (!key.startsWith(RUNTIME + path.sep)) delete require.cache[key];
	}
	const mod = require(file);
	if (typeof mod === "function") return mod;
	if (mod && typeof mod.default === "function") return mod.default;
	if (mod && mod.default && typeof mod.default.default === "function") return mod.default.default;
	return null;
}

module.exports = { load, install, ALIASES, PACKED };

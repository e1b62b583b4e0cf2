"use strict";
// Packs: a CommonJS package of the runtime's node_modules (TypeBox, which
// every pi extension imports: ~200 files) loaded from one script instead
// of one file at a time. Node's loader spent most of a start resolving,
// stat-ing, reading and wrapping those files one by one; the pack is every
// .js file of the package as a function in one script
// (docs/decisions.md, "pi extensions: a faster start"). Two users:
//
//   - lib/snapshot.js runs a pack while V8's startup snapshot is built:
//     the package is then in the heap a snapshot start begins with;
//   - a start without a snapshot (open, below) compiles the pack with
//     V8's code cache, both kept in ~/.cache/zot/pi-pack (or
//     $XDG_CACHE_HOME's):
//       NAME-KEY.js        the pack; KEY hashes the package's package.json,
//                          the runtime's package-lock.json and this format
//       NAME-KEY-NODE.v8   V8's code cache for it, for this Node (version,
//                          arch), after the sha256 of the pack it was made
//                          from (V8 itself only checks the source's length);
//                          V8 also refuses one from other flags
//     Each starts with the sha256 of the rest: a torn or corrupt file is
//     rebuilt, never run.
// Anything that fails here only makes the start slower: the package is
// then loaded by Node file by file, as before (logged once).
//
// Nothing here may need node:module at load time: a startup snapshot
// cannot hold Node's module loader.

const fs = require("node:fs");
const path = require("node:path");

const FORMAT = "zot-pi-pack 1";

function cacheDir() {
	const os = require("node:os");
	const base = process.env.XDG_CACHE_HOME || (os.homedir() ? path.join(os.homedir(), ".cache") : "");
	return base ? path.join(base, "zot", "pi-pack") : "";
}

const sha = (data) => require("node:crypto").createHash("sha256").update(data).digest("hex");

// readChecked returns a file's body when its first line is the sha256 of
// the rest, else null (missing, torn, corrupt).
function readChecked(file) {
	const r = readWithSum(file);
	return r && r.body;
}

function readWithSum(file) {
	let buf;
	try {
		buf = fs.readFileSync(file);
	} catch {
		return null;
	}
	const nl = buf.indexOf(10);
	if (nl !== 64) return null;
	const body = buf.subarray(nl + 1);
	const sum = buf.toString("latin1", 0, 64);
	return sum === sha(body) ? { body, sum } : null;
}

function writeChecked(file, body) {
	const tmp = `${file}.${process.pid}.tmp`;
	try {
		fs.mkdirSync(path.dirname(file), { recursive: true });
		fs.writeFileSync(tmp, Buffer.concat([Buffer.from(sha(body) + "\n"), body]));
		fs.renameSync(tmp, file);
	} catch {
		try {
			fs.unlinkSync(tmp);
		} catch {}
	}
}

// jsFiles lists the package's .js files (relative, "/"-separated),
// node_modules of its own excluded.
function jsFiles(dir, rel = "", out = []) {
	for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
		const r = rel ? `${rel}/${e.name}` : e.name;
		if (e.isDirectory()) {
			if (e.name !== "node_modules") jsFiles(dir, r, out);
		} else if (e.name.endsWith(".js")) out.push(r);
	}
	return out.sort();
}

// build returns the pack's text: an expression whose value is a function
// returning {path in the package: function with CommonJS's parameters}.
function build(pkgDir) {
	const parts = ["(function () { return {\n"];
	for (const rel of jsFiles(pkgDir)) {
		const src = fs.readFileSync(path.join(pkgDir, rel), "utf8").replace(/^#!.*/, "");
		parts.push(`${JSON.stringify(rel)}: function (exports, require, module, __filename, __dirname) {${src}\n},\n`);
	}
	parts.push("}; })");
	return parts.join("");
}

// loader runs a pack's files as CommonJS modules: load(rel) returns a
// file's exports, running it (and what it requires) the first time.
// Relative requires stay in the pack; any other goes to Node's require
// for that file, made when first needed (never inside a snapshot).
function loader(pkgDir, defs) {
	const mods = new Map(); // rel → module
	const has = (rel) => Object.prototype.hasOwnProperty.call(defs, rel);
	function resolveIn(fromRel, request) {
		if (!request.startsWith("./") && !request.startsWith("../")) return null;
		const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromRel), request));
		for (const r of [base, `${base}.js`, `${base}/index.js`]) if (has(r)) return r;
		return null;
	}
	function load(rel) {
		let m = mods.get(rel);
		if (m) return m.exports;
		const filename = path.join(pkgDir, rel);
		m = { id: filename, filename, exports: {}, loaded: false, children: [], paths: [] };
		mods.set(rel, m);
		let outer = null;
		const req = (request) => {
			const r = resolveIn(rel, request);
			if (r) return load(r);
			if (!outer) outer = require("node:module").createRequire(filename);
			return outer(request);
		};
		try {
			defs[rel].call(m.exports, m.exports, req, m, filename, path.dirname(filename));
		} catch (err) {
			mods.delete(rel);
			throw err;
		}
		m.loaded = true;
		return m.exports;
	}
	const relOf = (file) => path.relative(pkgDir, file).split(path.sep).join("/");
	return {
		dir: pkgDir,
		// has: whether the pack holds this file (an absolute path).
		has: (file) => file.startsWith(pkgDir + path.sep) && has(relOf(file)),
		load: (file) => load(relOf(file)),
	};
}

// open returns the loader of the package in pkgDir from its cached pack,
// or null (no cache directory, or the pack could not be built or run; log
// says why).
function open(pkgDir, { lockfile, log }) {
	const dir = cacheDir();
	if (!dir) return null;
	let pkgJSON, lock;
	try {
		pkgJSON = fs.readFileSync(path.join(pkgDir, "package.json"));
		lock = lockfile ? fs.readFileSync(lockfile) : "";
	} catch (err) {
		log(`no pack for ${pkgDir}: ${err.message}`);
		return null;
	}
	const name = (JSON.parse(pkgJSON).name || "pkg").replace(/[^\w.-]+/g, "_");
	const key = require("node:crypto").createHash("sha256").update(FORMAT).update("\0").update(pkgJSON).update("\0").update(lock).digest("hex").slice(0, 16);
	const packFile = path.join(dir, `${name}-${key}.js`);
	const codeFile = path.join(dir, `${name}-${key}-${process.version}-${process.arch}.v8`);

	const vm = require("node:vm");
	let src, packSum;
	const got = readWithSum(packFile);
	if (got) {
		src = got.body.toString("utf8");
		packSum = got.sum;
	} else {
		try {
			src = build(pkgDir);
		} catch (err) {
			log(`cannot pack ${pkgDir}: ${err.message}`);
			return null;
		}
		const body = Buffer.from(src);
		packSum = sha(body);
		writeChecked(packFile, body);
	}
	// The code cache, when it was made from this pack.
	let cached = readChecked(codeFile);
	if (cached && cached.toString("latin1", 0, 65) === packSum + "\n") cached = cached.subarray(65);
	else cached = null;
	let defs, script;
	try {
		script = new vm.Script(src, { filename: packFile, cachedData: cached || undefined });
		defs = script.runInThisContext()();
	} catch (err) {
		log(`the pack of ${pkgDir} does not run (${err.message}); loading it file by file`);
		return null;
	}
	const l = loader(pkgDir, defs);
	if (cached && !script.cachedDataRejected) return l;
	// The code cache is written once the package has loaded, so it holds
	// the functions that ran (V8 compiles lazily).
	let save = () => writeChecked(codeFile, Buffer.concat([Buffer.from(packSum + "\n"), script.createCachedData()]));
	return {
		...l,
		load(file) {
			const out = l.load(file);
			if (save) {
				save();
				save = null;
			}
			return out;
		},
	};
}

module.exports = { open, build, loader, cacheDir };

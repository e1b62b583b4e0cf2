"use strict";
// @mariozechner/pi-coding-agent's runtime helpers that extensions import,
// written for zot (pi's own package pulls in its terminal app and every
// provider SDK; docs/decisions.md). Type-only imports need nothing here.

const os = require("node:os");
const path = require("node:path");
const tui = require("./pi-tui.js");

const VERSION = "zot-pi";

function getAgentDir() {
	return process.env.PI_CODING_AGENT_DIR || path.join(os.homedir(), ".pi", "agent");
}

function isToolCallEventType(name, event) {
	return !!event && event.toolName === name;
}

function isToolResultEventType(name, event) {
	return !!event && event.toolName === name;
}

function formatSize(bytes) {
	if (bytes < 1024) return `${bytes}B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
	return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

const DEFAULT_MAX_LINES = 2000;
const DEFAULT_MAX_BYTES = 50 * 1024;

// truncateHead keeps the first lines/bytes (pi's read tool rule).
function truncateHead(content, options = {}) {
	const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
	const lines = String(content).split("\n");
	const out = [];
	let bytes = 0;
	let by = null;
	for (const l of lines) {
		const b = Buffer.byteLength(l, "utf8") + (out.length ? 1 : 0);
		if (out.length >= maxLines) {
			by = "lines";
			break;
		}
		if (bytes + b > maxBytes) {
			by = "bytes";
			break;
		}
		out.push(l);
		bytes += b;
	}
	const text = out.join("\n");
	return { content: text, truncated: by !== null, truncatedBy: by, totalLines: lines.length, totalBytes: Buffer.byteLength(String(content), "utf8"), outputLines: out.length, outputBytes: Buffer.byteLength(text, "utf8"), maxLines, maxBytes };
}

// truncateTail keeps the last lines/bytes (pi's bash tool rule).
function truncateTail(content, options = {}) {
	const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
	const lines = String(content).split("\n");
	const out = [];
	let bytes = 0;
	let by = null;
	for (let i = lines.length - 1; i >= 0; i--) {
		const b = Buffer.byteLength(lines[i], "utf8") + (out.length ? 1 : 0);
		if (out.length >= maxLines) {
			by = "lines";
			break;
		}
		if (bytes + b > maxBytes) {
			by = "bytes";
			break;
		}
		out.unshift(lines[i]);
		bytes += b;
	}
	const text = out.join("\n");
	return { content: text, truncated: by !== null, truncatedBy: by, totalLines: lines.length, totalBytes: Buffer.byteLength(String(content), "utf8"), outputLines: out.length, outputBytes: Buffer.byteLength(text, "utf8"), maxLines, maxBytes };
}

// parseFrontmatter splits "---\nkey: value\n---\nbody" (flat keys).
function parseFrontmatter(text) {
	const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(String(text));
	if (!m) return { frontmatter: {}, body: String(text) };
	const fm = {};
	for (const line of m[1].split(/\r?\n/)) {
		const i = line.indexOf(":");
		if (i > 0) fm[line.slice(0, i).trim()] = line.slice(i + 1).trim().replace(/^["']|["']$/g, "");
	}
	return { frontmatter: fm, body: m[2] };
}

// A divider line component (pi draws a border; we draw dashes).
class DynamicBorder {
	constructor(color) {
		this.color = color;
	}
	invalidate() {}
	render(width) {
		return ["─".repeat(Math.max(0, width))];
	}
}

class BorderedLoader extends tui.Text {
	constructor(_tui, _theme, message) {
		super(message || "");
		this.signal = new AbortController().signal;
		this.onAbort = undefined;
	}
}

const getMarkdownTheme = () => tui.plainTheme;
const getSettingsListTheme = () => tui.plainTheme;
const getSelectListTheme = () => tui.plainTheme;

// pi's built-in tool factories wrap pi's own tools; zot's built-in tools
// are zot's, and an extension reaches them through the model. A clear
// error, not a fake tool.
function unavailable(name) {
	return () => {
		throw new Error(`${name} is pi's own tool implementation, which zot does not ship; register your tool with execute() instead`);
	};
}

module.exports = {
	VERSION,
	getAgentDir,
	isToolCallEventType,
	isToolResultEventType,
	formatSize,
	truncateHead,
	truncateTail,
	DEFAULT_MAX_LINES,
	DEFAULT_MAX_BYTES,
	parseFrontmatter,
	DynamicBorder,
	BorderedLoader,
	getMarkdownTheme,
	getSettingsListTheme,
	getSelectListTheme,
	createBashTool: unavailable("createBashTool"),
	createReadTool: unavailable("createReadTool"),
	createWriteTool: unavailable("createWriteTool"),
	createEditTool: unavailable("createEditTool"),
	createGrepTool: unavailable("createGrepTool"),
	createFindTool: unavailable("createFindTool"),
	createLsTool: unavailable("createLsTool"),
	Type: require("@sinclair/typebox").Type,
};

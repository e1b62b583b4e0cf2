"use strict";
// @mariozechner/pi-tui as zot shows it: components render to plain text
// lines (an editor's chat, a widget, a tool card), so styling is dropped
// and widths are counted in code points without ANSI escapes.

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*(\x07|\x1b\\)/g;

function stripAnsi(s) {
	return String(s).replace(ANSI, "");
}

function visibleWidth(s) {
	return [...stripAnsi(s)].length;
}

function truncateToWidth(s, width, ellipsis = "…") {
	const plain = stripAnsi(s);
	const cps = [...plain];
	if (cps.length <= width) return plain;
	if (width <= 0) return "";
	const e = [...ellipsis];
	return cps.slice(0, Math.max(0, width - e.length)).join("") + (width > e.length ? ellipsis : "");
}

function wrapTextWithAnsi(text, width) {
	const out = [];
	for (const para of stripAnsi(text).split("\n")) {
		if (width <= 0 || [...para].length <= width) {
			out.push(para);
			continue;
		}
		let line = "";
		for (const word of para.split(/(\s+)/)) {
			if ([...(line + word)].length > width && line.trim()) {
				out.push(line.trimEnd());
				line = word.trimStart();
			} else line += word;
			while ([...line].length > width) {
				out.push([...line].slice(0, width).join(""));
				line = [...line].slice(width).join("");
			}
		}
		out.push(line);
	}
	return out;
}

// renderToLines turns what an extension hands back (a component, lines,
// a string) into text lines.
function renderToLines(c, width = 80) {
	if (c == null) return [];
	if (typeof c === "string") return stripAnsi(c).split("\n");
	if (Array.isArray(c)) return c.flatMap((x) => renderToLines(x, width));
	if (typeof c.render === "function") return (c.render(width) || []).map(stripAnsi);
	return [String(c)];
}

class Text {
	constructor(text = "", paddingX = 0, paddingY = 0) {
		this.text = String(text);
		this.paddingX = paddingX;
		this.paddingY = paddingY;
	}
	setText(t) {
		this.text = String(t);
	}
	invalidate() {}
	render(width) {
		const pad = " ".repeat(this.paddingX);
		const body = wrapTextWithAnsi(this.text, Math.max(1, width - 2 * this.paddingX)).map((l) => pad + l);
		const blank = Array(this.paddingY).fill("");
		return this.text ? [...blank, ...body, ...blank] : [];
	}
}

class TruncatedText extends Text {
	render(width) {
		return this.text ? [truncateToWidth(this.text.split("\n")[0], width)] : [];
	}
}

class Spacer {
	constructor(lines = 1) {
		this.lines = lines;
	}
	invalidate() {}
	render() {
		return Array(this.lines).fill("");
	}
}

class Container {
	constructor() {
		this.children = [];
	}
	addChild(c) {
		this.children.push(c);
	}
	removeChild(c) {
		const i = this.children.indexOf(c);
		if (i >= 0) this.children.splice(i, 1);
	}
	clear() {
		this.children = [];
	}
	invalidate() {}
	render(width) {
		return this.children.flatMap((c) => renderToLines(c, width));
	}
}

class Box extends Container {
	constructor(paddingX = 0, paddingY = 0) {
		super();
		this.paddingX = paddingX;
		this.paddingY = paddingY;
	}
	render(width) {
		const pad = " ".repeat(this.paddingX);
		const blank = Array(this.paddingY).fill("");
		return [...blank, ...super.render(width - 2 * this.paddingX).map((l) => pad + l), ...blank];
	}
}

// Markdown is shown as its source: the editors render markdown themselves.
class Markdown extends Text {}

class SelectList {
	constructor(items = []) {
		this.items = items;
		this.selected = 0;
	}
	setSelectedIndex(i) {
		this.selected = i;
	}
	getSelectedItem() {
		return this.items[this.selected];
	}
	handleInput() {}
	invalidate() {}
	render(width) {
		return this.items.map((it, i) => truncateToWidth(`${i === this.selected ? "> " : "  "}${it.label || it.value}${it.description ? "  " + it.description : ""}`, width));
	}
}

// Key.escape is "escape"; Key.ctrlAlt("p") is "ctrl+alt+p": each member
// is a function (a combination) that reads as its own name (a key).
const Key = new Proxy(
	{},
	{
		get: (_t, k) => {
			if (typeof k !== "string") return undefined;
			const mods = k.replace(/([A-Z])/g, " $1").toLowerCase().split(" ").join("+");
			const f = (key) => `${mods}+${key}`;
			f.toString = f.valueOf = () => k;
			f[Symbol.toPrimitive] = () => k;
			return f;
		},
	},
);

function parseKey(data) {
	return String(data);
}

function matchesKey(data, key) {
	return String(data) === String(key);
}

function isKeyRelease() {
	return false;
}

const CURSOR_MARKER = "";

module.exports = {
	Text,
	TruncatedText,
	Spacer,
	Container,
	Box,
	Markdown,
	SelectList,
	Key,
	parseKey,
	matchesKey,
	isKeyRelease,
	visibleWidth,
	truncateToWidth,
	wrapTextWithAnsi,
	stripAnsi,
	renderToLines,
	CURSOR_MARKER,
	plainTheme: makePlainTheme(),
};

// A theme whose colours are no-ops: text is shown without styling.
function makePlainTheme() {
	const id = (...a) => String(a[a.length - 1] ?? "");
	return new Proxy(
		{ fg: (_c, t) => String(t ?? ""), bg: (_c, t) => String(t ?? ""), bold: id, italic: id, underline: id, inverse: id, strikethrough: id, dim: id, name: "zot-plain" },
		{ get: (t, k) => (k in t ? t[k] : typeof k === "string" ? id : undefined) },
	);
}

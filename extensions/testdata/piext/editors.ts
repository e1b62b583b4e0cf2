// A pi extension for the editors' tests (servertest, VS Code and Neovim
// end-to-end), written against pi's ExtensionAPI as pi's users write them:
// a permission-gate style dialog (ctx.ui.select before a dangerous bash
// command; anything but "Yes" blocks it), a status and a widget
// (/pistatus), a shortcut (registerShortcut), a flag (registerFlag,
// shown by /piflag), the chat input (/pidraft: getEditorText,
// setEditorText, pasteToEditor) and a multi-line editor (/pieditor).
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerFlag("greeting", { description: "What /piflag shows", type: "string", default: "none" });

	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "bash") return undefined;
		const command = String((event.input as { command?: string }).command ?? "");
		if (!/\brm\s+(-[a-z]*r[a-z]*f|-[a-z]*f[a-z]*r)\b/.test(command)) return undefined;
		if (!ctx.hasUI) return { block: true, reason: "Dangerous command blocked (no UI to confirm)" };
		const choice = await ctx.ui.select(`Dangerous command:\n\n  ${command}\n\nAllow?`, ["Yes", "No"]);
		if (choice !== "Yes") return { block: true, reason: "Blocked by user" };
		return undefined;
	});

	pi.registerCommand("pistatus", {
		description: "Shows a pi status and a pi widget",
		handler: async (_args, ctx) => {
			ctx.ui.setStatus("pi-mode", "pi: on");
			ctx.ui.setWidget("pi-list", ["pi line 1", "pi line 2"]);
		},
	});

	pi.registerCommand("piflag", {
		description: "Shows the greeting flag in the status",
		handler: async (_args, ctx) => {
			ctx.ui.setStatus("pi-flag", `flag: ${pi.getFlag("greeting")}`);
		},
	});

	let runs = 0;
	pi.registerShortcut("ctrl+shift+y", {
		description: "Marks the status from a shortcut",
		handler: async (ctx) => {
			runs++;
			ctx.ui.setStatus("pi-shortcut", `shortcut ran ${runs}`);
		},
	});

	pi.registerCommand("pidraft", {
		description: "Reads the chat input into the status, then sets and pastes into it",
		handler: async (_args, ctx) => {
			const before = ctx.ui.getEditorText();
			ctx.ui.setEditorText("pi draft");
			ctx.ui.pasteToEditor(" + pasted");
			ctx.ui.setStatus("pi-input", `input was: ${before}`);
		},
	});

	pi.registerCommand("pieditor", {
		description: "Asks for notes in a multi-line editor",
		handler: async (_args, ctx) => {
			const text = await ctx.ui.editor("Pi notes", "line 1\nline 2");
			ctx.ui.setStatus("pi-editor", text === undefined ? "editor: cancelled" : `editor: ${text.split("\n").join(" | ")}`);
		},
	});
}

// The chat input and the multi-line editor (pi's ctx.ui.setEditorText,
// pasteToEditor, getEditorText, editor), for zot rpc and zot -p: a tool
// sets and pastes into the input and answers what getEditorText says;
// /input-read tells what the input holds; /input-edit asks for text.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "@sinclair/typebox";

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "input_probe",
		label: "Input probe",
		description: "Sets the chat input and reads it back",
		parameters: Type.Object({}),
		async execute(_id, _params, _signal, _onUpdate, ctx) {
			ctx.ui.setEditorText("from the tool");
			ctx.ui.pasteToEditor("!");
			return { content: [{ type: "text", text: `input=${ctx.ui.getEditorText()}` }], details: undefined };
		},
	});

	pi.registerCommand("input-read", {
		description: "Tells what the chat input holds",
		handler: async (_args, ctx) => {
			ctx.ui.notify(`read: ${ctx.ui.getEditorText()}`, "info");
		},
	});

	pi.registerCommand("input-edit", {
		description: "Asks for text in a multi-line editor",
		handler: async (_args, ctx) => {
			const text = await ctx.ui.editor("Notes", "a\nb");
			ctx.ui.notify(`edited: ${JSON.stringify(text)}`, "info");
		},
	});
}

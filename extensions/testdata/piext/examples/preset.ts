// Named presets (model, thinking level, tools, instructions) from
// presets.json (~/.pi/agent and the project's .pi, the project's winning),
// chosen with --flag preset=NAME or /preset [NAME].
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { getAgentDir } from "@mariozechner/pi-coding-agent";

type Preset = { provider?: string; model?: string; thinkingLevel?: "off" | "minimal" | "low" | "medium" | "high" | "xhigh"; tools?: string[]; instructions?: string };

function load(cwd: string): Record<string, Preset> {
	const read = (p: string) => (existsSync(p) ? (JSON.parse(readFileSync(p, "utf8")) as Record<string, Preset>) : {});
	return { ...read(join(getAgentDir(), "presets.json")), ...read(join(cwd, ".pi", "presets.json")) };
}

export default function preset(pi: ExtensionAPI) {
	let presets: Record<string, Preset> = {};
	let active: string | undefined;

	pi.registerFlag("preset", { description: "Preset to start with", type: "string" });

	const apply = async (name: string, ctx: ExtensionContext) => {
		const p = presets[name];
		if (!p) {
			ctx.ui.notify(`Unknown preset "${name}". Available: ${Object.keys(presets).join(", ") || "(none)"}`, "error");
			return;
		}
		if (p.model) {
			const ok = await pi.setModel(ctx.modelRegistry.find(p.provider ?? ctx.model?.provider ?? "", p.model)!);
			if (!ok) ctx.ui.notify(`Preset "${name}": model ${p.model} is not available`, "warning");
		}
		if (p.thinkingLevel) pi.setThinkingLevel(p.thinkingLevel);
		if (p.tools) pi.setActiveTools(p.tools);
		active = name;
		ctx.ui.setStatus("preset", `preset:${name}`);
		pi.appendEntry("preset-state", { name });
		ctx.ui.notify(`Preset "${name}" activated`, "info");
	};

	pi.registerCommand("preset", {
		description: "Switch preset",
		handler: async (args, ctx) => {
			let name = args.trim();
			if (!name) {
				const picked = await ctx.ui.select("Select preset", Object.keys(presets));
				if (!picked) return;
				name = picked;
			}
			await apply(name, ctx);
		},
	});

	pi.on("before_agent_start", async (event) => {
		const text = active ? presets[active]?.instructions : undefined;
		if (text) return { systemPrompt: `${event.systemPrompt}\n\n${text}` };
	});

	pi.on("session_start", async (_e, ctx) => {
		presets = load(ctx.cwd);
		const flag = pi.getFlag("preset");
		if (typeof flag === "string" && flag) {
			await apply(flag, ctx);
			return;
		}
		for (const e of ctx.sessionManager.getEntries()) {
			if (e.type === "custom" && e.customType === "preset-state") active = (e.data as { name: string }).name;
		}
		if (active) ctx.ui.setStatus("preset", `preset:${active}`);
	});
}

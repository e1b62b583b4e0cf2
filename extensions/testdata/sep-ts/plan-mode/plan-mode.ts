// plan-mode — /plan [on|off] (with argument completion) narrows the tools
// to the read-only ones and vetoes mutating tool calls while on; each
// toggle is kept as a session entry and shown in a widget (SEP's
// plan-mode example; zot has no extension flags, so no --plan).
import { defineExtension } from '../sdk.ts';

/** What plan mode blocks: anything that changes the workspace. */
const WRITE_TOOLS = new Set(['write', 'edit', 'apply_patch', 'bash']);
/** What plan mode leaves the model. */
const READ_TOOLS = ['read', 'ls', 'grep', 'find'];
/** Every tool zot may offer, to widen back to (the host clamps to what the user enabled). */
const ALL_TOOLS = ['read', 'write', 'edit', 'bash', 'skill', 'ls', 'grep', 'find'];

const planMode = defineExtension((smooth) => {
    smooth.name = 'plan-mode';
    smooth.version = '0.1.0';
    let active = false;

    const widget = () => ({
        kind: 'keyvalue',
        title: 'Plan mode',
        rows: [{ key: 'status', value: active ? 'ON — writes blocked' : 'off' }],
        text: `plan mode: ${active ? 'ON' : 'off'}`,
    });

    smooth.registerCommand({
        name: 'plan',
        description: 'Toggle plan mode on/off (read-only tools while on).',
        async execute(ctx) {
            const arg = String(ctx.args?.args ?? '').trim().toLowerCase();
            active = arg === 'on' ? true : arg === 'off' ? false : !active;
            const tools = await ctx.tools.setActive(active ? READ_TOOLS : ALL_TOOLS);
            await ctx.session.appendEntry({ kind: 'plan_mode', enabled: active });
            if (ctx.hasUI('set_widget')) await ctx.ui.setWidget(widget());
            return { content: `Plan mode ${active ? 'enabled' : 'disabled'}; tools: ${tools.join(', ')}.` };
        },
        complete: (partial) => ['on', 'off'].filter((v) => v.startsWith(partial)).map((value) => ({ value })),
    });

    smooth.on('tool_call', (input) => {
        const tool = String(input?.tool ?? '');
        if (active && WRITE_TOOLS.has(tool)) {
            return { block: true, reason: `plan mode is on — \`${tool}\` is blocked. Toggle it off with /plan.` };
        }
    });
});

planMode.serve();

// todo — a checklist whose tools show it in a widget; clear asks first
// when the front can (SEP's todo example).
import { defineExtension, type ToolContext } from '../sdk.ts';

interface Item {
    text: string;
    done: boolean;
}

const todo = defineExtension((smooth) => {
    smooth.name = 'todo';
    smooth.version = '0.1.0';
    const items: Item[] = [];

    const widget = () => ({
        kind: 'keyvalue',
        title: 'Todos',
        rows: items.map((it, i) => ({ key: `${i + 1}`, value: `${it.done ? '✓' : '○'} ${it.text}` })),
        text: items.length ? items.map((it, i) => `${i + 1}. [${it.done ? 'x' : ' '}] ${it.text}`).join('\n') : '(no todos)',
    });
    const render = async (ctx: ToolContext) => {
        if (ctx.hasUI('set_widget')) await ctx.ui.setWidget(widget());
    };

    smooth.registerTool({
        name: 'todo_add',
        description: 'Add a todo item.',
        parameters: { type: 'object', properties: { text: { type: 'string', description: 'The task to add.' } }, required: ['text'] },
        async execute(args, ctx) {
            items.push({ text: args.text, done: false });
            await render(ctx);
            return { content: `Added: ${args.text} (${items.length} total)` };
        },
    });
    smooth.registerTool({
        name: 'todo_done',
        description: 'Mark a todo done by its 1-based number.',
        parameters: { type: 'object', properties: { index: { type: 'integer', minimum: 1 } }, required: ['index'] },
        async execute(args, ctx) {
            const it = items[args.index - 1];
            if (!it) return { content: `No todo #${args.index}`, is_error: true };
            it.done = true;
            await render(ctx);
            return { content: `Done: ${it.text}` };
        },
    });
    smooth.registerTool({
        name: 'todo_clear',
        description: 'Clear all todos (asks for confirmation when a UI is available).',
        parameters: { type: 'object', properties: {} },
        async execute(_args, ctx) {
            if (ctx.hasUI('confirm')) {
                const { confirmed, cancelled } = await ctx.ui.confirm(`Clear all ${items.length} todos?`);
                if (cancelled || !confirmed) return { content: 'Cancelled.' };
            }
            const n = items.length;
            items.length = 0;
            await render(ctx);
            return { content: `Cleared ${n} todos.` };
        },
    });
});

todo.serve();

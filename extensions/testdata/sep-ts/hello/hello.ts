// hello — one tool, greet, that streams progress (SEP's hello example,
// written for zot's tests on our own SDK, ../sdk.ts).
import { defineExtension } from '../sdk.ts';

const hello = defineExtension((smooth) => {
    smooth.name = 'hello';
    smooth.version = '0.1.0';
    smooth.registerTool({
        name: 'greet',
        description: 'Greet someone by name.',
        parameters: { type: 'object', properties: { name: { type: 'string', description: 'Who to greet.' } }, required: ['name'] },
        async execute(args, ctx) {
            ctx.onUpdate({ message: `greeting ${args.name}`, progress: 0.5 });
            return { content: `Hello, ${args.name}!` };
        },
    });
    smooth.on('turn_start', () => smooth.log('info', 'a turn started'));
});

hello.serve();

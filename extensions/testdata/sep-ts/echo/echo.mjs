// echo — a dependency-free SEP extension (only node:readline), as SEP's
// spec ships one for conformance: a tool say, a command echo-cmd with
// argument completion, every hook continued. Written for zot's tests.
import { createInterface } from 'node:readline';
import process from 'node:process';

const send = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const reply = (id, result) => send({ jsonrpc: '2.0', id, result });

createInterface({ input: process.stdin, terminal: false }).on('line', (line) => {
    if (!line.trim()) return;
    const { id, method, params = {} } = JSON.parse(line);
    switch (method) {
        case 'initialize':
            return reply(id, {
                protocol_version: Math.min(params.protocol_version ?? 1, 1),
                extension: { name: 'echo', version: '0.1.0' },
                registrations: {
                    tools: [{ name: 'say', description: 'Echo a phrase back.',
                        parameters: { type: 'object', properties: { phrase: { type: 'string' } }, required: ['phrase'] } }],
                    commands: [{ name: 'echo-cmd', description: 'Echo a slash command back.' }],
                    subscriptions: ['turn_start', 'turn_end', 'message_end'],
                },
            });
        case 'ping':
            return reply(id, {});
        case 'hook':
            return reply(id, { action: 'continue' });
        case 'tool/execute':
            return reply(id, { content: String(params.arguments?.phrase ?? '') });
        case 'command/execute':
            return reply(id, { content: `ran ${params.command}${params.arguments?.args ? ` ${params.arguments.args}` : ''}` });
        case 'command/complete':
            return reply(id, { completions: [{ value: `${params.partial ?? ''}-done`, description: 'echo completion' }] });
        case 'shutdown':
            reply(id, {});
            return process.exit(0);
        default:
            if (id !== undefined && method !== undefined) send({ jsonrpc: '2.0', id, error: { code: -32601, message: `method not found: ${method}` } });
    }
});

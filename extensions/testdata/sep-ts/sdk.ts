// A small SEP (Smooth Extension Protocol) runtime for zot's tests, written
// here from SEP's envelope and method definitions: JSON-RPC 2.0, one
// message per line on stdin/stdout, both sides sending requests. It offers
// what the examples need, in the shape of SEP's TypeScript SDK
// (defineExtension, registerTool/registerCommand, on(event|hook), ui,
// session, tools, log), with no dependency but Node.

import { createInterface } from 'node:readline';
import process from 'node:process';

type Json = any;
export type Context = { token: string; tier: 'event' | 'command' };

export interface ToolContext {
    callId: string;
    context: Context;
    onUpdate(u: { message?: string; progress?: number }): void;
    hasUI(kind: string): boolean;
    ui: Ui;
    session: Session;
    tools: { setActive(names: string[]): Promise<string[]> };
    exec(command: string, args?: string[]): Promise<{ stdout: string; stderr: string; exit_code: number }>;
}

export interface CommandContext {
    args: Record<string, string>;
    context: Context;
    hasUI(kind: string): boolean;
    ui: Ui;
    session: Session;
    tools: { setActive(names: string[]): Promise<string[]> };
}

export interface Ui {
    confirm(prompt: string): Promise<{ confirmed?: boolean; cancelled?: boolean }>;
    select(prompt: string, options: string[]): Promise<{ value?: string; cancelled?: boolean }>;
    notify(message: string, level?: string): Promise<void>;
    setStatus(status: string): Promise<void>;
    setWidget(widget: Json): Promise<void>;
}

export interface Session {
    appendEntry(entry: Json): Promise<void>;
    sendMessage(text: string): Promise<void>;
}

export interface Tool {
    name: string;
    description: string;
    parameters: Json; // a JSON Schema object
    execute(args: Json, ctx: ToolContext): Promise<{ content: string; is_error?: boolean }> | { content: string; is_error?: boolean };
}

export interface Command {
    name: string;
    description: string;
    execute(ctx: CommandContext): Promise<{ content?: string }> | { content?: string };
    complete?(partial: string): { value: string; description?: string }[];
}

type Handler = (input: Json, ctx: { context: Context }) => Json | void | Promise<Json | void>;

// Hook names SEP runs as hooks (an answer is awaited); the rest are events.
const HOOKS = new Set(['tool_call', 'tool_result', 'input', 'before_agent_start', 'context', 'message_end', 'user_bash']);

export class Extension {
    name = 'extension';
    version = '0.0.0';
    private tools: Tool[] = [];
    private commands: Command[] = [];
    private handlers = new Map<string, Handler[]>();
    private uiCaps = new Set<string>();
    private nextId = 0;
    private waiting = new Map<string, (m: Json) => void>();

    registerTool(t: Tool) { this.tools.push(t); }
    registerCommand(c: Command) { this.commands.push(c); }
    on(name: string, h: Handler) { this.handlers.set(name, [...(this.handlers.get(name) ?? []), h]); }
    hasUI(kind: string) { return this.uiCaps.has(kind); }

    log(level: string, message: string, fields?: Json) {
        this.write({ jsonrpc: '2.0', method: 'log', params: fields ? { level, message, fields } : { level, message } });
    }

    /** request sends the host a request and resolves with its result (rejects with its error). */
    request(method: string, params: Json): Promise<Json> {
        const id = `e${++this.nextId}`;
        this.write({ jsonrpc: '2.0', id, method, params });
        return new Promise((resolve, reject) => {
            this.waiting.set(id, (m) => (m.error ? reject(Object.assign(new Error(m.error.message), { code: m.error.code })) : resolve(m.result)));
        });
    }

    private write(m: Json) { process.stdout.write(`${JSON.stringify(m)}\n`); }
    private reply(id: Json, result: Json) { this.write({ jsonrpc: '2.0', id, result }); }
    private fail(id: Json, code: number, message: string) { this.write({ jsonrpc: '2.0', id, error: { code, message } }); }

    private ui(): Ui {
        return {
            confirm: (prompt) => this.request('ui/request', { kind: 'confirm', prompt }),
            select: (prompt, options) => this.request('ui/request', { kind: 'select', prompt, options }),
            notify: async (message, level = 'info') => { await this.request('ui/request', { kind: 'notify', message, level }); },
            setStatus: async (status) => { await this.request('ui/request', { kind: 'set_status', status }); },
            setWidget: async (widget) => { await this.request('ui/request', { kind: 'set_widget', widget }); },
        };
    }

    private session(context: Context): Session {
        return {
            appendEntry: async (entry) => { await this.request('session/append_entry', { context, entry }); },
            sendMessage: async (text) => { await this.request('session/send_message', { context, text }); },
        };
    }

    private toolsApi() {
        return { setActive: async (names: string[]) => (await this.request('tools/set_active', { tools: names })).active as string[] };
    }

    /** serve answers the host on stdio until stdin ends. */
    serve() {
        const rl = createInterface({ input: process.stdin, terminal: false });
        rl.on('line', (line) => {
            if (!line.trim()) return;
            let m: Json;
            try {
                m = JSON.parse(line);
            } catch {
                this.fail(null, -32700, 'malformed JSON');
                return;
            }
            if (m.method === undefined) {
                const done = this.waiting.get(String(m.id));
                this.waiting.delete(String(m.id));
                done?.(m);
                return;
            }
            this.dispatch(m).catch((err) => {
                if (m.id !== undefined) this.fail(m.id, -32603, String(err?.message ?? err));
            });
        });
    }

    private async dispatch(m: Json) {
        const p = m.params ?? {};
        switch (m.method) {
            case 'initialize': {
                for (const k of p.ui_capabilities ?? []) this.uiCaps.add(k);
                const hooks = [...this.handlers.keys()].filter((k) => HOOKS.has(k));
                const subscriptions = [...this.handlers.keys()].filter((k) => !HOOKS.has(k));
                this.reply(m.id, {
                    protocol_version: Math.min(p.protocol_version ?? 1, 1),
                    extension: { name: this.name, version: this.version },
                    registrations: {
                        tools: this.tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
                        commands: this.commands.map(({ name, description }) => ({ name, description })),
                        subscriptions,
                        hooks,
                    },
                });
                return;
            }
            case 'ping':
                this.reply(m.id, {});
                return;
            case 'shutdown':
                this.reply(m.id, {});
                setImmediate(() => process.exit(0));
                return;
            case 'event':
                for (const h of this.handlers.get(p.event) ?? []) await h(p.payload, { context: p.context });
                return;
            case 'hook': {
                let outcome: Json = { action: 'continue' };
                for (const h of this.handlers.get(p.hook) ?? []) {
                    const r = await h(p.input, { context: p.context });
                    if (r?.block) {
                        outcome = { action: 'block', reason: r.reason ?? 'blocked' };
                        break;
                    }
                    if (r?.patch) outcome = { action: 'modify', patch: r.patch };
                }
                this.reply(m.id, outcome);
                return;
            }
            case 'tool/execute': {
                const t = this.tools.find((x) => x.name === p.tool);
                if (!t) return this.fail(m.id, -32601, `no tool ${p.tool}`);
                const ctx: ToolContext = {
                    callId: p.call_id,
                    context: p.context,
                    onUpdate: (u) => this.write({ jsonrpc: '2.0', method: 'tool/update', params: { call_id: p.call_id, ...u } }),
                    hasUI: (k) => this.hasUI(k),
                    ui: this.ui(),
                    session: this.session(p.context),
                    tools: this.toolsApi(),
                    exec: (command, args) => this.request('exec/run', { command, ...(args ? { args } : {}), context: p.context }),
                };
                this.reply(m.id, await t.execute(p.arguments ?? {}, ctx));
                return;
            }
            case 'command/execute': {
                const c = this.commands.find((x) => x.name === p.command);
                if (!c) return this.fail(m.id, -32601, `no command ${p.command}`);
                const res = await c.execute({
                    args: p.arguments ?? {},
                    context: p.context,
                    hasUI: (k) => this.hasUI(k),
                    ui: this.ui(),
                    session: this.session(p.context),
                    tools: this.toolsApi(),
                });
                this.reply(m.id, res);
                return;
            }
            case 'command/complete': {
                const c = this.commands.find((x) => x.name === p.command);
                this.reply(m.id, { completions: c?.complete?.(p.partial ?? '') ?? [] });
                return;
            }
            default:
                if (m.id !== undefined) this.fail(m.id, -32601, `method not found: ${m.method}`);
        }
    }
}

/** defineExtension builds an extension with setup. */
export function defineExtension(setup: (smooth: Extension) => void): Extension {
    const e = new Extension();
    setup(e);
    return e;
}

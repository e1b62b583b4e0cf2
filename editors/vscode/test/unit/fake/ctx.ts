// A fake of the extension's context (src/ctx.ts) for the commands and
// events tests: a scripted zot (answers by method) and a recording chat.

import { ZotState } from "../../../src/state";
import * as commands from "../../../src/commands";
import type { Ctx } from "../../../src/ctx";
import type { HostToChat, NoticeLevel } from "../../../src/webview/protocol";
import type { ZotEvent, CommandInfo } from "../../../src/lsp_ext";

type Answer = (params: unknown) => unknown;

export function fakeCtx(answers: Record<string, Answer> = {}) {
    const requests: { method: string; params: unknown }[] = [];
    const posted: HostToChat[] = [];
    const notices: { level: NoticeLevel; text: string; extension?: string }[] = [];
    const events: ZotEvent[] = [];
    const output: string[] = [];
    let statusBarDraws = 0;
    let reveals = 0;
    const chat = {
        visible: true,
        post: (m: HostToChat) => void posted.push(m),
        notice: (level: NoticeLevel, text: string, extension?: string) => void notices.push({ level, text, extension }),
        event: (ev: ZotEvent) => void events.push(ev),
        reveal: async () => void reveals++,
    };
    const client = {
        connection: { state: "running" as const, version: "0.1.0" } as { state: "running"; version: string; problem?: string },
        resumeSession: undefined as string | undefined,
        restarts: 0,
        running() {
            return {
                sendRequest: async (type: { method: string }, params?: unknown) => {
                    requests.push({ method: type.method, params });
                    const a = answers[type.method];
                    if (!a) {
                        throw new Error(`fake zot: no answer for ${type.method}`);
                    }
                    return a(params);
                },
            };
        },
        async ready() {
            return client.running();
        },
        restart: async () => void client.restarts++,
    };
    const ctx = {
        state: new ZotState(),
        client,
        chat,
        panels: { open: () => undefined, render: () => undefined, close: () => undefined },
        reviews: { review: async () => ({ decision: "accept" as const }), accept: async () => undefined, reject: async () => undefined, count: 0 },
        approvals: { ask: async () => null },
        output: { appendLine: (s: string) => void output.push(s), show: () => undefined },
        updateStatusBar: () => void statusBarDraws++,
        setCommands: (c: CommandInfo[]) => void (ctx.state.commands = c),
        refresh: (history: boolean) => commands.refresh(ctx as unknown as Ctx, history),
    };
    return {
        ctx: ctx as unknown as Ctx,
        state: ctx.state,
        chat,
        client,
        requests,
        posted,
        notices,
        events,
        output,
        methods: () => requests.map((r) => r.method),
        statusBarDraws: () => statusBarDraws,
        reveals: () => reveals,
    };
}

export const stateAnswer = () => ({
    provider: "anthropic",
    model: "m1",
    reasoning: "off",
    cwd: "/ws",
    message_count: 0,
    busy: false,
    usage: { input: 0, output: 0, cache_read: 0, cache_write: 0, cost_usd: 0 },
    session_id: "sess-1",
    permissionMode: "auto",
    queued: 0,
});

// An independent ACP client, the official TypeScript SDK, driving the real
// `zot acp` against the scripted model (`zot mock-llm`): streaming, an
// edit through fs/write_text_file with its diff, unsaved-buffer reads, a
// terminal-backed bash, a rejected permission, cancel mid-stream,
// session/load replaying the conversation, session/fork and
// session/set_config_option. ZOT_BIN names the zot to test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const zot = process.env.ZOT_BIN;
if (!zot) throw new Error("set ZOT_BIN to the zot binary to test");

const root = realpathSync(mkdtempSync(join(tmpdir(), "zot-acp-node-")));
const home = mkdtempSync(join(tmpdir(), "zot-acp-home-"));
const notes = join(root, "notes.txt");
writeFileSync(notes, "hello from disk\n");

const script = {
  replies: [
    { tool_calls: [{ name: "read", args: { path: "notes.txt" } }] },
    { tool_calls: [{ name: "edit", args: { path: "notes.txt", edits: [{ oldText: "unsaved", newText: "edited" }] } }] },
    { tool_calls: [{ name: "bash", args: { command: "echo hi-from-terminal" } }] },
    { text: "All done here" },
    { tool_calls: [{ name: "edit", args: { path: "notes.txt", edits: [{ oldText: "edited", newText: "rejected" }] } }] },
    { text: "Understood" },
    { repeat_text: { text: "tok ", count: 100000 }, delay_ms: 2 },
  ],
};
const scriptFile = join(root, "..", `script-${process.pid}.json`);
writeFileSync(scriptFile, JSON.stringify(script));

const env = { ...process.env, ZOT_HOME: home };
for (const k of Object.keys(env)) if (k.startsWith("ANTHROPIC_") || k.startsWith("OPENAI_")) delete env[k];

const children = [];
function start(args) {
  const child = spawn(zot, args, { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.logs = () => stderr;
  children.push(child);
  return child;
}

async function mockLLM() {
  const child = start(["mock-llm", "--script", scriptFile]);
  return await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(out.slice(0, nl).trim());
    });
    child.on("exit", (code) => reject(new Error(`mock-llm exited ${code}: ${child.logs()}`)));
  });
}

// connect starts `zot acp` and a client on the SDK with an editor's
// behaviour: unsaved buffers, writes kept in the buffer, real terminals.
function connect(baseURL, permit) {
  const proc = start(["acp", "--api-key", "test-key", "--base-url", baseURL]);
  const updates = [];
  const writes = [];
  const permissions = [];
  const terminals = new Map();
  const buffers = new Map([[notes, "hello unsaved buffer\n"]]);
  let waiters = [];
  const app = acp
    .client({ name: "zot-node-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
      for (const w of waiters) w();
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => ({
      content: buffers.get(params.path) ?? readFileSync(params.path, "utf8"),
    }))
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      writes.push(params);
      buffers.set(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      return { outcome: { outcome: "selected", optionId: permit(params) } };
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      const id = `t${terminals.size + 1}`;
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, stdio: ["ignore", "pipe", "pipe"] });
      const t = { params, output: "", exit: null };
      t.done = new Promise((resolve) =>
        child.on("exit", (code, signal) => {
          t.exit = { exitCode: code, signal };
          resolve();
        }),
      );
      child.stdout.on("data", (d) => (t.output += d));
      child.stderr.on("data", (d) => (t.output += d));
      t.child = child;
      terminals.set(id, t);
      return { terminalId: id };
    })
    .onRequest(acp.methods.client.terminal.output, ({ params }) => {
      const t = terminals.get(params.terminalId);
      return { output: t.output, truncated: false, exitStatus: t.exit ?? undefined };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
      const t = terminals.get(params.terminalId);
      await t.done;
      return t.exit;
    })
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
      terminals.get(params.terminalId).child.kill("SIGKILL");
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      terminals.get(params.terminalId).child.kill("SIGKILL");
      return {};
    });
  const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
  const conn = app.connect(stream);
  const until = (pred, what) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const u = updates.find(pred);
        if (u) {
          waiters = waiters.filter((w) => w !== check);
          clearTimeout(timer);
          resolve(u);
        }
      };
      const timer = setTimeout(() => reject(new Error(`no ${what}; updates: ${JSON.stringify(updates).slice(0, 2000)}`)), 60000);
      waiters.push(check);
      check();
    });
  return { proc, agent: conn.agent, conn, updates, writes, permissions, terminals, buffers, until };
}

const text = (updates, kind) =>
  updates.filter((u) => u.sessionUpdate === kind && u.content?.type === "text").map((u) => u.content.text).join("");

test("zot acp with the official TypeScript SDK", async (t) => {
  const baseURL = await mockLLM();
  let choice = "allow_once";
  const c = connect(baseURL, () => choice);
  try {
    const init = await c.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      clientInfo: { name: "zot-node-test", version: "1" },
    });
    assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
    assert.equal(init.agentCapabilities.loadSession, true);
    assert.equal(init.agentCapabilities.promptCapabilities.image, true);
    assert.ok(init.agentCapabilities.sessionCapabilities.fork, "session/fork is offered");

    const session = await c.agent.request(acp.methods.agent.session.new, { cwd: root, mcpServers: [] });
    const sessionId = session.sessionId;
    assert.deepEqual(session.modes.availableModes.map((m) => m.id).sort(), ["ask", "auto", "readonly"]);
    await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "auto" });

    await t.test("a prompt reads the buffer, edits through the editor, runs a terminal, streams the answer", async () => {
      const res = await c.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "fix notes.txt and say hi" }],
      });
      assert.equal(res.stopReason, "end_turn");
      assert.equal(text(c.updates, "agent_message_chunk"), "All done here");
      const kinds = c.updates.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.kind);
      assert.deepEqual(kinds, ["read", "edit", "execute"]);
      assert.equal(c.writes.length, 1);
      assert.equal(c.writes[0].path, notes);
      assert.equal(c.writes[0].content, "hello edited buffer\n");
      assert.equal(readFileSync(notes, "utf8"), "hello from disk\n", "the disk is the editor's business");
      const diff = c.updates
        .filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")
        .flatMap((u) => u.content ?? [])
        .find((x) => x.type === "diff");
      assert.ok(diff, "the edit's update carries a diff");
      assert.equal(diff.path, notes);
      assert.equal(diff.oldText, "hello unsaved buffer\n");
      assert.equal(diff.newText, "hello edited buffer\n");
      assert.equal(c.terminals.size, 1);
      assert.deepEqual(c.terminals.get("t1").params.args, ["-c", "echo hi-from-terminal"]);
      assert.ok(
        c.updates.some((u) => u.sessionUpdate === "tool_call_update" && (u.content ?? []).some((x) => x.type === "terminal" && x.terminalId === "t1")),
        "the bash tool call shows the terminal",
      );
    });

    await t.test("a rejected edit in ask mode leaves the buffer and reaches the model", async () => {
      await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "ask" });
      choice = "reject_once";
      const res = await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] });
      assert.equal(res.stopReason, "end_turn");
      assert.equal(c.permissions.length, 1);
      const p = c.permissions[0];
      // The safe answer first (a client that takes the first option as the
      // default rejects).
      assert.deepEqual(p.options.map((o) => o.kind), ["reject_once", "allow_once", "allow_always"]);
      const diff = p.toolCall.content.find((x) => x.type === "diff");
      assert.equal(diff.newText, "hello rejected buffer\n");
      assert.equal(c.buffers.get(notes), "hello edited buffer\n");
      assert.equal(c.writes.length, 1);
    });

    await t.test("session/cancel stops a streaming answer with stopReason cancelled", async () => {
      const before = c.updates.length;
      const pending = c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
      await c.until((u, i) => i >= before && u.sessionUpdate === "agent_message_chunk" && u.content.text === "tok ", "a streamed chunk");
      await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      const res = await pending;
      assert.equal(res.stopReason, "cancelled");
    });

    c.proc.stdin.end();
    await new Promise((resolve) => c.proc.on("exit", resolve));

    await t.test("session/load in a new zot replays the conversation", async () => {
      const c2 = connect(baseURL, () => "allow_once");
      try {
        await c2.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        const list = await c2.agent.request(acp.methods.agent.session.list, { cwd: root });
        assert.ok(list.sessions.some((s) => s.sessionId === sessionId), JSON.stringify(list));
        await c2.agent.request(acp.methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
        assert.match(text(c2.updates, "user_message_chunk"), /fix notes\.txt and say hi/);
        assert.match(text(c2.updates, "agent_message_chunk"), /All done here/);
        assert.ok(c2.updates.some((u) => u.sessionUpdate === "tool_call" && u.kind === "edit"));

        // session/fork: a copy under a new id, with its config options;
        // set_config_option answers every option's value.
        // (session/fork is in the SDK's unstable schema: no constant in methods.)
        const fork = await c2.agent.request("session/fork", { sessionId, cwd: root });
        assert.notEqual(fork.sessionId, sessionId);
        assert.deepEqual(fork.configOptions.map((o) => o.id).slice(0, 2), ["mode", "model"]);
        const set = await c2.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: fork.sessionId, configId: "mode", value: "readonly" });
        assert.equal(set.configOptions.find((o) => o.id === "mode").currentValue, "readonly");
        const listed = await c2.agent.request(acp.methods.agent.session.list, { cwd: root });
        assert.ok(listed.sessions.some((s) => s.sessionId === fork.sessionId), JSON.stringify(listed));
      } finally {
        c2.proc.stdin.end();
        await new Promise((resolve) => c2.proc.on("exit", resolve));
      }
    });
  } catch (err) {
    console.error(c.proc.logs());
    throw err;
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
  }
});

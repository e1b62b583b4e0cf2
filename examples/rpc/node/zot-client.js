#!/usr/bin/env node
// One prompt over `zot rpc`, with Node's standard library alone.
//
//   node zot-client.js "what does main.go do?"
//
// Starts `zot rpc` (the `zot` on PATH), sends the prompt, prints the
// answer's text on stdout as it streams and the tool activity on stderr,
// and exits when the run's `done` arrives: 0, or 1 when the run reported
// an error. With ZOTCORE_RPC_TOKEN set it says hello with the token first.
// See docs/rpc.md for every command and event.
"use strict";

const { spawn } = require("node:child_process");
const readline = require("node:readline");

async function main(args) {
  if (args.length === 0) {
    process.stderr.write("usage: node zot-client.js PROMPT\n");
    return 2;
  }
  const zot = spawn("zot", ["rpc"], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => zot.on("close", resolve));
  const send = (command) => zot.stdin.write(JSON.stringify(command) + "\n");

  const token = process.env.ZOTCORE_RPC_TOKEN;
  if (token) send({ id: "0", type: "hello", token });
  send({ id: "1", type: "prompt", message: args.join(" ") });

  let status = 1; // until done says otherwise
  let failed = false;
  let done = false;
  const lines = readline.createInterface({ input: zot.stdout, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const ev = JSON.parse(line);
    if (ev.type === "response" && !ev.success) {
      process.stderr.write(`[error] ${ev.command}: ${ev.error}\n`);
      failed = true;
      if (ev.command === "hello" || ev.command === "prompt") break; // no run will follow
    } else if (ev.type === "text_delta") {
      process.stdout.write(ev.delta || "");
    } else if (ev.type === "tool_call") {
      process.stderr.write(`\n[tool] ${ev.name} ${JSON.stringify(ev.args || {})}\n`);
    } else if (ev.type === "tool_result" && ev.is_error) {
      process.stderr.write(`[tool error] ${ev.id}\n`);
    } else if (ev.type === "error") {
      process.stderr.write(`\n[error] ${ev.message}\n`);
      failed = true;
    } else if (ev.type === "done") {
      process.stdout.write("\n");
      status = failed ? 1 : 0;
      done = true;
      break;
    }
  }
  if (!done && !failed) process.stderr.write("[error] zot rpc exited before the run was done\n");
  zot.stdin.end(); // end of input: zot exits
  await exited;
  return status;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err}\n`);
    process.exit(1);
  },
);

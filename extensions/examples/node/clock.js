#!/usr/bin/env node
// clock-node: a zot extension in plain Node (no SDK, no dependencies).
//
// Registers the /clock command (shows the current time) and the now tool
// (tells the model the current date and time, optionally in an IANA time
// zone). Speaks extension protocol v1: one JSON object per line on
// stdin/stdout. Logs go to stderr, which zot keeps in the extension's log.
'use strict';

const readline = require('readline');

const NAME = 'clock-node';

function emit(frame) {
  process.stdout.write(JSON.stringify(frame) + '\n');
}

function log(msg) {
  process.stderr.write(`[${NAME}] ${msg}\n`);
}

// describe formats date in timeZone (undefined: the local zone); it
// throws a RangeError for an unknown zone.
function describe(date, timeZone) {
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone, dateStyle: 'full', timeStyle: 'long',
  });
  return fmt.format(date);
}

function onCommand(frame) {
  if (frame.name !== 'clock') {
    emit({ type: 'command_response', id: frame.id, action: 'noop', error: `${NAME} has no command /${frame.name}` });
    return;
  }
  const zone = typeof frame.args === 'string' && frame.args.trim() !== '' ? frame.args.trim() : undefined;
  try {
    emit({ type: 'command_response', id: frame.id, action: 'display', display: `🕒 ${describe(new Date(), zone)}` });
  } catch (err) {
    emit({ type: 'command_response', id: frame.id, action: 'noop', error: `unknown time zone ${JSON.stringify(zone)}` });
  }
}

function toolError(id, text) {
  emit({ type: 'tool_result', id, is_error: true, content: [{ type: 'text', text }] });
}

function onTool(frame) {
  if (frame.name !== 'now') {
    toolError(frame.id, `${NAME} has no tool ${JSON.stringify(frame.name)}`);
    return;
  }
  const args = frame.args && typeof frame.args === 'object' ? frame.args : {};
  if (args.timezone !== undefined && typeof args.timezone !== 'string') {
    toolError(frame.id, 'invalid arguments: "timezone" must be a string');
    return;
  }
  const now = new Date();
  let local;
  try {
    local = describe(now, args.timezone || undefined);
  } catch (err) {
    toolError(frame.id, `unknown time zone ${JSON.stringify(args.timezone)}`);
    return;
  }
  emit({ type: 'tool_result', id: frame.id, content: [{ type: 'text', text: `${now.toISOString()} (${local})` }] });
}

emit({ type: 'hello', name: NAME, version: '1.0.0', capabilities: ['commands', 'tools'] });
emit({ type: 'register_command', name: 'clock', description: 'show the current time (/clock [IANA zone])' });
emit({
  type: 'register_tool',
  name: 'now',
  description: 'The current date and time: an ISO 8601 UTC timestamp and a readable local form.',
  schema: {
    type: 'object',
    properties: { timezone: { type: 'string', description: 'IANA time zone, e.g. Europe/Berlin (default: local)' } },
  },
});
emit({ type: 'ready' });

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
let stopping = false;
rl.on('line', (line) => {
  if (stopping || line.trim() === '') return;
  let frame;
  try {
    frame = JSON.parse(line);
  } catch (err) {
    log('skipping a line that is not JSON');
    return;
  }
  if (!frame || typeof frame !== 'object') return;
  switch (frame.type) {
    case 'hello_ack':
      log(`hello_ack: data_dir=${frame.data_dir}`);
      break;
    case 'command_invoked':
      onCommand(frame);
      break;
    case 'tool_call':
      onTool(frame);
      break;
    case 'shutdown':
      stopping = true;
      rl.pause();
      process.stdout.write(JSON.stringify({ type: 'shutdown_ack' }) + '\n', () => process.exit(0));
      break;
    default:
      // events, tool_cancel and future frames: ignored
      break;
  }
});
rl.on('close', () => {
  // stdin closed (zot went away): let pending writes drain, then exit.
  process.stdout.write('', () => process.exit(0));
});

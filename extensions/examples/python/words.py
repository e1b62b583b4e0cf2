#!/usr/bin/env python3
"""words-py: a zot extension in plain Python 3 (stdlib only, no SDK).

Registers the /words command (counts the words you type after it) and
the word_count tool (counts words, lines and characters of a text for
the model). Speaks extension protocol v1: one JSON object per line on
stdin/stdout. Logs go to stderr, which zot keeps in the extension's log.
"""
import json
import sys

NAME = "words-py"


def emit(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def log(msg):
    sys.stderr.write("[%s] %s\n" % (NAME, msg))
    sys.stderr.flush()


def counts(text):
    return len(text.split()), len(text.splitlines()), len(text)


def on_command(frame):
    args = frame.get("args") or ""
    if not isinstance(args, str):
        args = json.dumps(args)
    if frame.get("name") != "words":
        emit({"type": "command_response", "id": frame.get("id"), "action": "noop",
              "error": "words-py has no command /%s" % frame.get("name")})
        return
    if not args.strip():
        emit({"type": "command_response", "id": frame.get("id"), "action": "display",
              "display": "usage: /words <text>  (counts the words in text)"})
        return
    words, _, chars = counts(args)
    emit({"type": "command_response", "id": frame.get("id"), "action": "display",
          "display": "%d words, %d characters" % (words, chars)})


def tool_error(call_id, text):
    emit({"type": "tool_result", "id": call_id, "is_error": True,
          "content": [{"type": "text", "text": text}]})


def on_tool(frame):
    call_id = frame.get("id")
    if frame.get("name") != "word_count":
        tool_error(call_id, "words-py has no tool %r" % frame.get("name"))
        return
    args = frame.get("args")
    if not isinstance(args, dict) or not isinstance(args.get("text"), str):
        tool_error(call_id, 'invalid arguments: want {"text": string}')
        return
    words, lines, chars = counts(args["text"])
    emit({"type": "tool_result", "id": call_id,
          "content": [{"type": "text",
                       "text": "%d words, %d lines, %d characters" % (words, lines, chars)}]})


def main():
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    emit({"type": "hello", "name": NAME, "version": "1.0.0",
          "capabilities": ["commands", "tools"]})
    emit({"type": "register_command", "name": "words",
          "description": "count the words in the text after /words"})
    emit({"type": "register_tool", "name": "word_count",
          "description": "Count the words, lines and characters in a text.",
          "schema": {"type": "object",
                     "properties": {"text": {"type": "string", "description": "the text to count"}},
                     "required": ["text"]}})
    emit({"type": "ready"})

    while True:
        line = sys.stdin.readline()
        if not line:
            return  # zot closed our stdin
        line = line.strip()
        if not line:
            continue
        try:
            frame = json.loads(line)
        except ValueError:
            log("skipping a line that is not JSON")
            continue
        if not isinstance(frame, dict):
            continue
        kind = frame.get("type")
        if kind == "hello_ack":
            log("hello_ack: data_dir=%s" % frame.get("data_dir"))
        elif kind == "command_invoked":
            on_command(frame)
        elif kind == "tool_call":
            on_tool(frame)
        elif kind == "shutdown":
            emit({"type": "shutdown_ack"})
            return
        # Anything else (events, tool_cancel, future frames) is ignored.


if __name__ == "__main__":
    main()

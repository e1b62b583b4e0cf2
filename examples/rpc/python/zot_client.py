#!/usr/bin/env python3
"""One prompt over `zot rpc`, from Python's standard library alone.

    python3 zot_client.py "what does main.go do?"

Starts `zot rpc` (the `zot` on PATH), sends the prompt, prints the
answer's text on stdout as it streams and the tool activity on stderr,
and exits when the run's `done` arrives: 0, or 1 when the run reported an
error. With ZOTCORE_RPC_TOKEN set it says hello with the token first.
See docs/rpc.md for every command and event.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: zot_client.py PROMPT", file=sys.stderr)
        return 2
    zot = subprocess.Popen(
        ["zot", "rpc"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        bufsize=1,
    )
    assert zot.stdin is not None and zot.stdout is not None

    def send(command: dict) -> None:
        zot.stdin.write(json.dumps(command) + "\n")
        zot.stdin.flush()

    token = os.environ.get("ZOTCORE_RPC_TOKEN")
    if token:
        send({"id": "0", "type": "hello", "token": token})
    send({"id": "1", "type": "prompt", "message": " ".join(argv[1:])})

    status = 1  # until done says otherwise
    failed = False
    for line in zot.stdout:
        if not line.strip():
            continue
        ev = json.loads(line)
        kind = ev.get("type")
        if kind == "response" and not ev.get("success"):
            print(f"[error] {ev.get('command')}: {ev.get('error')}", file=sys.stderr)
            failed = True
            if ev.get("command") in ("hello", "prompt"):
                break  # no run will follow
        elif kind == "text_delta":
            sys.stdout.write(ev.get("delta", ""))
            sys.stdout.flush()
        elif kind == "tool_call":
            print(f"\n[tool] {ev['name']} {json.dumps(ev.get('args', {}))}", file=sys.stderr)
        elif kind == "tool_result" and ev.get("is_error"):
            print(f"[tool error] {ev['id']}", file=sys.stderr)
        elif kind == "error":
            print(f"\n[error] {ev.get('message')}", file=sys.stderr)
            failed = True
        elif kind == "done":
            print()
            status = 1 if failed else 0
            break
    else:
        print("[error] zot rpc exited before the run was done", file=sys.stderr)

    zot.stdin.close()  # end of input: zot exits
    zot.wait()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))

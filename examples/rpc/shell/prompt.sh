#!/usr/bin/env bash
# One prompt over `zot rpc`, with bash and jq.
#
#   ./prompt.sh "what does main.go do?"
#
# Starts `zot rpc` (the `zot` on PATH) as a coprocess, sends the prompt,
# prints the answer's text on stdout as it streams and the tool activity
# on stderr, and exits when the run's `done` arrives: 0, or 1 when the run
# reported an error. With ZOTCORE_RPC_TOKEN set it says hello with the
# token first. See docs/rpc.md for every command and event.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 PROMPT" >&2
  exit 2
fi

coproc ZOT { zot rpc; }
to_zot=${ZOT[1]}
from_zot=${ZOT[0]}
zot_pid=$ZOT_PID

if [ -n "${ZOTCORE_RPC_TOKEN:-}" ]; then
  jq -nc --arg t "$ZOTCORE_RPC_TOKEN" '{id: "0", type: "hello", token: $t}' >&"$to_zot"
fi
# jq builds the line, so any prompt text is escaped properly.
jq -nc --arg m "$*" '{id: "1", type: "prompt", message: $m}' >&"$to_zot"

status=1 # until done says otherwise
failed=0
finished=0
while IFS= read -r line <&"$from_zot"; do
  [ -n "$line" ] || continue
  case $(jq -r '.type' <<<"$line") in
    response)
      if [ "$(jq -r '.success' <<<"$line")" != true ]; then
        jq -r '"[error] \(.command): \(.error)"' <<<"$line" >&2
        failed=1
        case $(jq -r '.command' <<<"$line") in hello | prompt) break ;; esac # no run will follow
      fi
      ;;
    text_delta) jq -j '.delta' <<<"$line" ;;
    tool_call) jq -r '"\n[tool] \(.name) \(.args | tojson)"' <<<"$line" >&2 ;;
    tool_result)
      if [ "$(jq -r '.is_error' <<<"$line")" = true ]; then
        jq -r '"[tool error] \(.id)"' <<<"$line" >&2
      fi
      ;;
    error)
      jq -r '"\n[error] \(.message)"' <<<"$line" >&2
      failed=1
      ;;
    done)
      echo
      status=$failed
      finished=1
      break
      ;;
  esac
done
if [ $finished = 0 ] && [ $failed = 0 ]; then
  echo "[error] zot rpc exited before the run was done" >&2
fi

exec {to_zot}>&- # end of input: zot exits
wait "$zot_pid" || true
exit $status

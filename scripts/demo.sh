#!/usr/bin/env bash
# Runs zot against the scripted LLM on loopback: no API key, no network.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/zot
tmp=$(mktemp -d)
trap 'kill $llm 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$bin" mock-llm --script scripts/demo-llm.json >"$tmp/url" &
llm=$!
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
url=$(head -n1 "$tmp/url")
ZOT_HOME="$tmp/home" "$bin" -p "hello, who are you?" --api-key demo --base-url "$url" --no-session --reasoning medium

#!/usr/bin/env bash
# Every test of the VS Code extension: (a) type check, eslint, and unit
# tests in plain Node — the webview's rendering and state, and the
# extension-host side (client, commands, events, panels, review) against a
# fake of the vscode API (test/unit/fake/vscode.ts) — then (b) the
# end-to-end test in real VS Code (scripts/e2e.sh: code-server + Chromium +
# the real zot).
# The last line is "vscode: N passed, N failed"; the exit status is 1 when
# anything failed.
#
#   editors/vscode/scripts/test.sh            # both
#   editors/vscode/scripts/test.sh --unit     # (a) only
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE"

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error || exit 1
fi

pass=0 fail=0
echo "== vscode: type check"
if npx --no-install tsc -p . --noEmit; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL type check"; fi

echo "== vscode: lint (eslint, typescript-eslint type-checked rules)"
if npx --no-install eslint --max-warnings 0 .; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL lint"; fi

echo "== vscode: unit tests (node --test)"
unit_out=$(mktemp)
if node esbuild.mjs --tests; then
  node --test --test-reporter=spec out/test/ 2>&1 | tee "$unit_out"
  urc=${PIPESTATUS[0]}
  up=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$unit_out" | tail -1)
  uf=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$unit_out" | tail -1)
  # A test left waiting on a promise is "cancelled": a failure too.
  uc=$(sed -n 's/^ℹ cancelled \([0-9]*\)$/\1/p' "$unit_out" | tail -1)
  uf=$((${uf:-1} + ${uc:-0}))
  if [ "$urc" -ne 0 ] && [ "$uf" -eq 0 ]; then uf=1; fi
  pass=$((pass + ${up:-0})); fail=$((fail + uf))
else
  fail=$((fail + 1)); echo "FAIL building the unit tests"
fi
rm -f "$unit_out"

if [ "${1:-}" != "--unit" ]; then
  echo "== vscode: end-to-end (code-server + Chromium)"
  e2e_out=$(mktemp)
  bash scripts/e2e.sh 2>&1 | tee "$e2e_out"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$e2e_out" | tail -1)
  if [ -n "$line" ]; then
    pass=$((pass + $(echo "$line" | cut -d' ' -f1))); fail=$((fail + $(echo "$line" | cut -d' ' -f3)))
  else
    fail=$((fail + 1)); echo "FAIL the end-to-end run did not finish"
  fi
  rm -f "$e2e_out"
fi

echo "vscode: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# Every test of the VS Code extension: (a) type check, eslint, and unit
# tests in plain Node — the webview's rendering and state, and the
# extension-host side (client, commands, events, panels, review) against a
# fake of the vscode API (test/unit/fake/vscode.ts) — then (b) the
# end-to-end test in real VS Code (scripts/e2e.sh: code-server + Chromium +
# the real zot) on the oldest and the newest VS Code we test.
# The last line is "vscode: N passed, N failed"; the exit status is 1 when
# anything failed.
#
#   editors/vscode/scripts/test.sh            # both
#   editors/vscode/scripts/test.sh --unit     # (a) only
#   E2E_REPEAT=5 editors/vscode/scripts/test.sh   # (b) five times per version
#
# Env: ZOT_E2E_CODE_SERVERS (default "4.100.3 4.139.1": VS Code 1.100, the
#        oldest we support, and 1.139, the newest that installs here; the
#        last one's chat spec runs the bundled zot, see ZOT_E2E_BUNDLED),
#      ZOT_E2E_BUNDLED (default: 1 for the last version only) for every
#        version: 1 runs the chat spec on the package's own zot, "" on
#        zot.serverPath,
#      E2E_REPEAT (default 1): end-to-end runs per version, each with a
#        fresh profile and workspace; a summary line per run,
#      and scripts/e2e.sh's (ZOT_BIN, ZOT_E2E_CACHE, ZOT_E2E_KEEP).
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
  repeat=${E2E_REPEAT:-1}
  case "$repeat" in '' | *[!0-9]* | 0) echo "E2E_REPEAT must be a positive number, not '$repeat'"; exit 2 ;; esac
  runs=()
  versions=(${ZOT_E2E_CODE_SERVERS:-4.100.3 4.139.1})
  for cs in "${versions[@]}"; do
    # The chat spec runs the package's own zot (no zot.serverPath, no zot
    # on PATH) on the newest VS Code, and zot.serverPath (which wins) on
    # the others; ZOT_E2E_BUNDLED, when set, decides for all.
    bundled=${ZOT_E2E_BUNDLED-}
    if [ -z "${ZOT_E2E_BUNDLED+set}" ] && [ "$cs" = "${versions[-1]}" ]; then bundled=1; fi
    for i in $(seq 1 "$repeat"); do
      nth= art=$HERE/test-artifacts/code-server-$cs
      if [ "$repeat" -gt 1 ]; then nth=", run $i of $repeat" art=$art/run-$i; fi
      echo "== vscode: end-to-end (Chromium + code-server $cs$nth; chat on $([ "$bundled" = 1 ] && echo "the bundled zot" || echo "zot.serverPath"))"
      e2e_out=$(mktemp)
      s=$(date +%s)
      ZOT_E2E_CODE_SERVER=$cs ZOT_E2E_ART=$art ZOT_E2E_BUNDLED=$bundled bash scripts/e2e.sh 2>&1 | tee "$e2e_out"
      line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$e2e_out" | tail -1)
      if [ -n "$line" ]; then
        pass=$((pass + $(echo "$line" | cut -d' ' -f1))); fail=$((fail + $(echo "$line" | cut -d' ' -f3)))
      else
        fail=$((fail + 1)); line="did not finish"; echo "FAIL the end-to-end run did not finish"
      fi
      ver=$(grep -m1 -E '^code-server [0-9]' "$e2e_out" | sed 's/ on Node.*//')
      runs+=("${ver:-code-server $cs}$nth: $line ($(( $(date +%s) - s ))s)")
      rm -f "$e2e_out"
    done
  done
  echo "== vscode: end-to-end runs"
  printf '  %s\n' "${runs[@]}"
fi

echo "vscode: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

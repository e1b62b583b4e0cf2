#!/usr/bin/env bash
# Every test of the VS Code extension: (a) type check, eslint, and unit
# tests in plain Node — the webview's rendering and state, and the
# extension-host side (client, commands, events, panels, review) against a
# fake of the vscode API (test/unit/fake/vscode.ts) — then (b) the
# end-to-end test in real VS Code (scripts/e2e.sh: code-server + Chromium +
# the real zot) on the oldest and the newest VS Code we test, both at once.
# The last line is "vscode: N passed, N failed"; the exit status is 1 when
# anything failed.
#
#   editors/vscode/scripts/test.sh            # both
#   editors/vscode/scripts/test.sh --unit     # (a) only
#   editors/vscode/scripts/test.sh --e2e      # (b) only
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
#      ZOT_E2E_SERIAL=1: the versions one after another (default: all at
#        once, each version's output printed when it ends),
#      and scripts/e2e.sh's (ZOT_BIN, ZOT_E2E_CACHE, ZOT_E2E_KEEP).
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE"

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error || exit 1
fi

pass=0 fail=0
unit=1 e2e=1
case "${1:-}" in
  --unit) e2e= ;;
  --e2e) unit= ;;
esac

unit_tests() {
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
}

# e2e_version CS BUNDLED: every run of one version, one after another;
# its output in $tmp/CS.out, a result line per run in $tmp/CS.runs and
# its pass/fail counts in $tmp/CS.count.
e2e_version() {
  local cs=$1 bundled=$2 i nth art line e2e_out s ver p=0 f=0
  for i in $(seq 1 "$repeat"); do
    nth= art=$HERE/test-artifacts/code-server-$cs
    if [ "$repeat" -gt 1 ]; then nth=", run $i of $repeat" art=$art/run-$i; fi
    echo "== vscode: end-to-end (Chromium + code-server $cs$nth; chat on $([ "$bundled" = 1 ] && echo "the bundled zot" || echo "zot.serverPath"))"
    e2e_out=$tmp/$cs-$i.out
    s=$(date +%s)
    ZOT_E2E_CODE_SERVER=$cs ZOT_E2E_ART=$art ZOT_E2E_BUNDLED=$bundled ZOT_E2E_PARTS=$tmp/parts bash scripts/e2e.sh > "$e2e_out" 2>&1
    cat "$e2e_out"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$e2e_out" | tail -1)
    if [ -n "$line" ]; then
      p=$((p + $(echo "$line" | cut -d' ' -f1))) f=$((f + $(echo "$line" | cut -d' ' -f3)))
    else
      f=$((f + 1)) line="did not finish"
      echo "FAIL the end-to-end run did not finish"
    fi
    ver=$(grep -m1 -E '^code-server [0-9]' "$e2e_out" | sed 's/ on Node.*//')
    echo "${ver:-code-server $cs}$nth: $line ($(( $(date +%s) - s ))s)" >> "$tmp/$cs.runs"
  done
  echo "$p $f" > "$tmp/$cs.count"
}
# start_e2e: the parts every run uses (the linux-x64 zot.vsix, the zot
# extensions the specs load), built once, then every version at once
# (ZOT_E2E_SERIAL=1: one after another, in finish_e2e): a run mostly
# waits on its browser and its scripted model, so two overlap well on two
# cores. Each run has its own code-server, Chromium, profile, workspace,
# ports, zot homes and copies of the parts; a version's output is
# printed whole when it ends.
start_e2e() {
  local cs bundled
  repeat=${E2E_REPEAT:-1}
  case "$repeat" in '' | *[!0-9]* | 0) echo "E2E_REPEAT must be a positive number, not '$repeat'"; exit 2 ;; esac
  versions=(${ZOT_E2E_CODE_SERVERS:-4.100.3 4.139.1})
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/zot-vscode-test.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "== vscode: end-to-end parts (zot.vsix, the specs' zot extensions)"
  if ! bash scripts/e2e.sh --parts "$tmp/parts"; then
    echo "FAIL building the end-to-end parts"
    echo "vscode: $pass passed, $((fail + 1)) failed"
    exit 1
  fi
  pids=() bundles=()
  for cs in "${versions[@]}"; do
    # The chat spec runs the package's own zot (no zot.serverPath, no zot
    # on PATH) on the newest VS Code, and zot.serverPath (which wins) on
    # the others; ZOT_E2E_BUNDLED, when set, decides for all.
    bundled=${ZOT_E2E_BUNDLED-}
    if [ -z "${ZOT_E2E_BUNDLED+set}" ] && [ "$cs" = "${versions[-1]}" ]; then bundled=1; fi
    bundles+=("$bundled")
    if [ "${ZOT_E2E_SERIAL:-}" != 1 ]; then
      echo "== vscode: end-to-end on code-server $cs started (its output follows when it ends)"
      e2e_version "$cs" "$bundled" > "$tmp/$cs.log" 2>&1 &
      pids+=($!)
    fi
  done
}
finish_e2e() {
  local i cs p f
  if [ "${ZOT_E2E_SERIAL:-}" = 1 ]; then
    for i in "${!versions[@]}"; do e2e_version "${versions[i]}" "${bundles[i]}"; done
  fi
  for p in "${pids[@]}"; do wait "$p"; done
  for cs in "${versions[@]}"; do
    [ "${ZOT_E2E_SERIAL:-}" = 1 ] || cat "$tmp/$cs.log"
    if [ -s "$tmp/$cs.count" ]; then
      read -r p f < "$tmp/$cs.count"
      pass=$((pass + p)) fail=$((fail + f))
    else
      fail=$((fail + 1))
      echo "code-server $cs: did not finish" >> "$tmp/$cs.runs"
    fi
  done
  echo "== vscode: end-to-end runs"
  for cs in "${versions[@]}"; do sed 's/^/  /' "$tmp/$cs.runs"; done
}

# The end-to-end runs start first and the unit tests run beside them.
[ -z "$e2e" ] || start_e2e
[ -z "$unit" ] || unit_tests
[ -z "$e2e" ] || finish_e2e

echo "vscode: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

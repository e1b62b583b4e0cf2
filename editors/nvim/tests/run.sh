#!/usr/bin/env bash
# Headless Neovim tests of editors/nvim against the real `zot lsp` and the
# scripted LLM (`zot mock-llm`).
#
#   editors/nvim/tests/run.sh [NAME ...]      # NAME: test_NAME.lua; default all
#
# Env: ZOT_BIN (default <repo>/bin/zot), NVIM (default nvim; install-nvim.sh
# fetches other versions), GO (default go; builds the example extensions the
# panel/notify tests use), ZOT_TEST_TRANSPORT (the plugin's `transport`
# option: "builtin" runs the suite on Neovim's own LSP transport).
# Prints one line per test and "N passed, N failed"; exits 1 on a failure.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
ZOT_BIN=${ZOT_BIN:-$REPO/bin/zot}
NVIM=${NVIM:-nvim}
GO=${GO:-go}

if [ ! -x "$ZOT_BIN" ]; then
  echo "zot binary not found at $ZOT_BIN (build it: go build -o bin/zot ./cmd/zot, or set ZOT_BIN)" >&2
  exit 2
fi
ZOT_BIN=$(cd "$(dirname "$ZOT_BIN")" && pwd)/$(basename "$ZOT_BIN")
if ! command -v "$NVIM" >/dev/null 2>&1; then
  echo "nvim not found (apt-get install -y --no-install-recommends neovim, or set NVIM)" >&2
  exit 2
fi
"$NVIM" --version | head -1
[ -n "${ZOT_TEST_TRANSPORT:-}" ] && echo "transport = \"$ZOT_TEST_TRANSPORT\""

WORK=$(mktemp -d "${TMPDIR:-/tmp}/zot-nvim-tests.XXXXXX")
LLM=
cleanup() {
  [ -n "$LLM" ] && kill "$LLM" 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

# The example extensions: todo (a panel) and servertest's lspext (notify);
# permission-gate, plan-mode, lint-on-write and capext (extension dialogs,
# status, widgets and hooks). The scripted LLM logs each request it gets to
# $ZOT_TEST_LLM_REQUESTS (what the model was told).
EXT=$WORK/ext
mkdir -p "$EXT/todo" "$EXT/lspext"
if command -v "$GO" >/dev/null 2>&1; then
  cp "$REPO/extensions/examples/todo/extension.json" "$EXT/todo/"
  (cd "$REPO/extensions/examples/todo" && "$GO" build -o "$EXT/todo/todo" .) || echo "warning: building the todo extension failed" >&2
  (cd "$REPO" && "$GO" build -o "$EXT/lspext/lspext" ./server/servertest/testdata/lspext) || echo "warning: building lspext failed" >&2
  printf '{"name":"lspext","version":"1.0.0","exec":"./lspext","description":"zot lsp test extension"}\n' > "$EXT/lspext/extension.json"
  mkdir -p "$EXT/capext"
  (cd "$REPO" && "$GO" build -o "$EXT/capext/capext" ./extensions/testdata/capext) || echo "warning: building capext failed" >&2
  printf '{"name":"capext","version":"1.0.0","exec":"./capext","description":"capabilities test extension"}\n' > "$EXT/capext/extension.json"
  for ex in permission-gate plan-mode lint-on-write; do
    mkdir -p "$EXT/$ex"
    cp "$REPO/extensions/examples/$ex/extension.json" "$EXT/$ex/"
    (cd "$REPO/extensions/examples/$ex" && "$GO" build -o "$EXT/$ex/$ex" .) || echo "warning: building $ex failed" >&2
  done
  # A redacting extension (test_redact): the host tests' fakeext,
  # intercepting assistant_message and replacing the secret.
  mkdir -p "$EXT/redactor"
  (cd "$REPO" && "$GO" build -o "$EXT/redactor/fakeext" ./extensions/testdata/fakeext) || echo "warning: building fakeext failed" >&2
  printf '{"name":"redactor","version":"1.0.0","exec":"./fakeext","args":["-name","redactor","-intercept","assistant_message","-replace","SECRET-4242=[redacted]"]}\n' > "$EXT/redactor/extension.json"
  # hookext (extensions/testdata): its /hookext-tree forks and navigates
  # the session tree (test_session_changed).
  mkdir -p "$EXT/hookext"
  (cd "$REPO" && "$GO" build -o "$EXT/hookext/hookext" ./extensions/testdata/hookext) || echo "warning: building hookext failed" >&2
  printf '{"name":"hookext","version":"1.0.0","exec":"./hookext","description":"conformance test extension"}\n' > "$EXT/hookext/extension.json"
  # The Go SDK fake MCP server (test_mcp).
  (cd "$REPO" && "$GO" build -o "$EXT/fakemcp" ./extensions/mcp/testdata/fakemcp) || echo "warning: building fakemcp failed" >&2
else
  echo "warning: $GO not found: the extension tests will fail" >&2
fi

tests=()
if [ $# -gt 0 ]; then
  for n in "$@"; do tests+=("$HERE/test_${n#test_}.lua"); done
else
  for t in "$HERE"/test_*.lua; do tests+=("$t"); done
fi

pass=0
fail=0
for t in "${tests[@]}"; do
  name=$(basename "$t" .lua)
  name=${name#test_}
  dir=$WORK/$name
  mkdir -p "$dir/ws" "$dir/tmp" "$dir/home" "$dir/xdg/data" "$dir/xdg/state"
  script=$HERE/$name.json
  [ -f "$script" ] || script=$HERE/default.json
  "$ZOT_BIN" mock-llm --script "$script" >"$dir/llm.url" 2>"$dir/llm.err" &
  LLM=$!
  url=
  for _ in $(seq 1 200); do
    url=$(head -1 "$dir/llm.url" 2>/dev/null)
    [ -n "$url" ] && break
    sleep 0.05
  done
  cp -r "$EXT/todo" "$dir/todo"
  start=$(date +%s%N)
  # XDG_*: the plugin's own files (zot.store) stay in the test's directory.
  (cd "$dir/ws" && env ZOT_HOME="$dir/home" XDG_DATA_HOME="$dir/xdg/data" XDG_STATE_HOME="$dir/xdg/state" ZOT_BIN="$ZOT_BIN" ZOT_TEST_URL="$url" ZOT_TEST_WS="$dir/ws" \
    ZOT_TEST_TMP="$dir/tmp" ZOT_TEST_NVIM="$NVIM" ZOT_TEST_TODO="$dir/todo" ZOT_TEST_LSPEXT="$EXT/lspext" ZOT_TEST_FAKEMCP="$EXT/fakemcp" \
    ZOT_TEST_GATE="$EXT/permission-gate" ZOT_TEST_PLAN="$EXT/plan-mode" ZOT_TEST_CAPEXT="$EXT/capext" \
    ZOT_TEST_LINT="$EXT/lint-on-write" ZOT_TEST_REDACTOR="$EXT/redactor" ZOT_TEST_HOOKEXT="$EXT/hookext" \
    ZOT_TEST_PIEXT="$REPO/extensions/testdata/piext/editors.ts" ZOT_PI_RUNTIME="$REPO/extensions/pi/runtime" \
    ZOT_TEST_NVIM="$(command -v "$NVIM")" \
    timeout 120 "$NVIM" --headless -u NONE -i NONE -n \
    -c "lua local ok,e=pcall(dofile,'$t'); if not ok then io.stderr:write(tostring(e)..'\n'); vim.cmd('cquit 1') end" \
    >"$dir/out" 2>&1)
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  kill "$LLM" 2>/dev/null
  wait "$LLM" 2>/dev/null
  LLM=
  # Processes the test saw (zot, extensions) must be gone once nvim exited.
  orphans=
  if [ -f "$dir/tmp/pids" ]; then
    while read -r pid what; do
      [ -z "$pid" ] && continue
      if kill -0 "$pid" 2>/dev/null && [ "$(ps -o stat= -p "$pid" | cut -c1)" != Z ]; then
        orphans="$orphans $what($pid)"
        kill "$pid" 2>/dev/null
      fi
    done <"$dir/tmp/pids"
  fi
  grep '^measure:' "$dir/out" | sed 's/^/    /'
  if [ $rc -eq 0 ] && grep -q '^PASS$' "$dir/out" && [ -z "$orphans" ]; then
    pass=$((pass + 1))
    echo "ok   $name (${ms} ms)"
  else
    fail=$((fail + 1))
    why="exit $rc"
    [ $rc -eq 124 ] && why="timed out"
    [ -n "$orphans" ] && why="$why; still running after nvim exited:$orphans"
    echo "FAIL $name ($why, ${ms} ms)"
    tail -n 60 "$dir/out" | sed 's/^/    /'
  fi
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

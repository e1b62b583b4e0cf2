#!/usr/bin/env bash
# Editors nobody here wrote, as plain LSP clients of the real `zot lsp`,
# headless, against the scripted LLM (`zot mock-llm`): Neovim's built-in
# client without zot's plugin (nvim_*.lua) and Emacs eglot (eglot_*.el).
#
#   test/lspclients/run.sh [NAME ...]     # NAME: nvim_x or eglot_x; default all
#
# Env: ZOT_BIN (default <repo>/bin/zot); NVIMS, the Neovims to run the
# nvim_ tests on (space separated; default: install-nvim.sh's trixie and
# unstable, 0.10.x and the newest); EMACS (default emacs).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
ZOT_BIN=${ZOT_BIN:-$REPO/bin/zot}
EMACS=${EMACS:-emacs}
if [ ! -x "$ZOT_BIN" ]; then
  echo "zot binary not found at $ZOT_BIN (make build, or set ZOT_BIN)" >&2
  exit 2
fi
ZOT_BIN=$(cd "$(dirname "$ZOT_BIN")" && pwd)/$(basename "$ZOT_BIN")
if [ -z "${NVIMS:-}" ]; then
  NVIMS="$("$REPO/editors/nvim/tests/install-nvim.sh" trixie) $("$REPO/editors/nvim/tests/install-nvim.sh" unstable)" || {
    echo "installing Neovim 0.10 and the newest failed (editors/nvim/tests/install-nvim.sh)" >&2
    exit 2
  }
fi
command -v curl >/dev/null || { echo "curl not found (apt-get install -y curl)" >&2; exit 2; }
command -v "$EMACS" >/dev/null || { echo "emacs not found (apt-get install -y emacs-nox elpa-eglot)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/zot-lspclients.XXXXXX")
LLM=
cleanup() {
  [ -n "$LLM" ] && kill "$LLM" 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

tests=()
if [ $# -gt 0 ]; then
  for n in "$@"; do
    for f in "$HERE/$n.lua" "$HERE/$n.el"; do [ -f "$f" ] && tests+=("$f"); done
  done
else
  for t in "$HERE"/nvim_*.lua "$HERE"/eglot_*.el; do tests+=("$t"); done
fi

pass=0
fail=0
n=0
# run NAME SCRIPT CMD...: one test against a fresh scripted LLM and workspace.
run() {
  local name=$1 script=$2
  shift 2
  n=$((n + 1))
  local dir=$WORK/$n
  mkdir -p "$dir/ws" "$dir/home"
  "$ZOT_BIN" mock-llm --script "$script" >"$dir/llm.url" 2>"$dir/llm.err" &
  LLM=$!
  local url=
  for _ in $(seq 1 200); do
    url=$(head -1 "$dir/llm.url" 2>/dev/null)
    [ -n "$url" ] && break
    sleep 0.05
  done
  (cd "$dir/ws" && env ZOT_HOME="$dir/home" HOME="$dir/home" XDG_CONFIG_HOME="$dir/home/.config" ZOT_BIN="$ZOT_BIN" \
    ZOT_TEST_URL="$url" ZOT_TEST_WS="$dir/ws" timeout 120 "$@" >"$dir/out" 2>&1)
  local rc=$?
  kill "$LLM" 2>/dev/null
  wait "$LLM" 2>/dev/null
  LLM=
  # zot lsp must be gone once the editor has exited.
  local left
  left=$(pgrep -f "$ZOT_BIN lsp .*--base-url $url( |$)" || true)
  if [ $rc -eq 0 ] && grep -q '^PASS$' "$dir/out" && [ -z "$left" ]; then
    pass=$((pass + 1))
    echo "ok   $name"
  else
    fail=$((fail + 1))
    local why="exit $rc"
    [ $rc -eq 124 ] && why="timed out"
    [ -n "$left" ] && { why="$why; zot lsp still running: $left"; kill $left 2>/dev/null; }
    echo "FAIL $name ($why)"
    tail -n 60 "$dir/out" | sed 's/^/    /'
  fi
}

for t in "${tests[@]}"; do
  base=$(basename "$t")
  name=${base%.*}
  script=$HERE/$name.json
  case $base in
    nvim_*)
      for nv in $NVIMS; do
        ver=$("$nv" --version | head -1)
        run "$name ($ver)" "$script" "$nv" --headless -u NONE -i NONE -n \
          -c "lua local ok,e=pcall(dofile,'$t'); if not ok then io.stdout:write(tostring(e)..'\n'); vim.cmd('cquit 1') end"
      done
      ;;
    eglot_*)
      ver=$("$EMACS" --version | head -1)
      run "$name ($ver)" "$script" "$EMACS" --batch -q -l "$t"
      ;;
  esac
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]

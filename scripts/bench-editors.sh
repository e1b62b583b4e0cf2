#!/usr/bin/env bash
# make bench-editors: Enter → first token painted, in the real editors,
# against the scripted model (`zot mock-llm`, no latency), and the CPU each
# side spends per prompt. Not a test: it prints numbers, it judges nothing.
#
#   scripts/bench-editors.sh                      # Neovim and VS Code
#   ZOT_BENCH_EDITORS=nvim scripts/bench-editors.sh
#
# Neovim (editors/nvim/tests/bench_first_token.lua): nvim --clean with its
# TUI in a pseudo-terminal (script(1)), so redraws happen as for a user;
# :ZotPrompt → the first text_delta handled → the chat buffer changed →
# the end of the chat window's next redraw ("painted"), vim.loop.hrtime.
# VS Code (editors/vscode/test/e2e/bench.e2e.js via scripts/e2e.sh,
# ZOT_E2E_SPECS=bench): code-server + Chromium; Enter in the chat's input →
# the answer's first text in the webview's DOM (a MutationObserver) → the
# next animation frame after it ("painted"), both in the webview's clock;
# CPU of the webview's renderer, the extension host and zot from
# /proc/PID/stat.
# Both: the floor is a bare socket posting a model request to the same
# mock and reading its first byte; WARM prompts first, then N measured;
# median and p95.
#
# Env: ZOT_BIN (default bin/zot), ZOT_BENCH_N (20), ZOT_BENCH_WARM (3),
#      ZOT_BENCH_EDITORS ("nvim vscode"),
#      ZOT_BENCH_NVIMS ("nvim unstable": nvim is the one on PATH, another
#        word a Debian suite for editors/nvim/tests/install-nvim.sh, or a path),
#      ZOT_BENCH_CODE_SERVERS ("4.100.3 4.139.1"), ZOT_BENCH_KEEP=1 keeps the
#        temp dir (results, logs), ZOT_BENCH_ZOT_ARGS (VS Code: zot's extra
#        arguments, a JSON array, e.g. '["--no-checkpoints"]'),
#        ZOT_BENCH_PROFILE=1 / ZOT_BENCH_TRACE=1 (VS Code: profiles, a
#        trace; see bench.e2e.js).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ZOT_BIN=${ZOT_BIN:-$REPO/bin/zot}
export ZOT_BENCH_N=${ZOT_BENCH_N:-20} ZOT_BENCH_WARM=${ZOT_BENCH_WARM:-3}
[ -x "$ZOT_BIN" ] || { echo "bench-editors: no zot at $ZOT_BIN (make build, or set ZOT_BIN)" >&2; exit 2; }
ZOT_BIN=$(cd "$(dirname "$ZOT_BIN")" && pwd)/$(basename "$ZOT_BIN")
W=$(mktemp -d "${TMPDIR:-/tmp}/zot-bench-editors.XXXXXX")
LLM=
cleanup() {
  [ -n "$LLM" ] && kill "$LLM" 2>/dev/null && wait "$LLM" 2>/dev/null
  if [ "${ZOT_BENCH_KEEP:-}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT

# The answer every prompt gets (the first delta has the word the
# benchmarks look for: Hello).
cat > "$W/script.json" <<'JSON'
{"loop": true, "replies": [{"deltas": ["Hello", " there", ", this", " is", " a", " short", " answer", ".\n", "Second", " line", "."]}]}
JSON

# report NAME JSON: one line of medians and p95s from a result file.
report() {
  node -e '
const [name, file] = process.argv.slice(1);
const r = JSON.parse(require("fs").readFileSync(file, "utf8"));
if (r.error) { console.log(`${name}: FAILED: ${r.error}`); process.exit(1); }
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const f = (x) => x.toFixed(1);
const col = (k) => r.prompts.map((p) => p[k]);
const line = (k) => `${f(q(col(k), 0.5))} (${f(q(col(k), 0.95))})`;
const fl = `${f(q(r.floor, 0.5))} (${f(q(r.floor, 0.95))})`;
const over = f(q(col("paint"), 0.5) - q(r.floor, 0.5));
const cpu = Object.entries(r.cpu).map(([k, v]) => `${k.replace(/_ms$/, "")} ${f(v)}`).join(", ");
// VS Code: the client (renderers + extension host) against zot, and what
// the same processes spend idle over as long as a prompt took.
const client = r.cpu.zot_ms !== undefined && r.cpu.extension_host_ms !== undefined ? r.cpu.webview_renderer_ms + r.cpu.extension_host_ms : undefined;
const ratio = client !== undefined ? `; client ${f(client)} = ${f(client / r.cpu.zot_ms)}× zot` : "";
const idle = r.idle_cpu ? `\n  idle over as long (${f(r.prompt_ms)} ms a prompt): ` + Object.entries(r.idle_cpu).map(([k, v]) => `${k.replace(/_ms$/, "")} ${f(v)}`).join(", ") : "";
console.log(`${name}, ${r.prompts.length} prompts after ${r.warm} warm-ups, ms median (p95):`);
console.log(`  Enter → first token painted ${line("paint")}   floor ${fl}   painted − floor ${over}`);
console.log(`  ` + r.marks.map((k) => `${k} ${line(k)}`).join("   "));
console.log(`  CPU per prompt, ms: ${cpu}${ratio}${idle}`);
' "$1" "$2"
}

rc=0
for ed in ${ZOT_BENCH_EDITORS:-nvim vscode}; do
  case "$ed" in
    nvim)
      for v in ${ZOT_BENCH_NVIMS:-nvim unstable}; do
        case "$v" in
          nvim) nv=$(command -v nvim) || { echo "bench-editors: no nvim on PATH" >&2; rc=1; continue; } ;;
          */*) nv=$v ;;
          *) nv=$("$REPO/editors/nvim/tests/install-nvim.sh" "$v") || { rc=1; continue; } ;;
        esac
        d=$W/nvim-$(basename "$(dirname "$nv")")-$RANDOM
        mkdir -p "$d/ws" "$d/home"
        echo "# notes" > "$d/ws/notes.md"
        "$ZOT_BIN" mock-llm --script "$W/script.json" > "$d/llm.url" 2> "$d/llm.err" &
        LLM=$!
        for _ in $(seq 1 100); do [ -s "$d/llm.url" ] && break; sleep 0.05; done
        # The TUI in a pseudo-terminal of 50x160; its output is dropped.
        # Neovim >= 0.9: a headless nvim with the TUI attached as a remote
        # UI (install-nvim.sh's wrapper runs nvim through a loader, which
        # the TUI cannot re-exec as its --embed server); older: nvim with
        # its TUI. The bench waits for the UI before the first prompt.
        lua="$REPO/editors/nvim/tests/bench_first_token.lua"
        (cd "$d/ws" && export ZOT_HOME="$d/home" XDG_DATA_HOME="$d/xdg" XDG_STATE_HOME="$d/xdg" ZOT_BIN="$ZOT_BIN" \
          ZOT_BENCH_URL="$(head -1 "$d/llm.url")" ZOT_BENCH_WS="$d/ws" ZOT_BENCH_OUT="$d/out.json" TERM=xterm-256color NVIM_BIN="$nv" \
          SOCK="$d/nvim.sock" LUA="$lua" &&
          if "$nv" --clean --headless -c 'if has("nvim-0.9") | qall! | else | cquit 1 | endif' >/dev/null 2>&1; then
            timeout 600 "$nv" --clean --headless -i NONE -n --listen "$SOCK" -c "luafile $lua" > "$d/server.out" 2>&1 &
            srv=$!
            for _ in $(seq 1 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
            timeout 600 script -qfec 'stty rows 50 cols 160; "$NVIM_BIN" --remote-ui --server "$SOCK"' /dev/null > "$d/tui.out" 2>&1
            wait "$srv"
          else
            timeout 600 script -qfec 'stty rows 50 cols 160; "$NVIM_BIN" --clean -i NONE -n -c "luafile $LUA"' /dev/null > "$d/tui.out" 2>&1
          fi)
        kill "$LLM" 2>/dev/null; wait "$LLM" 2>/dev/null; LLM=
        if [ -s "$d/out.json" ]; then
          ver=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1])).nvim' "$d/out.json")
          report "Neovim $ver" "$d/out.json" || rc=1
        else
          echo "Neovim ($nv): no result (the TUI's last output follows)"; tail -c 2000 "$d/tui.out" | tr -d '\033' | tail -5; rc=1
        fi
      done
      ;;
    vscode)
      for cs in ${ZOT_BENCH_CODE_SERVERS:-4.100.3 4.139.1}; do
        d=$W/vscode-$cs
        mkdir -p "$d"
        ZOT_BIN="$ZOT_BIN" ZOT_E2E_CODE_SERVER=$cs ZOT_E2E_SPECS=bench ZOT_E2E_ART="$d" ZOT_E2E_BENCH_SCRIPT="$W/script.json" \
          SPEC_ZOT_ARGS="${ZOT_BENCH_ZOT_ARGS:-[]}" \
          bash "$REPO/editors/vscode/scripts/e2e.sh" > "$d/e2e.out" 2>&1 || true
        if [ -s "$d/bench.json" ]; then
          report "$(grep -m1 -E '^code-server [0-9]' "$d/e2e.out" | sed 's/ on Node.*//')" "$d/bench.json" || rc=1
        else
          echo "code-server $cs: no result (the end of its output follows)"; tail -20 "$d/e2e.out"; rc=1
        fi
      done
      ;;
    *) echo "bench-editors: unknown editor $ed (nvim, vscode)" >&2; exit 2 ;;
  esac
done
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc

#!/usr/bin/env bash
# End-to-end test of the VS Code extension in real VS Code: code-server
# 4.100.3 (browser VS Code) driven by Playwright in Debian's Chromium,
# with the real `zot lsp` talking to the scripted LLM (`zot mock-llm`)
# and the example extension `todo` for an extension panel.
#
#   editors/vscode/scripts/e2e.sh
#
# Env: ZOT_BIN (default <repo>/bin/zot, built if missing),
#      ZOT_E2E_CACHE (default ~/.cache/zot-vscode-e2e: code-server lives here),
#      ZOT_E2E_KEEP=1 keeps the temp dir (logs, workspace) for a look.
# Installs what is missing (needs root for apt): chromium, and code-server's
# build deps (libkrb5-dev pkg-config ripgrep). Screenshots and logs go to
# editors/vscode/test-artifacts/. Prints "N passed, N failed"; exits 1 on
# failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CS_VERSION=4.100.3
CACHE=${ZOT_E2E_CACHE:-$HOME/.cache/zot-vscode-e2e}
CS_DIR=$CACHE/code-server-$CS_VERSION
CS=$CS_DIR/node_modules/.bin/code-server
ART=$HERE/test-artifacts
ZOT_BIN=${ZOT_BIN:-$REPO/bin/zot}

log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
t0=$(date +%s)

# ---------------------------------------------------------------- system packages
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
if [ ! -x "$CS" ]; then
  command -v rg >/dev/null || need_apt+=(ripgrep)
  dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
  command -v pkg-config >/dev/null || need_apt+=(pkg-config)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  if [ "$(id -u)" != 0 ]; then
    echo "e2e: needs ${need_apt[*]} (run as root, or install them)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# ---------------------------------------------------------------- code-server (cached)
if [ ! -x "$CS" ]; then
  log "installing code-server $CS_VERSION into $CS_DIR (once)"
  # @vscode/ripgrep's postinstall downloads rg: seed its cache with Debian's.
  RGC=${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11
  mkdir -p "$RGC"
  tar czf "$RGC/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  rm -rf "$CS_DIR.tmp" && mkdir -p "$CS_DIR.tmp"
  (cd "$CS_DIR.tmp" && echo '{"name":"zot-e2e-code-server","private":true}' > package.json &&
    npm_config_unsafe_perm=true npm_config_yes=true npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" >&2)
  rm -rf "$CS_DIR" && mv "$CS_DIR.tmp" "$CS_DIR"
fi

# ---------------------------------------------------------------- the extension, zot, the todo extension
cd "$HERE"
[ -d node_modules ] || { log "npm ci"; npm ci --no-audit --no-fund --loglevel=error >&2; }
log "packaging zot.vsix"
npx --no-install vsce package --no-dependencies --allow-missing-repository --skip-license -o zot.vsix >/dev/null

if [ ! -x "$ZOT_BIN" ]; then
  log "building $ZOT_BIN"
  (cd "$REPO" && go build -o "$ZOT_BIN" ./cmd/zot)
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/zot-vscode-e2e.XXXXXX")
PIDS=()
cleanup() {
  local code=$?
  for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  mkdir -p "$ART"
  cp "$W"/*.log "$ART/" 2>/dev/null || true
  find "$W/ud/logs" -name '*.log' -path '*exthost*' -exec sh -c 'cp "$1" "$2/exthost-$(basename "$(dirname "$1")")-$(basename "$1")"' _ {} "$ART" \; 2>/dev/null || true
  if [ "${ZOT_E2E_KEEP:-}" = 1 ]; then log "kept $W"; else rm -rf "$W"; fi
  exit $code
}
trap cleanup EXIT

log "building the todo extension"
mkdir -p "$W/todo"
cp "$REPO/extensions/examples/todo/extension.json" "$W/todo/"
(cd "$REPO/extensions/examples/todo" && go build -o "$W/todo/todo" .)

# ---------------------------------------------------------------- the scripted LLM
cp "$HERE/test/e2e/llm-script.json" "$W/script.json"
setsid "$ZOT_BIN" mock-llm --script "$W/script.json" > "$W/mock-llm.url" 2> "$W/mock-llm.log" &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$W/mock-llm.url" ] && break; sleep 0.1; done
LLM_URL=$(head -n1 "$W/mock-llm.url")
[ -n "$LLM_URL" ] || { echo "e2e: zot mock-llm printed no URL" >&2; cat "$W/mock-llm.log" >&2; exit 1; }
log "scripted LLM at $LLM_URL"

# ---------------------------------------------------------------- VS Code profile and workspace
mkdir -p "$W/ud/User" "$W/exts" "$W/ws" "$W/zothome" "$ART"
rm -f "$ART"/*.png "$ART"/*.log
printf 'hello world\n' > "$W/ws/hello.txt"
node -e '
const [file, zot, url, todo, home] = process.argv.slice(1);
require("fs").writeFileSync(file, JSON.stringify({
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "security.workspace.trust.enabled": false,
  "chat.commandCenter.enabled": false,
  "zot.serverPath": zot,
  "zot.serverArgs": ["--base-url", url, "--api-key", "test-key"],
  "zot.serverEnv": { "ZOT_HOME": home },
  "zot.extensions": [todo],
  "zot.trace.server": "messages",
}, null, 2));
' "$W/ud/User/settings.json" "$ZOT_BIN" "$LLM_URL" "$W/todo" "$W/zothome"

export XDG_CONFIG_HOME=$W/xdg-config XDG_DATA_HOME=$W/xdg-data
CSARGS=(--user-data-dir "$W/ud" --extensions-dir "$W/exts")
log "installing zot.vsix"
"$CS" "${CSARGS[@]}" --install-extension "$HERE/zot.vsix" > "$W/install.log" 2>&1 || { cat "$W/install.log" >&2; exit 1; }

PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
setsid "$CS" "${CSARGS[@]}" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry --disable-update-check \
  --disable-workspace-trust --disable-getting-started-override "$W/ws" > "$W/code-server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" || { echo "e2e: code-server did not start" >&2; cat "$W/code-server.log" >&2; exit 1; }
log "code-server on port $PORT (setup took $(( $(date +%s) - t0 ))s)"

# ---------------------------------------------------------------- Playwright
# (its last line is "N passed, N failed")
CS_URL="http://127.0.0.1:$PORT/?folder=$W/ws" WS="$W/ws" ART="$ART" ZOT_BIN="$ZOT_BIN" \
  timeout 600 node "$HERE/test/e2e/chat.e2e.js"

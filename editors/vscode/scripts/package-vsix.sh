#!/usr/bin/env bash
# The platform-specific VS Code packages: one .vsix per target, each
# carrying its own zot in bin/ (bin/zot.exe on Windows), built with
# GOOS/GOARCH from this repository, and bin/pi-runtime/ beside it (the
# Node runtime that hosts pi extensions, with the node_modules its
# lockfile pins: zot finds it beside its binary, and the extension names
# it in $ZOT_PI_RUNTIME for any other zot; nothing is fetched at run
# time). The extension runs zot.serverPath if set, else that bundled zot,
# else `zot` on PATH (src/config.ts).
#
#   editors/vscode/scripts/package-vsix.sh              # all six targets
#   editors/vscode/scripts/package-vsix.sh linux-x64    # some
#
# Env: OUT (default <repo>/bin/vsix): where the packages go, named
#        zot-vscode-<target>-<version>.vsix;
#      ZOT_VSIX_BIN: a zot already built for the (one) target, bundled
#        instead of building one (the end-to-end test passes its own);
#      GO (default go).
# Prints the path of each package it wrote.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$REPO/bin/vsix}
GO=${GO:-go}
ALL=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL[@]}")
if [ -n "${ZOT_VSIX_BIN:-}" ] && [ ${#targets[@]} -ne 1 ]; then
  echo "package-vsix: ZOT_VSIX_BIN is one binary: name one target, not ${targets[*]}" >&2
  exit 2
fi

cd "$HERE"
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error >&2
version=$(node -p 'require("./package.json").version')
commit=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# bin/ is the staging directory vsce packs (.vscodeignore lets bin/zot and
# bin/zot.exe in): one packaging at a time per checkout.
exec 9>"$HERE/.package-vsix.lock"
flock 9
trap 'rm -rf "$HERE/bin"' EXIT

for t in "${targets[@]}"; do
  case $t in
    linux-x64) goos=linux goarch=amd64 ;;
    linux-arm64) goos=linux goarch=arm64 ;;
    darwin-x64) goos=darwin goarch=amd64 ;;
    darwin-arm64) goos=darwin goarch=arm64 ;;
    win32-x64) goos=windows goarch=amd64 ;;
    win32-arm64) goos=windows goarch=arm64 ;;
    *) echo "package-vsix: unknown target $t (one of ${ALL[*]})" >&2; exit 2 ;;
  esac
  exe=zot; [ $goos = windows ] && exe=zot.exe
  rm -rf bin && mkdir bin
  if [ -n "${ZOT_VSIX_BIN:-}" ]; then
    cp "$ZOT_VSIX_BIN" "bin/$exe"
  else
    echo "package-vsix: go build ./cmd/zot for $goos/$goarch" >&2
    (cd "$REPO" && GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 "$GO" build -trimpath \
      -ldflags "-s -w -X github.com/zot-editors/zot/agent.Version=$version -X main.commit=$commit" \
      -o "$HERE/bin/$exe" ./cmd/zot)
  fi
  chmod 755 "bin/$exe"
  # The pi runtime: its tracked files and its pinned node_modules (no CLI
  # shims: symlinks a .vsix cannot hold, and not needed to load it).
  rt=$REPO/extensions/pi/runtime
  [ -d "$rt/node_modules" ] || (cd "$rt" && npm ci --no-audit --no-fund --loglevel=error >&2)
  mkdir -p bin/pi-runtime
  git -C "$REPO" ls-files -z extensions/pi/runtime | while IFS= read -r -d '' f; do
    rel=${f#extensions/pi/runtime/}
    mkdir -p "bin/pi-runtime/$(dirname "$rel")"
    cp "$REPO/$f" "bin/pi-runtime/$rel"
  done
  cp -R "$rt/node_modules" bin/pi-runtime/node_modules
  rm -rf bin/pi-runtime/node_modules/.bin bin/pi-runtime/node_modules/.package-lock.json
  vsix=$OUT/zot-vscode-$t-$version.vsix
  npx --no-install vsce package --target "$t" --no-dependencies --allow-missing-repository --skip-license -o "$vsix" >&2
  # The package holds its zot and the pi runtime with every package its
  # lockfile pins (a missing .vscodeignore entry would drop them silently).
  python3 - "$vsix" "extension/bin/$exe" "$rt/package-lock.json" <<'PY' || exit 1
import json, sys, zipfile
vsix, name, lockfile = sys.argv[1:]
names = set(zipfile.ZipFile(vsix).namelist())
want = [name, "extension/bin/pi-runtime/host.js"]
for key, meta in json.load(open(lockfile)).get("packages", {}).items():
    if key.startswith("node_modules/") and not meta.get("dev"):
        want.append("extension/bin/pi-runtime/%s/package.json" % key)
for w in want:
    if w not in names:
        sys.exit("package-vsix: %s has no %s" % (vsix, w))
PY
  echo "$vsix"
done

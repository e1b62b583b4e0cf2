#!/usr/bin/env bash
# Builds zot's release archives: zot for linux, darwin and windows × amd64
# and arm64 (CGO off, -trimpath, version/commit/date stamped with -ldflags
# -X, file times from the commit), one archive per platform holding zot
# (zot.exe on Windows), README.md and pi-runtime/ (the Node runtime that
# hosts pi extensions, with its pinned node_modules: zot finds it beside
# its binary, so nothing is fetched at run time) — tar.gz, zip on
# Windows — and checksums.txt (SHA-256) and metadata.json. Nothing is
# published. The runtime's node_modules come from `make pi-runtime`
# (npm ci from its lockfile; run here if missing).
#
#   scripts/release.sh [DIST]          # default dist/; version from the last tag
#   ZOT_RELEASE_VERSION=1.2.3 scripts/release.sh
#
# The version is ZOT_RELEASE_VERSION when set; else, at a commit tagged
# vX.Y.Z, X.Y.Z; else the last tag's patch + 1 with "-snapshot"
# (0.0.1-snapshot with no tag). Reproducible: the same commit gives the
# same bytes (sorted entries, owner 0, times from the commit, gzip -n).
# Why not goreleaser: docs/decisions.md, "Releases".
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
dist=${1:-dist}
targets=${RELEASE_TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}

commit=$(git rev-parse HEAD)
ts=$(git log -1 --format=%ct HEAD)
date=$(date -u -d "@$ts" +%Y-%m-%dT%H:%M:%SZ)
if [ -n "${ZOT_RELEASE_VERSION:-}" ]; then
  version=${ZOT_RELEASE_VERSION#v}
elif tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null); then
  version=${tag#v}
else
  last=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null || echo v0.0.0)
  IFS=. read -r major minor patch <<<"${last#v}"
  patch=${patch%%[-+]*}
  version="$major.$minor.$((patch + 1))-snapshot"
fi
case $version in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) echo "release: version \"$version\" is not X.Y.Z[-suffix]" >&2; exit 1 ;;
esac

rm -rf "$dist"
mkdir -p "$dist"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The pi runtime, staged once: its tracked files and its node_modules as
# the lockfile pins them (pure JavaScript: the same for every platform).
rt=extensions/pi/runtime
if [ ! -d "$rt/node_modules" ]; then
  echo "release: npm ci in $rt (its pinned node_modules)"
  (cd "$rt" && npm ci --no-audit --no-fund --loglevel=error)
fi
pirt=$work/pi-runtime
mkdir -p "$pirt"
git ls-files -z "$rt" | while IFS= read -r -d '' f; do
  mkdir -p "$pirt/$(dirname "${f#"$rt"/}")"
  cp "$f" "$pirt/${f#"$rt"/}"
done
cp -R "$rt/node_modules" "$pirt/node_modules"
# npm's record of the tree and the CLI shims (symlinks): not needed to load it.
rm -rf "$pirt/node_modules/.package-lock.json" "$pirt/node_modules/.bin"
find "$pirt" -type d -exec chmod 755 {} + ; find "$pirt" -type f -exec chmod 644 {} +
find "$pirt" -exec touch -h -d "@$ts" {} +
ldflags="-s -w -X github.com/zot-editors/zot/agent.Version=$version -X main.commit=$commit -X main.date=$date"
archives=()
for t in $targets; do
  os=${t%/*} arch=${t#*/}
  name=zot_${version}_${os}_${arch}
  bin=zot; [ "$os" = windows ] && bin=zot.exe
  d=$work/$name
  mkdir -p "$d"
  echo "release: go build ./cmd/zot ($os/$arch)"
  GOOS=$os GOARCH=$arch CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" -o "$d/$bin" ./cmd/zot
  cp README.md "$d/README.md"
  cp -R "$pirt" "$d/pi-runtime"
  touch -d "@$ts" "$d/$bin" "$d/README.md"
  if [ "$os" = windows ]; then
    a=$name.zip
    python3 - "$d" "$dist/$a" "$ts" "$bin" <<'PY'
import os, sys, time, zipfile
src, out, ts, binary = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
when = time.gmtime(ts)[:6]
files = [binary, "README.md"]
for root, dirs, names in os.walk(os.path.join(src, "pi-runtime")):
    files += [os.path.relpath(os.path.join(root, n), src).replace(os.sep, "/") for n in names]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(files):
        info = zipfile.ZipInfo(f, when)
        info.external_attr = (0o755 if f == binary else 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(os.path.join(src, f), "rb") as fh:
            z.writestr(info, fh.read())
PY
  else
    a=$name.tar.gz
    chmod 755 "$d/$bin"; chmod 644 "$d/README.md"
    tar --sort=name --mtime="@$ts" --owner=0 --group=0 --numeric-owner -C "$d" -cf - "$bin" README.md pi-runtime | gzip -n -9 >"$dist/$a"
  fi
  archives+=("$a")
done
(cd "$dist" && sha256sum "${archives[@]}" >checksums.txt)
printf '{"project_name":"zot","version":"%s","commit":"%s","date":"%s"}\n' "$version" "$commit" "$date" >"$dist/metadata.json"
echo "release: ${#archives[@]} archives, checksums.txt and metadata.json in $dist (version $version)"

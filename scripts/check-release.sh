#!/usr/bin/env bash
# Checks scripts/release.sh's output (make release-snapshot): one archive per
# platform — linux, darwin, windows × amd64, arm64; zip on Windows — each
# holding the zot binary for that platform and the README; checksums.txt
# listing exactly those archives with their true SHA-256; each archive's
# pi-runtime/ (host.js and node_modules at the versions its lockfile pins);
# the Linux binary reporting the release's version and commit (`zot
# version`) and, with node on PATH, loading a pi extension with the
# runtime beside it (nothing named by $ZOT_PI_RUNTIME, nothing fetched).
set -euo pipefail
dist=${1:-dist}
fail() { echo "check-release: $*" >&2; exit 1; }
[ -f "$dist/checksums.txt" ] || fail "$dist/checksums.txt is missing"
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$dist/metadata.json" | head -1)
[ -n "$version" ] || fail "no version in $dist/metadata.json"
commit=$(git rev-parse HEAD)

want=()
for os in linux darwin windows; do
  for arch in amd64 arm64; do
    ext=tar.gz; [ $os = windows ] && ext=zip
    want+=("zot_${version}_${os}_${arch}.${ext}")
  done
done

# Exactly the six archives are listed, each with its real digest.
listed=$(awk '{print $2}' "$dist/checksums.txt" | sort)
expected=$(printf '%s\n' "${want[@]}" | sort)
[ "$listed" = "$expected" ] || fail "checksums.txt lists:
$listed
want:
$expected"
(cd "$dist" && sha256sum --quiet -c checksums.txt) || fail "a checksum in checksums.txt does not match its archive"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for a in "${want[@]}"; do
  name=${a%.zip}; name=${name%.tar.gz}
  d="$tmp/$name"; mkdir -p "$d"
  case $a in
    *.zip) python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$dist/$a" "$d"; bin=zot.exe ;;
    *) tar -xzf "$dist/$a" -C "$d"; bin=zot ;;
  esac
  [ -f "$d/$bin" ] || fail "$a has no $bin"
  [ -f "$d/README.md" ] || fail "$a has no README.md"
  [ -f "$d/pi-runtime/host.js" ] || fail "$a has no pi-runtime/host.js (the pi extensions' runtime)"
  # Every package the runtime's lockfile pins is there, at that version.
  python3 - "$d/pi-runtime" "$a" <<'PY' || exit 1
import json, os, sys
rt, archive = sys.argv[1:]
lock = json.load(open(os.path.join(rt, "package-lock.json")))
for key, meta in lock.get("packages", {}).items():
    if not key.startswith("node_modules/") or meta.get("dev"):
        continue
    pj = os.path.join(rt, key, "package.json")
    if not os.path.exists(pj):
        sys.exit("check-release: %s has no pi-runtime/%s (pinned by its package-lock.json)" % (archive, key))
    got = json.load(open(pj)).get("version")
    if got != meta.get("version"):
        sys.exit("check-release: %s has pi-runtime/%s %s, the lockfile pins %s" % (archive, key, got, meta.get("version")))
PY
  # The binary is for the archive's platform (read from its header).
  kind=$(python3 - "$d/$bin" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read(4096)
if b[:4] == b'\x7fELF':
    m = struct.unpack_from('<H', b, 18)[0]
    print('linux', {0x3e: 'amd64', 0xb7: 'arm64'}.get(m, hex(m)))
elif b[:4] in (b'\xcf\xfa\xed\xfe',):
    c = struct.unpack_from('<I', b, 4)[0]
    print('darwin', {0x01000007: 'amd64', 0x0100000c: 'arm64'}.get(c, hex(c)))
elif b[:2] == b'MZ':
    pe = struct.unpack_from('<I', b, 0x3c)[0]
    m = struct.unpack_from('<H', b, pe + 4)[0]
    print('windows', {0x8664: 'amd64', 0xaa64: 'arm64'}.get(m, hex(m)))
else:
    print('unknown', b[:4].hex())
PY
)
  want_kind="$(echo "$name" | awk -F_ '{print $(NF-1), $NF}')"
  [ "$kind" = "$want_kind" ] || fail "$a holds a $kind binary, want $want_kind"
done

# The host's binary knows its version and commit.
host="$tmp/zot_${version}_linux_amd64/zot"
if [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ]; then
  out=$("$host" version)
  case $out in
    "zot $version (commit ${commit:0:12}, built "*) ;;
    *) fail "zot version printed \"$out\", want \"zot $version (commit ${commit:0:12}, built …)\"" ;;
  esac
fi
# The binary finds the pi runtime beside it and runs a pi extension with
# it: `zot ext list --probe` starts the module and lists its tool.
if [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] && command -v node >/dev/null; then
  h="$tmp/home"; mkdir -p "$h/extensions/relcheck"
  cat >"$h/extensions/relcheck/index.ts" <<'TS'
import { Type } from "@sinclair/typebox";
export default function (pi: any) {
  pi.registerTool({ name: "relcheck_tool", label: "Check", description: "release check",
    parameters: Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });
}
TS
  out=$(cd "$tmp" && env -u ZOT_PI_RUNTIME ZOT_HOME="$h" ZOT_PI_HOME="$tmp/nohome" ZOT_SEP_HOME="$tmp/nohome" "$host" ext list --probe 2>&1) ||
    fail "zot ext list --probe failed: $out"
  case $out in
    *"tools: relcheck_tool"*) ;;
    *) fail "the release's zot did not load a pi extension with its bundled runtime:
$out" ;;
  esac
fi
echo "check-release: ${#want[@]} archives and checksums.txt are right (version $version)"

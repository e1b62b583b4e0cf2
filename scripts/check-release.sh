#!/usr/bin/env bash
# Checks scripts/release.sh's output (make release-snapshot): one archive per
# platform — linux, darwin, windows × amd64, arm64; zip on Windows — each
# holding the zot binary for that platform and the README; checksums.txt
# listing exactly those archives with their true SHA-256; and the Linux
# binary reporting the release's version and commit (`zot version`).
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
echo "check-release: ${#want[@]} archives and checksums.txt are right (version $version)"

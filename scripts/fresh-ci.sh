#!/usr/bin/env bash
# CI on a fresh machine, to measure it (issue 35; docs/testing.md, "CI"):
# a Debian bookworm root with what a new machine of this project's kind
# has — Go at /usr/local/go, Node 20 and npm, gcc, make, git, python3,
# their configuration files — and nothing cached, chrooted into; a clean
# clone of a commit; `CI=true bash .ci/run` with no stdin. Its output goes
# to the terminal and to ROOT/root/ci-<n>.log.
#
#   sudo scripts/fresh-ci.sh            # fresh: a new root, caches empty
#   sudo scripts/fresh-ci.sh --warm     # the same root again: the caches
#                                       # of the runs before are there
#
# Env: ZOT_FRESH_ROOT (default /var/tmp/zot-fresh): the machine;
#      ZOT_FRESH_BASE (default /var/tmp/zot-fresh-base): a debootstrapped
#        bookworm kept to copy each fresh root from (made once, ~4 min:
#        apt-get install debootstrap);
#      ZOT_FRESH_REV (default HEAD): the commit to clone (committed work
#        only, as CI sees it).
# Needs root (chroot, mounts). Exits with .ci/run's status.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${ZOT_FRESH_ROOT:-/var/tmp/zot-fresh}
BASE=${ZOT_FRESH_BASE:-/var/tmp/zot-fresh-base}
REV=$(git -C "$SRC" rev-parse "${ZOT_FRESH_REV:-HEAD}")
warm=
case "${1:-}" in
  --warm) warm=1 ;;
  "") ;;
  *) echo "usage: $0 [--warm]" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "fresh-ci: needs root (chroot and mounts)" >&2; exit 1; }
[ -x /usr/local/go/bin/go ] || { echo "fresh-ci: needs Go at /usr/local/go, as a new machine has it" >&2; exit 1; }
command -v node >/dev/null && dpkg -s nodejs >/dev/null 2>&1 ||
  { echo "fresh-ci: needs Debian's nodejs package (Node 20 and npm), as a new machine has it" >&2; exit 1; }

# What a new machine has besides Debian's base: a compiler for cgo (go
# test -race), make, git, python3, procps (ps).
if [ ! -x "$BASE/usr/bin/git" ]; then
  command -v debootstrap >/dev/null || { echo "fresh-ci: apt-get install debootstrap" >&2; exit 1; }
  # The Debian mirror this machine's apt uses (its first deb URI).
  mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p; s/^deb  *\(\[[^]]*\] *\)\{0,1\}\([^ ]*\) .*/\2/p' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -1)
  [ -n "$mirror" ] || { echo "fresh-ci: no Debian mirror in this machine's apt sources" >&2; exit 1; }
  echo "fresh-ci: debootstrap bookworm into $BASE (once)"
  rm -rf "$BASE.tmp"
  debootstrap --include=ca-certificates,git,gcc,g++,libc6-dev,make,python3,procps \
    bookworm "$BASE.tmp" "$mirror"
  mv "$BASE.tmp" "$BASE"
fi

mounts=()
cleanup() {
  # Anything .ci/run left running in the root is a leak: say so, end it
  # (it would keep the mounts busy).
  local p left=()
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && left+=("${p#/proc/}")
  done
  if [ ${#left[@]} -gt 0 ]; then
    echo "fresh-ci: processes left running in the root: ${left[*]}" >&2
    ps -o pid,args -p "$(IFS=,; echo "${left[*]}")" >&2 || true
    kill -9 "${left[@]}" 2>/dev/null || true
  fi
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$warm" ]; then
  echo "fresh-ci: a new root in $ROOT (from $BASE)"
  rm -rf "$ROOT"
  cp -a "$BASE" "$ROOT"
  # Node 20 as Debian's nodejs package installed it on the host (node, the
  # headers native modules build against), and the host's npm (a newer
  # one, installed over the package's).
  dpkg -L nodejs | grep -v '^/usr/lib/node_modules/npm/' | while IFS= read -r f; do
    if [ -f "$f" ] || [ -L "$f" ]; then echo "${f#/}"; fi
  done | tar -C / --no-recursion -cf - -T - | tar -C "$ROOT" -xf -
  rm -rf "$ROOT/usr/lib/node_modules/npm"
  tar -C / -cf - usr/lib/node_modules/npm | tar -C "$ROOT" -xf -
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/bin/npx"
  # The configuration a new machine comes with: npm's and Go's, and the
  # certificate authorities it trusts (the network's own among them); no
  # git identity, no caches.
  for f in /etc/npmrc /usr/etc/npmrc /root/.npmrc /root/.config/go/env /usr/local/share/ca-certificates/*.crt; do
    if [ -f "$f" ]; then echo "${f#/}"; fi
  done | tar -C / -cf - -T - | tar -C "$ROOT" -xf -
  chroot "$ROOT" update-ca-certificates >/dev/null
  mkdir -p "$ROOT/usr/local/go"
elif [ ! -d "$ROOT/root/zot" ]; then
  echo "fresh-ci: no earlier run in $ROOT: run without --warm first" >&2
  exit 1
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"

mount --bind -o ro /usr/local/go "$ROOT/usr/local/go" && mounts+=("$ROOT/usr/local/go")
mount -t proc proc "$ROOT/proc" && mounts+=("$ROOT/proc")
mount --rbind /sys "$ROOT/sys" && mounts+=("$ROOT/sys")
mount --rbind /dev "$ROOT/dev" && mounts+=("$ROOT/dev")

# A clean clone of the commit, each run (the caches are what a warm run
# keeps, not the checkout).
rm -rf "$ROOT/root/zot"
git clone -q --no-checkout "$SRC" "$ROOT/root/zot"
git -C "$ROOT/root/zot" checkout -q --detach "$REV"

n=1
while [ -e "$ROOT/root/ci-$n.log" ]; do n=$((n + 1)); done
log=$ROOT/root/ci-$n.log
echo "fresh-ci: run $n ($([ -n "$warm" ] && echo warm || echo fresh)) of $(git -C "$SRC" log -1 --format='%h %s' "$REV"); load $(cut -d' ' -f1-3 /proc/loadavg); log $log"
# In the background and waited for, so a signal to this script ends the
# run at once (cleanup ends what it left).
rc=0
# The machine's own environment for TLS (its CA bundle), as a new machine
# of this kind has it.
tls_env=()
for v in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR; do
  [ -n "${!v:-}" ] && tls_env+=("$v=${!v}")
done
chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI=true "${tls_env[@]}" \
  PATH=/usr/local/go/bin:/root/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c 'cd /root/zot && bash .ci/run' < /dev/null > >(tee "$log") 2>&1 &
wait $! || rc=$?
echo "fresh-ci: run $n ended (exit $rc); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
exit $rc

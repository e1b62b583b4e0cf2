#!/usr/bin/env bash
# Installs a Debian suite's Neovim into a private directory, without touching
# the system's apt state or /usr/bin/nvim, and prints the path of a wrapper
# that runs it. The test suite runs on each Neovim the README promises:
#
#   editors/nvim/tests/install-nvim.sh trixie     # Neovim 0.10.x
#   editors/nvim/tests/install-nvim.sh unstable   # the newest Debian packages (0.12.x)
#   NVIM=$(editors/nvim/tests/install-nvim.sh trixie) editors/nvim/tests/run.sh
#
# The oldest supported Neovim (0.7.2) is Debian stable's: apt-get install neovim.
#
# How: apt-get with its own sources list (the mirror the system's apt sources
# already name), lists and cache under $ZOT_NVIM_CACHE/SUITE; download the
# package and its dependency closure (its own glibc included, so a newer
# suite runs on an older system) and unpack them with dpkg-deb. The wrapper
# runs nvim through that glibc's dynamic loader. A second run reuses the
# unpacked tree.
#
# Env: ZOT_NVIM_CACHE (default ~/.cache/zot-nvim). Progress goes to stderr;
# stdout is only the wrapper's path.
set -euo pipefail
SUITE=${1:?usage: install-nvim.sh SUITE (trixie, unstable, …)}
CACHE=${ZOT_NVIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zot-nvim}
D=$CACHE/$SUITE
WRAPPER=$D/nvim

if [ -x "$WRAPPER" ] && "$WRAPPER" --version >/dev/null 2>&1; then
  echo "$WRAPPER"
  exit 0
fi

# Two runs at once (CI installs ahead in the background while the tests
# run; two worktrees): one installs, the other waits and finds it done.
mkdir -p "$CACHE"
exec 9>"$CACHE/.install-$SUITE.lock"
flock 9
if [ -x "$WRAPPER" ] && "$WRAPPER" --version >/dev/null 2>&1; then
  echo "$WRAPPER"
  exit 0
fi

mirror=$( { grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources; grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list; } \
  | awk '$1 == "URIs:" {print $2} $1 == "deb" {print ($2 ~ /^\[/) ? $3 : $2}' | grep -v security | head -1 || true)
if [ -z "$mirror" ]; then
  echo "install-nvim: the system's apt sources name no Debian mirror" >&2
  exit 1
fi

echo "install-nvim: fetching neovim from $SUITE into $D" >&2
rm -rf "$D/root" "$D/debs" "$WRAPPER"
mkdir -p "$D/apt/lists/partial" "$D/apt/cache/archives/partial" "$D/debs" "$D/root"
echo "deb $mirror $SUITE main" >"$D/apt/sources.list"
# Check-Valid-Until off: a mirror that serves a frozen copy of a suite
# (this project's machines do) has a Release file past its Valid-Until,
# and apt refuses it ("is expired") on every fresh machine; its signature
# is still checked.
A=(-o Dir::Etc::sourcelist="$D/apt/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$D/apt/lists"
  -o Dir::Cache="$D/apt/cache" -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 -o Acquire::Check-Valid-Until=false)
apt-get "${A[@]}" update -qq >&2
# The dependency closure, without recommends: nvim plus the libraries it links
# and their own dependencies (glibc and its loader among them).
pkgs=$(apt-cache "${A[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances neovim | grep -v '^[ <]' | sort -u)
# apt-get download drops privileges to _apt, which cannot write to a
# directory under $HOME: that is the warning filtered out here.
(cd "$D/debs" && apt-get "${A[@]}" download -qq $pkgs) 2>&1 | grep -v unsandboxed >&2 || true
if ! ls "$D"/debs/neovim_*.deb >/dev/null 2>&1; then
  echo "install-nvim: no neovim package downloaded from $SUITE" >&2
  exit 1
fi
for f in "$D"/debs/*.deb; do dpkg-deb -x "$f" "$D/root"; done
rm -rf "$D/debs"

cat >"$WRAPPER.tmp" <<W
#!/bin/sh
L=$D/root/usr/lib/x86_64-linux-gnu
export VIMRUNTIME=$D/root/usr/share/nvim/runtime LUA_CPATH="\$L/lua/5.1/?.so;;"
exec "\$L/ld-linux-x86-64.so.2" --library-path "\$L" $D/root/usr/bin/nvim --cmd 'set rtp+=$D/root/usr/lib/nvim' "\$@"
W
chmod +x "$WRAPPER.tmp"
"$WRAPPER.tmp" --version | head -1 >&2
mv "$WRAPPER.tmp" "$WRAPPER"
echo "$WRAPPER"

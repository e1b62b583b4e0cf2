#!/usr/bin/env bash
# Runs every fuzz target of the module for a short while (FUZZTIME, default
# 10s each): go test -fuzz takes one target of one package at a time. The
# targets are found in the source, so a new one is fuzzed without editing
# this script. A failure leaves its input under the package's
# testdata/fuzz/ (commit it: it becomes a regression test).
#   FUZZTIME=30s scripts/fuzz.sh
#
# FUZZ_JOBS targets (default: the cores) fuzz at once, each with one
# worker (-parallel 1): the same time per target on a core each, instead
# of one target on every core after another — the run takes a third of
# the time on two cores and leaves the machine's other work room.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# fuzz_one DIR TARGET LOG: one target; exits 1 on a finding.
fuzz_one() {
  local dir=$1 target=$2 log=$3
  if ! "$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -parallel 1 "$dir" >"$log" 2>&1; then
    # On a loaded machine the fuzz coordinator can miss its own deadline
    # while stopping the workers ("context deadline exceeded", no input):
    # not a finding. A finding always writes its input under testdata/fuzz.
    if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
      echo "  (the fuzzer overran its time limit while stopping; no failing input)" >>"$log"
    else
      return 1
    fi
  fi
}

# Targets: every `func FuzzX(f *testing.F)` in a _test.go file outside
# testdata and node_modules, per package directory.
mapfile -t targets < <(grep -rEo --include='*_test.go' --exclude-dir=testdata --exclude-dir=node_modules '^func Fuzz[A-Za-z0-9_]*' . |
  sed 's/:func /:/' | sort)
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
pids=() names=() failed=0
for i in "${!targets[@]}"; do
  IFS=: read -r file target <<<"${targets[i]}"
  dir=./$(dirname "${file#./}")
  # At most FUZZ_JOBS at once: wait for the oldest before starting more.
  if [ ${#pids[@]} -ge "$FUZZ_JOBS" ]; then
    j=$(( ${#pids[@]} - FUZZ_JOBS ))
    wait "${pids[j]}" || true
  fi
  echo "fuzz $dir $target ($FUZZTIME)"
  fuzz_one "$dir" "$target" "$logs/$i" &
  pids+=($!) names+=("$dir $target")
done
for i in "${!pids[@]}"; do
  if ! wait "${pids[i]}"; then
    grep -v '^fuzz: elapsed' "$logs/$i" || true
    echo "FAIL fuzz ${names[i]}"
    failed=1
  elif grep -q 'overran its time limit' "$logs/$i"; then
    echo "fuzz ${names[i]}: the fuzzer overran its time limit while stopping; no failing input"
  fi
done
[ $failed = 0 ] || exit 1
echo "fuzzed ${#targets[@]} targets"

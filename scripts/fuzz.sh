#!/usr/bin/env bash
# Runs every fuzz target of the module for a short while (FUZZTIME, default
# 10s each): go test -fuzz takes one target of one package at a time. The
# targets are found in the source, so a new one is fuzzed without editing
# this script. A failure leaves its input under the package's
# testdata/fuzz/ (commit it: it becomes a regression test).
#   FUZZTIME=30s scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
n=0
# Targets: every `func FuzzX(f *testing.F)` in a _test.go file outside
# testdata and node_modules, per package directory.
while IFS=: read -r file target; do
  dir=./$(dirname "${file#./}")
  echo "fuzz $dir $target ($FUZZTIME)"
  if ! "$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$dir" >"$log" 2>&1; then
    # On a loaded machine the fuzz coordinator can miss its own deadline
    # while stopping the workers ("context deadline exceeded", no input):
    # not a finding. A finding always writes its input under testdata/fuzz.
    if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
      echo "  (the fuzzer overran its time limit while stopping; no failing input)"
    else
      grep -v '^fuzz: elapsed' "$log"
      echo "FAIL fuzz $dir $target"
      exit 1
    fi
  fi
  n=$((n + 1))
done < <(grep -rEo --include='*_test.go' --exclude-dir=testdata --exclude-dir=node_modules '^func Fuzz[A-Za-z0-9_]*' . |
  sed 's/:func /:/' | sort)
if [ $n -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
echo "fuzzed $n targets"

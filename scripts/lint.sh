#!/usr/bin/env bash
# make lint: gofmt, go vet, staticcheck and unparam (pinned), every test skip through
# internal/testenv, no tracked executable binaries, and stylua on the
# Neovim plugin's Lua.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
STATICCHECK=${STATICCHECK:-honnef.co/go/tools/cmd/staticcheck@v0.8.2}
UNPARAM=${UNPARAM:-mvdan.cc/unparam@v0.0.0-20260823230713-2fa3d841b0c8}
fail=0

out=$(gofmt -l $("$GO" list -f '{{.Dir}}' ./...) | sort -u)
if [ -n "$out" ]; then
  echo "gofmt: run gofmt -w on:"
  echo "$out"
  fail=1
fi

# What vet and the analyzers type-check is compiled with -race, as make
# test-go compiles it: on a fresh machine every package is compiled once
# for both instead of twice (LINT_BUILD_FLAGS= for a plain build, e.g.
# without a C compiler). The tools themselves are built plain.
LINT_BUILD_FLAGS=${LINT_BUILD_FLAGS--race}
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
GOBIN=$tools "$GO" install "$STATICCHECK" || fail=1
GOBIN=$tools "$GO" install "$UNPARAM" || fail=1

"$GO" vet $LINT_BUILD_FLAGS ./... || fail=1

echo "staticcheck ($STATICCHECK)"
GOFLAGS="${GOFLAGS:-} $LINT_BUILD_FLAGS" "$tools/staticcheck" ./... || fail=1

# Parameters and results no caller uses (a handler whose signature a
# dispatch table fixes names the unused one _).
echo "unparam ($UNPARAM)"
GOFLAGS="${GOFLAGS:-} $LINT_BUILD_FLAGS" "$tools/unparam" ./... || fail=1

# A skip under ZOT_REQUIRE_ALL=1 must fail, so it goes through testenv.
skips=$(grep -rnE --include='*.go' --exclude-dir=node_modules --exclude-dir=testenv '\b[A-Za-z_]+\.Skip(f|Now)?\(' . |
  grep -vE '\btestenv\.Skip\(' || true)
if [ -n "$skips" ]; then
  echo "skip through internal/testenv (testenv.Skip, testenv.NeedCommand), so ZOT_REQUIRE_ALL=1 can fail it:"
  echo "$skips"
  fail=1
fi

scripts/check-tracked-binaries.sh || fail=1

# `go install github.com/zot-editors/zot/cmd/zot@latest` refuses a module
# whose go.mod has replace or exclude directives; zot builds without cgo
# (make cross builds every platform with CGO_ENABLED=0).
if grep -nE '^[[:space:]]*(replace|exclude)\b' go.mod; then
  echo "go.mod: replace/exclude directives break go install github.com/zot-editors/zot/cmd/zot@latest"
  fail=1
fi

# Lua style of the Neovim plugin: stylua (editors/nvim's npm dev
# dependency; .ci/run installs it). Missing is a failure under
# ZOT_REQUIRE_ALL=1, as a skipped test is.
stylua=editors/nvim/node_modules/.bin/stylua
if [ -x "$stylua" ]; then
  echo "stylua --check editors/nvim"
  "$stylua" --check editors/nvim || { echo "stylua: run $stylua editors/nvim"; fail=1; }
elif [ "${ZOT_REQUIRE_ALL:-}" = 1 ]; then
  echo "stylua is not installed: (cd editors/nvim && npm ci)"
  fail=1
else
  echo "stylua: not installed, Lua style not checked ((cd editors/nvim && npm ci) installs it)"
fi

[ $fail -eq 0 ] && echo "lint: ok"
exit $fail

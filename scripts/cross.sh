#!/usr/bin/env bash
# make cross: every platform in CROSS_TARGETS compiles; those in CROSS_VET
# are also vetted (go vet type-checks every package, tests included).
#
# The tests of CROSS_VET_TESTS_ON_HOST (the packages whose tests use the
# provider SDKs as oracles) are vetted on the host only: compiling those
# SDKs once more per platform was most of CI's cross time, and their test
# files are the same on every platform. That is checked here: if one of
# them gains a file another platform does not build (a _windows.go, a
# build constraint), it is vetted on that platform like the rest. Their
# non-test code is still compiled for each platform (it is part of zot).
# Every command uses -trimpath, as scripts/release.sh does, so the
# packages compiled for a platform here are reused by the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
targets=${CROSS_TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
vet=${CROSS_VET:-"darwin/arm64 windows/amd64"}
host_only=${CROSS_VET_TESTS_ON_HOST:-"./agent/provider ./agent/llmtest"}
files='{{.ImportPath}} {{.GoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}} {{.IgnoredGoFiles}}'

for t in $targets; do
  os=${t%/*} arch=${t#*/}
  case " $vet " in
  *" $t "*)
    skip=()
    for p in $host_only; do
      if [ "$("$GO" list -f "$files" "$p")" = "$(GOOS=$os GOARCH=$arch "$GO" list -f "$files" "$p")" ]; then
        skip+=("$("$GO" list "$p")")
      else
        echo "cross: $p builds other files on $t: its tests are vetted there too"
      fi
    done
    pkgs=$("$GO" list ./... | grep -vxF -f <(printf '%s\n' "${skip[@]}" ""))
    echo "go vet ./... ($t; the tests of ${skip[*]:-none} on the host only)"
    GOOS=$os GOARCH=$arch CGO_ENABLED=0 "$GO" vet -trimpath $pkgs
    if [ ${#skip[@]} -gt 0 ]; then
      GOOS=$os GOARCH=$arch CGO_ENABLED=0 "$GO" build -trimpath "${skip[@]}"
    fi
    ;;
  *)
    echo "go build ./cmd/zot ($t)"
    GOOS=$os GOARCH=$arch CGO_ENABLED=0 "$GO" build -trimpath -o /dev/null ./cmd/zot
    ;;
  esac
done

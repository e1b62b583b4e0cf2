# zot for editors. `make test` runs every test; `make run ARGS='…'` builds and runs zot.
GO      ?= go
BIN     := bin/zot
ARGS    ?= --help
GOTEST  ?= $(GO) test -count=1
# Pinned: a new staticcheck release adds checks; bump it on purpose.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 10s
# Pinned: the release builds must not change under us. The binary is built
# once from the Go module proxy and kept under ~/.cache (building it takes
# minutes; CI reuses it).
GORELEASER_VERSION ?= v2.16.0
GORELEASER_DIR     ?= $(HOME)/.cache/zot-goreleaser/$(GORELEASER_VERSION)
GORELEASER         := $(GORELEASER_DIR)/goreleaser
# The platforms zot is built and vetted for (make cross, releases).
CROSS_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
COVERDIR    ?= $(CURDIR)/bin/cover
NVIM_TESTS  := editors/nvim/tests

.PHONY: all build run test test-go test-nvim test-nvim-all test-vscode test-acp lint fuzz cover bench early-ready vet cross release-snapshot goreleaser vsix demo clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/zot

# Builds zot and runs it: make run ARGS='-p "hello"'
run: build
	./$(BIN) $(ARGS)

# A run with no API key: the scripted LLM on loopback answers.
demo: build
	./scripts/demo.sh

# Every test: the linters; Go (runtime, server, extensions) under the race
# detector; a short run of every fuzz target; Neovim (headless, real nvim:
# the oldest supported, Debian testing's and the newest, and the builtin
# transport); VS Code (unit tests in Node, then real code-server + Chromium);
# every platform compiles and vets (make cross). make release-snapshot is
# not part of it (installing goreleaser cold fetches ~1.9 GB of modules);
# .ci/run runs it after make test (see docs/decisions.md, "Releases").
test: lint cross test-go fuzz test-acp test-nvim-all test-vscode

# The Go suite runs once, with -race: the same tests, and servertest builds
# the zot it drives with -race too, so a data race in the server fails them.
test-go: build
	$(GOTEST) -race -timeout 20m ./...

# gofmt, go vet, staticcheck (pinned); every skip goes through
# internal/testenv (so ZOT_REQUIRE_ALL=1 can fail it); no tracked
# executable binaries.
lint:
	GO=$(GO) STATICCHECK=$(STATICCHECK) scripts/lint.sh

# A short run of every fuzz target (FUZZTIME each, default 10s).
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

# Coverage of the Go suite, counting what the real zot subprocesses
# (servertest's zot lsp, cmd/zot's zot rpc and zot -p) execute: they are
# built with -cover and write their counters to $ZOT_TEST_COVERDIR.
cover:
	rm -rf $(COVERDIR) && mkdir -p $(COVERDIR)/unit $(COVERDIR)/sub
	ZOT_TEST_COVERDIR=$(COVERDIR)/sub ZOT_TEST_COVER=1 $(GOTEST) -timeout 20m -cover -coverpkg=./... ./... \
	  -args -test.gocoverdir=$(COVERDIR)/unit
	$(GO) tool covdata textfmt -i=$(COVERDIR)/unit,$(COVERDIR)/sub -o $(COVERDIR)/cover.out
	$(GO) tool cover -func=$(COVERDIR)/cover.out | tail -1
	@echo "per function: go tool cover -func=$(COVERDIR)/cover.out; HTML: go tool cover -html=$(COVERDIR)/cover.out"

# The Neovim suite on the nvim on PATH (CI: Debian stable's 0.7.2, the
# oldest supported).
test-nvim: build
	ZOT_BIN=$(CURDIR)/$(BIN) $(NVIM_TESTS)/run.sh

# The Neovim suite on every Neovim we support: the one on PATH, Debian
# trixie's (0.10.x) and unstable's (the newest, 0.12.x), and once more on the
# newest with Neovim's builtin transport (transport = "builtin").
# install-nvim.sh fetches them into ~/.cache/zot-nvim.
test-nvim-all: test-nvim
	n=$$($(NVIM_TESTS)/install-nvim.sh trixie) && NVIM=$$n ZOT_BIN=$(CURDIR)/$(BIN) $(NVIM_TESTS)/run.sh
	n=$$($(NVIM_TESTS)/install-nvim.sh unstable) && NVIM=$$n ZOT_BIN=$(CURDIR)/$(BIN) $(NVIM_TESTS)/run.sh
	n=$$($(NVIM_TESTS)/install-nvim.sh unstable) && NVIM=$$n ZOT_TEST_TRANSPORT=builtin ZOT_BIN=$(CURDIR)/$(BIN) $(NVIM_TESTS)/run.sh

# An independent ACP client: the official TypeScript SDK drives the real
# `zot acp` (test/acp; npm ci there once, as .ci/run does).
test-acp: build
	cd test/acp && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && ZOT_BIN=$(CURDIR)/$(BIN) npm test --silent

test-vscode: build
	ZOT_BIN=$(CURDIR)/$(BIN) editors/vscode/scripts/test.sh

vet:
	$(GO) vet ./...

# Every platform in CROSS_TARGETS compiles. One target per OS other than
# Linux (whose amd64 make lint vets) gets go vet, which type-checks every
# package, tests included; the others build zot itself. (Vetting all six
# would compile the provider SDKs the tests use as oracles six times: most
# of CI's time for no code an architecture changes.)
CROSS_VET   := darwin/arm64 windows/amd64
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
	  case " $(CROSS_VET) " in \
	  *" $$t "*) echo "go vet ./... ($$t)"; GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet ./... ;; \
	  *) echo "go build ./cmd/zot ($$t)"; GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/zot ;; \
	  esac; \
	done

# The release archives for every platform, built offline into dist/ (no
# publishing), then checked: six archives, checksums.txt, zot version.
release-snapshot: $(GORELEASER)
	$(GORELEASER) release --snapshot --clean
	scripts/check-release.sh dist

# goreleaser alone (CI installs it under a time limit, then runs
# release-snapshot).
goreleaser: $(GORELEASER)

# Installed into a temporary directory and moved into place, so an
# interrupted build never leaves a half-written binary in the cache.
$(GORELEASER):
	rm -rf $(GORELEASER_DIR).tmp
	GOBIN=$(GORELEASER_DIR).tmp GOFLAGS= $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	mkdir -p $(GORELEASER_DIR) && mv $(GORELEASER_DIR).tmp/goreleaser $(GORELEASER) && rm -rf $(GORELEASER_DIR).tmp

# The VS Code packages for the six platforms, each with its zot inside
# (bin/zot), into bin/vsix/: make vsix, or one: make vsix VSIX_TARGETS=linux-x64.
VSIX_TARGETS ?=
vsix:
	GO=$(GO) OUT=$(CURDIR)/bin/vsix editors/vscode/scripts/package-vsix.sh $(VSIX_TARGETS)

# Every benchmark (speed and memory targets are checked here, not in tests),
# then a summary of the search tools against ripgrep, of zot's host CPU
# per prompt and of a didChange burst's growth. The output is kept in
# bin/bench.txt.
bench: build
	bash -o pipefail -c '$(GO) test -p 1 -run "^$$" -bench . ./... | tee bin/bench.txt'
	@awk -f scripts/bench-summary.awk bin/bench.txt

# early-ready counts extensions declared ready before their ready frame in
# 2,000 starts at N=100 with every core busy (minutes; bench runs 200).
early-ready:
	ZOT_EARLY_READY_STARTS=2000 $(GO) test ./cmd/zot -run '^$$' -bench '^BenchmarkEarlyReady$$' -benchtime 1x -v -count=1 -timeout 60m

clean:
	rm -rf bin

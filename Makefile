# zot for editors. `make test` runs every test; `make run ARGS='…'` builds and runs zot.
GO      ?= go
BIN     := bin/zot
ARGS    ?= --help
GOTEST  ?= $(GO) test -count=1
# Pinned: a new staticcheck release adds checks; bump it on purpose.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 10s
# The platforms zot is built and vetted for (make cross, releases).
CROSS_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
COVERDIR    ?= $(CURDIR)/bin/cover
NVIM_TESTS  := editors/nvim/tests

# pi extensions' Node runtime (sucrase, typebox, zod; pinned by its lockfile).
.PHONY: pi-runtime
pi-runtime:
	cd extensions/pi/runtime && npm ci --no-audit --no-fund --loglevel=error

.PHONY: all build run test print-test-targets test-go test-nvim test-nvim-all test-lsp-clients test-vscode test-acp lint fuzz cover bench bench-editors early-ready vet cross release-snapshot vsix demo clean sep-ts-deps

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
# every platform compiles and vets (make cross). .ci/run also runs make
# release-snapshot (the six release archives, built and checked).
TEST_TARGETS := lint cross test-go fuzz test-acp test-nvim-all test-lsp-clients test-vscode
test: $(TEST_TARGETS)

# .ci/run runs (and times) make test's targets one by one.
print-test-targets:
	@echo $(TEST_TARGETS)

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

# Editors nobody here wrote, as plain LSP clients of the real zot lsp,
# headless (test/lspclients): Neovim's built-in client without zot's
# plugin, on 0.10.x and the newest (install-nvim.sh), and Emacs eglot
# (Debian's emacs-nox + elpa-eglot).
test-lsp-clients: build
	ZOT_BIN=$(CURDIR)/$(BIN) test/lspclients/run.sh

# An independent ACP client: the official TypeScript SDK drives the real
# `zot acp` (test/acp; npm ci there once, as .ci/run does).
test-acp: build
	cd test/acp && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && ZOT_BIN=$(CURDIR)/$(BIN) npm test --silent

# The TypeScript SEP extensions' pinned runner (tsx, in
# extensions/testdata/sep-ts's lock; .ci/run's setup runs this). The Go
# tests that run them skip through testenv without it.
sep-ts-deps:
	cd extensions/testdata/sep-ts && npm ci --no-audit --no-fund --loglevel=error

test-vscode: build
	ZOT_BIN=$(CURDIR)/$(BIN) editors/vscode/scripts/test.sh

vet:
	$(GO) vet ./...

# Every platform in CROSS_TARGETS compiles; CROSS_VET's are vetted too,
# tests included (scripts/cross.sh: the provider SDKs the tests use as
# oracles are compiled for the host only). One target per OS other than
# Linux, whose amd64 make lint vets.
CROSS_VET   := darwin/arm64 windows/amd64
cross:
	GO=$(GO) CROSS_TARGETS="$(CROSS_TARGETS)" CROSS_VET="$(CROSS_VET)" scripts/cross.sh

# The release archives for every platform, built offline into dist/ (no
# publishing; scripts/release.sh, go build and tar), then checked: six
# archives, checksums.txt, zot version.
release-snapshot:
	GO=$(GO) scripts/release.sh dist
	scripts/check-release.sh dist

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

# Enter → first token painted in the real editors (Neovim: the one on PATH
# and Debian unstable's; VS Code: code-server 4.100.3 and 4.139.1) over
# the scripted model, with the floor (a bare socket's first byte) and the
# CPU per prompt of each side; not part of make test (it measures, it
# judges nothing). scripts/bench-editors.sh says how; docs/testing.md has
# the numbers.
bench-editors: build
	ZOT_BIN=$(CURDIR)/$(BIN) scripts/bench-editors.sh

# early-ready counts extensions declared ready before their ready frame in
# 2,000 starts at N=100 with every core busy (minutes; bench runs 200).
early-ready:
	ZOT_EARLY_READY_STARTS=2000 $(GO) test ./cmd/zot -run '^$$' -bench '^BenchmarkEarlyReady$$' -benchtime 1x -v -count=1 -timeout 60m

clean:
	rm -rf bin

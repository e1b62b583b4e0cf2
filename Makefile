# zot for editors. `make test` runs every test; `make run ARGS='…'` builds and runs zot.
GO      ?= go
BIN     := bin/zot
ARGS    ?= --help
GOTEST  ?= $(GO) test -count=1

.PHONY: all build run test test-go test-nvim test-vscode bench fuzz vet demo clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/zot

# Builds zot and runs it: make run ARGS='-p "hello"'
run: build
	./$(BIN) $(ARGS)

# A run with no API key: the scripted LLM on loopback answers.
demo: build
	./scripts/demo.sh

# Every test: Go (runtime, server, extensions), Neovim (headless, real
# nvim), VS Code (unit tests in Node, then real code-server + Chromium).
test: test-go test-nvim test-vscode

test-go: build
	$(GOTEST) -timeout 15m ./...

test-nvim: build
	ZOT_BIN=$(CURDIR)/$(BIN) editors/nvim/tests/run.sh

test-vscode: build
	ZOT_BIN=$(CURDIR)/$(BIN) editors/vscode/scripts/test.sh

vet:
	$(GO) vet ./...

# Every benchmark (speed and memory targets are checked here, not in tests),
# then a summary of the search tools against ripgrep and of zot's host CPU
# per prompt. The output is kept in bin/bench.txt.
bench: build
	bash -o pipefail -c '$(GO) test -p 1 -run "^$$" -bench . ./... | tee bin/bench.txt'
	@awk -f scripts/bench-summary.awk bin/bench.txt

clean:
	rm -rf bin

# zot for editors. `make test` runs every test; `make run ARGS='…'` builds and runs zot.
GO      ?= go
BIN     := bin/zot
ARGS    ?= --help
GOTEST  ?= $(GO) test -count=1

.PHONY: all build run test test-go bench fuzz vet demo clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/zot

# Builds zot and runs it: make run ARGS='-p "hello"'
run: build
	./$(BIN) $(ARGS)

# A run with no API key: the scripted LLM on loopback answers.
demo: build
	./scripts/demo.sh

test: test-go

test-go: build
	$(GOTEST) -timeout 15m ./...

vet:
	$(GO) vet ./...

# Every benchmark (speed and memory targets are checked here, not in tests).
bench: build
	$(GO) test -run '^$$' -bench . ./...

clean:
	rm -rf bin

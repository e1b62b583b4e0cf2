package main

import (
	"context"
	"io"

	"github.com/zot-editors/zot/agent"
)

// runExtra dispatches subcommands that live outside the core (lsp, ext).
func runExtra(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, bool) {
	switch args[0] {
	case "lsp":
		return cmdLSP(args[1:], stdin, stdout, stderr), true
	}
	return 0, false
}

// newRuntime builds the runtime with the extension host wired in.
func newRuntime(ctx context.Context, c *common, cfg agent.Config, stderr io.Writer) (*agent.Runtime, func(), error) {
	rt, err := agent.New(cfg)
	if err != nil {
		return nil, func() {}, err
	}
	return rt, func() {}, nil
}

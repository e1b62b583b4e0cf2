package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/zot-editors/zot/server"
)

// cmdLSP is `zot lsp`: the language server editors start. It takes the
// flags of `zot rpc`; the editor's initializationOptions override them
// (docs/protocol.md). Sessions are saved unless --no-session.
func cmdLSP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("zot lsp", stderr)
	var c common
	c.register(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zot lsp: unexpected argument %q (the editor talks to zot lsp on stdin/stdout)\n", fs.Arg(0))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logger := log.New(stderr, "zot lsp: ", log.LstdFlags|log.Lmsgprefix)
	var newMCP server.MCPFactory
	if !c.noMCP {
		newMCP = server.MCPHostFactory(absAll(c.mcpConfigs), logger.Printf)
	}
	// A hidden override of the protocol revision initialize reports, for
	// the clients' tests of the version handshake (docs/protocol.md).
	revision := 0
	if v := os.Getenv("ZOT_TEST_PROTOCOL_REVISION"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "zot lsp: ZOT_TEST_PROTOCOL_REVISION must be a positive number, not %q\n", v)
			return 2
		}
		revision = n
	}
	var newHost server.HostFactory
	if !c.noExt { // --no-ext: none at all, --ext ones included
		newHost = server.ExtensionHost(logger.Printf)
	}
	srv := server.New(server.Options{
		NewMCP:  newMCP,
		Config:  c.checkpointed(true),
		Exts:    c.exts,
		NewHost: newHost,
		Log:     stderr,
		// zot/debug/stats, for tests and diagnosing a stuck server.
		DebugStats:     os.Getenv("ZOT_DEBUG_STATS") == "1",
		AskEveryTool:   c.noYolo,
		ReportRevision: revision,
	})
	if err := srv.Serve(ctx, stdin, stdout); err != nil {
		if !errors.Is(err, server.ErrNoShutdown) {
			fmt.Fprintln(stderr, "zot lsp:", err)
		}
		return 1
	}
	return 0
}

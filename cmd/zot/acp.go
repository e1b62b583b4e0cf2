package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/zot-editors/zot/server/acp"
)

// cmdACP is `zot acp`: the Agent Client Protocol front that Zed, the
// JetBrains IDEs, Emacs (agent-shell) and Neovim's ACP clients start. It
// takes the flags of `zot rpc` / `zot lsp`; sessions are saved unless
// --no-session (docs/acp.md). Logs go to stderr; the end of stdin ends it.
func cmdACP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("zot acp", stderr)
	var c common
	c.register(fs)
	mode := fs.String("mode", "", "permission mode of new sessions: ask (default), auto or readonly")
	if err := parseFlags(fs, args, stderr); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zot acp: unexpected argument %q (the editor talks to zot acp on stdin/stdout)\n", fs.Arg(0))
		return 2
	}
	switch *mode {
	case "", "ask", "auto", "readonly":
	default:
		fmt.Fprintf(stderr, "zot acp: --mode must be ask, auto or readonly, not %q\n", *mode)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv := acp.New(acp.Options{Config: c.checkpointed(true), Exts: c.exts, NoExt: c.noExt, NoMCP: c.noMCP, MCPConfigs: absAll(c.mcpConfigs), DefaultMode: *mode, Log: stderr, AskEveryTool: c.noYolo})
	if err := srv.Serve(ctx, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "zot acp:", err)
		return 1
	}
	return 0
}

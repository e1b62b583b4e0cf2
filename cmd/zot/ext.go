package main

import (
	"io"

	"github.com/zot-editors/zot/extensions/cli"
	"github.com/zot-editors/zot/server"
)

// cmdExt is `zot ext …` (see extensions/cli).
func cmdExt(args []string, stdout, stderr io.Writer) int {
	return cli.Run(args, server.BuiltinCommandNames(), stdout, stderr)
}

package main

import "io"

// cmdExt is `zot ext …` (see extensions/cli).
func cmdExt(args []string, stdout, stderr io.Writer) int {
	return extCLI(args, stdout, stderr)
}

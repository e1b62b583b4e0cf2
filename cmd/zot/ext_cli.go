package main

import (
	"fmt"
	"io"
)

func extCLI(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "zot ext: not available yet")
	return 2
}

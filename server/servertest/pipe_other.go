//go:build !linux

package servertest

import "os"

func pipeBytes(*os.File) int { return 0 }

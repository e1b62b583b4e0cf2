//go:build !unix

package cli

import "os"

var sigterm = os.Interrupt

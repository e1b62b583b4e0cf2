//go:build !linux

package servertest

import (
	"errors"
	"os"
)

func pipeBytes(*os.File) int { return 0 }

var errNoProc = errors.New("process memory is read from /proc (Linux only)")

// Memory is zot's resident memory and its peak (Linux only).
func (e *Editor) Memory() (rss, peak int64, err error) { return 0, 0, errNoProc }

// ResetPeak starts a new peak measurement (Linux only).
func (e *Editor) ResetPeak() error { return errNoProc }

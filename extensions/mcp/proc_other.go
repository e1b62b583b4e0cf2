//go:build !unix

package mcp

import "os/exec"

func setProcGroup(cmd *exec.Cmd) {}

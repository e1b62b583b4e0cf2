//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcGroup puts a stdio server in its own process group, so stopping
// it also stops whatever it spawned (npx's node, a shell's children).
func setProcGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

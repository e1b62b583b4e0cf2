package proctest

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/zot-editors/zot/internal/testenv"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	if Alive(0) || Alive(-1) {
		t.Fatal("pid <= 0 is alive")
	}
	if runtime.GOOS == "windows" {
		testenv.Skip(t, "no zombies on Windows")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatal("a running child is not alive")
	}
	// Killed but not reaped: a zombie, which has exited.
	cmd.Process.Kill()
	WaitGone(t, pid, "the killed child (a zombie until reaped)")
	cmd.Wait()
	if Alive(pid) {
		t.Fatal("a reaped child is alive")
	}
}

//go:build linux

package childproc

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// killDescendants SIGKILLs every process below this one, found through
// /proc (a process that escaped with setsid is still a descendant, thanks
// to the subreaper).
func killDescendants() {
	self := os.Getpid()
	for _, pid := range descendants(self) {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// descendants lists the processes below root, parents first.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads the ppid from /proc/PID/stat (field 4, after the
// parenthesised command name, which may itself hold spaces and parens).
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

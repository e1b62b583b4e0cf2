package servertest

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pipeBytes is how many bytes wait in the pipe behind f (FIONREAD).
func pipeBytes(f *os.File) int {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return n
}

// Memory is zot's resident memory now (VmRSS) and its peak (VmHWM), in
// bytes, from /proc/PID/status.
func (e *Editor) Memory() (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", e.PID()))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		if k != "VmRSS" && k != "VmHWM" {
			continue
		}
		kb, perr := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if perr != nil {
			return 0, 0, fmt.Errorf("%s: %q: %v", k, v, perr)
		}
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, sc.Err()
}

// ResetPeak starts a new VmHWM measurement (clear_refs 5).
func (e *Editor) ResetPeak() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", e.PID()), []byte("5"), 0)
}

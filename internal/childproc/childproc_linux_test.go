package childproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/internal/testenv"
	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary one of the parents below instead of
// running the tests.
const helperEnv = "CHILDPROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(supervisorEnv); ok {
		Init() // a "tree" helper's supervisor: does not return
	}
	switch os.Getenv(helperEnv) {
	case "thread":
		threadHelper()
	case "tree":
		treeHelper()
	}
	os.Exit(m.Run())
}

// threadHelper starts a child from a goroutine locked to its thread that
// then exits (so the runtime ends that thread), checks that the child is
// still alive, prints "<pid> alive" and waits to be killed. No supervisor:
// only the parent-death signal is at work.
func threadHelper() {
	runtime.LockOSThread() // keep the main thread: the starter below gets a thread of its own
	cmd := exec.Command("sh", "-c", "read x; echo alive; exec sleep 1000")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	tid := make(chan int)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := Start(cmd); err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
		tid <- unix.Gettid()
	}()
	task := "/proc/self/task/" + strconv.Itoa(<-tid)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break // the thread that called Start has ended
		}
		if time.Now().After(deadline) {
			fmt.Println("the starting thread did not end")
			os.Exit(1)
		}
	}
	fmt.Fprintln(stdin, "x")
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	fmt.Printf("%d %s\n", cmd.Process.Pid, strings.TrimSpace(line))
	for {
		time.Sleep(time.Hour) // until killed (a bare select{} would be a deadlock)
	}
}

// treeHelper is zot in small: Init, then a command in its own process
// group that starts a background child, one in its own session and one
// with a cleared environment. It prints "<what> <pid>" for each, for the
// command's shell and for the supervisor, then "ready", and waits to be
// killed.
func treeHelper() {
	if err := Init(); err != nil {
		fmt.Println("init:", err)
		os.Exit(1)
	}
	script := strings.Join([]string{
		`sh -c 'echo child $$; exec sleep 1000' &`,
		`setsid sh -c 'echo setsid $$; exec sleep 1000' &`,
		`env -i sh -c 'echo clean $$; exec sleep 1000' &`,
		`echo shell $$`,
		`wait`,
	}, "\n")
	cmd := exec.Command("sh", "-c", script)
	stdout, _ := cmd.StdoutPipe()
	Prepare(cmd)
	if err := Start(cmd); err != nil {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	r := bufio.NewReader(stdout)
	for range 4 {
		line, err := r.ReadString('\n')
		if err != nil {
			fmt.Println("reading the command:", err)
			os.Exit(1)
		}
		fmt.Print(line)
	}
	fmt.Printf("supervisor %d\nready\n", supervisor.pid)
	for {
		time.Sleep(time.Hour) // until killed (a bare select{} would be a deadlock)
	}
}

// startHelper runs the test binary as a helper and returns the lines it
// wrote up to the one until accepts.
func startHelper(t *testing.T, mode string, until func(line string) bool) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	timeout := time.After(60 * time.Second) // a hang, not a slowness check
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the helper ended; it wrote %q", got)
			}
			got = append(got, line)
			if until(line) {
				go func() { // drain what is left
					for range lines {
					}
				}()
				return cmd, got
			}
		case <-timeout:
			t.Fatalf("the helper hung; it wrote %q", got)
		}
	}
}

// killAndWait SIGKILLs the helper (it runs none of its own cleanup) and
// waits for each pid to be gone; every pid still running at the end is
// killed, so a failure leaves nothing behind.
func killAndWait(t *testing.T, helper *exec.Cmd, pids map[string]int) {
	t.Helper()
	t.Cleanup(func() { killAll(pids) })
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	for what, pid := range pids {
		proctest.WaitGone(t, pid, what+" after its parent was SIGKILLed")
	}
}

func killAll(pids map[string]int) {
	for _, pid := range pids {
		if pid > 0 && proctest.Alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// A child outlives the thread that asked for it to be started (its
// parent-death signal is tied to the thread that forked it, which must be
// one that lives as long as the process) and dies with its parent process.
func TestChildLivesWithItsParentNotWithTheStartingThread(t *testing.T) {
	helper, out := startHelper(t, "thread", func(line string) bool { return true })
	pid, alive, _ := strings.Cut(out[0], " ")
	if alive != "alive" {
		t.Fatalf("the child did not answer once the thread that started it ended: %q", out[0])
	}
	n, _ := strconv.Atoi(pid)
	killAndWait(t, helper, map[string]int{"the child": n})
}

// After its parent is SIGKILLed, nothing of a command's tree is left: not
// the command (parent-death signal), its background child (marked by the
// environment), a child in a session of its own (marked) and one that
// cleared its environment (in the command's process group); the
// supervisor exits once done.
func TestSupervisorEndsTheTreeOfAKilledParent(t *testing.T) {
	testenv.NeedCommand(t, "setsid", "starts a child in its own session")
	helper, out := startHelper(t, "tree", func(line string) bool { return line == "ready" })
	pids := map[string]int{}
	t.Cleanup(func() { killAll(pids) })
	for _, line := range out[:len(out)-1] {
		what, pid, _ := strings.Cut(line, " ")
		n, _ := strconv.Atoi(pid)
		pids[what] = n
	}
	for _, what := range []string{"shell", "child", "setsid", "clean", "supervisor"} {
		if pids[what] <= 0 {
			t.Fatalf("no %s pid: the helper wrote %q", what, out)
		}
	}
	killAndWait(t, helper, pids)
}

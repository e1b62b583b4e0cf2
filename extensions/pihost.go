package extensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zot-editors/zot/internal/childproc"
)

// One Node process per host runs every pi extension, as pi runs them in
// its own process: Node and the loader are paid once, each extension adds
// its modules. To the rest of the host each pi extension is still its own
// extension, with its own proc: trust, registrations, guard state, log,
// status, reload and restarts. Between them sits a demultiplexer, as the
// SEP bridge sits between a SEP child and the host: each member proc reads
// and writes ordinary v1 frames on its own pipes, and the Node process's
// stdio carries them tagged with the member's id:
//
//	ID<TAB>FRAME   a member's frame, either way
//	<TAB>CONTROL   the runtime's own messages: load, close (host → Node);
//	               exit, log (Node → host)
//
// A crash of the Node process ends every member in it: each is then a
// crashed extension, restarted by its slot (the first restart starts a new
// Node process). docs/decisions.md, "pi extensions: one Node process".

// EnvPiProcess chooses how pi extensions run: "shared" (the default: one
// Node process for all of a session's pi extensions) or "each" (a Node
// process per pi module or package, as before).
const EnvPiProcess = "ZOT_PI_PROCESS"

func piShared() bool { return os.Getenv(EnvPiProcess) != "each" }

// piRuntime is the shared Node process.
type piRuntime struct {
	h     *Host
	cmd   *exec.Cmd
	group *childproc.Group
	pid   int
	pidfd int
	stdin *os.File
	log   *extLog

	wmu sync.Mutex // one tagged line at a time on stdin

	mu      sync.Mutex
	members map[string]*piMember
	seq     int

	exited  chan struct{}
	exitErr error         // written before exited is closed
	done    chan struct{} // its waiter is over (members told)

	snapshot       string      // the startup snapshot it started from, or ""
	spoke          atomic.Bool // it wrote a line
	snapshotFailed atomic.Bool // it died from its snapshot (set before its members end)
}

// piMember is one pi extension inside the shared process: the far ends
// of its proc's pipes.
type piMember struct {
	n     *piRuntime
	id    string
	name  string
	fromW *os.File // the member's frames, for proc.readLoop
	log   *extLog

	closeSent atomic.Bool
	exitOnce  sync.Once
	exited    chan struct{}
	exitErr   error // written before exited is closed
}

// piControl is a runtime message (the CONTROL of a line).
type piControl struct {
	Op      string   `json:"op"`
	ID      string   `json:"id,omitempty"`
	Name    string   `json:"name,omitempty"`
	Modules []string `json:"modules,omitempty"`
	Code    int      `json:"code,omitempty"`
	Text    string   `json:"text,omitempty"`
}

// attachPi adds the pi extension c to the host's Node process (starting
// it when there is none) and returns its member and the proc's ends: in
// (frames to the extension, tagged straight onto the process's stdin) and
// out (frames from it).
func (h *Host) attachPi(s *slot, c Candidate) (m *piMember, in io.WriteCloser, out *os.File, err error) {
	h.piMu.Lock()
	defer h.piMu.Unlock()
	if h.closing.Load() {
		return nil, nil, nil, errors.New("host closed")
	}
	n := h.piRT
	if n == nil || n.isExited() {
		if n, err = h.startPiNode(); err != nil {
			return nil, nil, nil, err
		}
		h.piRT = n
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	n.mu.Lock()
	n.seq++
	m = &piMember{n: n, id: strconv.Itoa(n.seq), name: c.Name, fromW: fromW, log: s.log, exited: make(chan struct{})}
	n.members[m.id] = m
	n.mu.Unlock()
	n.control(piControl{Op: "load", ID: m.id, Name: c.Name, Modules: c.Manifest.Pi.Entries})
	// A Node process that died between the check above and now: the
	// member ends with it (its waiter may have run before it was added).
	if n.isExited() {
		m.finish(n.deathError())
	}
	return m, &memberWriter{m: m}, fromR, nil
}

// startPiNode starts `node host.js --shared`; h.piMu is held.
func (h *Host) startPiNode() (*piRuntime, error) {
	node, err := piNode()
	if err != nil {
		return nil, err
	}
	rt, err := piRuntimeDir()
	if err != nil {
		return nil, err
	}
	lg := &extLog{path: filepath.Join(h.o.Home, "logs", "pi-runtime.log")}
	stderr, err := lg.openForChild()
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer stderr.Close()
	inR, inW, outR, outW, err := stdioPipes()
	if err != nil {
		return nil, err
	}
	args, snapshot := h.piRuntimeArgs(node, rt, lg)
	cmd := exec.Command(node, args...)
	cmd.Dir = h.o.Cwd
	cmd.Env = extensionEnv(os.Environ(), nil)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	childproc.Prepare(cmd)
	pidfd := requestPidfd(cmd)
	err = childproc.Start(cmd)
	inR.Close()
	outW.Close()
	var group *childproc.Group
	if err == nil {
		if group, err = childproc.Attach(cmd); err != nil {
			_ = cmd.Wait()
		}
	}
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("cannot start node for pi extensions: %v (log: %s)", err, lg.path)
	}
	n := &piRuntime{h: h, cmd: cmd, group: group, pid: cmd.Process.Pid, pidfd: *pidfd, stdin: inW, log: lg, snapshot: snapshot,
		members: map[string]*piMember{}, exited: make(chan struct{}), done: make(chan struct{})}
	lg.printf("started the pi runtime (pid %d): %s %s", n.pid, node, strings.Join(cmd.Args[1:], " "))
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		n.readLoop(outR)
	}()
	go func() {
		defer close(n.done)
		awaitExit(n.pidfd)
		err := cmd.Wait()
		killGroup(n.pid, syscall.SIGKILL) // what it left behind
		n.group.Release()
		select {
		case <-readDone:
		case <-time.After(exitDrainWait):
			outR.Close()
			<-readDone
		}
		n.exitErr = err
		close(n.exited)
		n.stdin.Close()
		lg.printf("the pi runtime exited (%s)", exitText(err))
		if n.snapshot != "" && err != nil && !n.spoke.Load() && !h.closing.Load() {
			n.snapshotFailed.Store(true)
			h.piSnapshotCrashed(n.snapshot, lg)
		}
		n.mu.Lock()
		ms := make([]*piMember, 0, len(n.members))
		for _, m := range n.members {
			ms = append(ms, m)
		}
		n.mu.Unlock()
		for _, m := range ms {
			m.finish(n.deathError())
		}
	}()
	return n, nil
}

func (n *piRuntime) isExited() bool {
	select {
	case <-n.exited:
		return true
	default:
		return false
	}
}

// deathError is what a member that the process took down exited with.
func (n *piRuntime) deathError() error {
	return fmt.Errorf("the pi runtime (node, pid %d, shared by the session's pi extensions) exited (%s); its log: %s", n.pid, exitText(n.exitErr), n.log.path)
}

// write sends one tagged line to the Node process.
func (n *piRuntime) write(id string, frame []byte) error {
	b := make([]byte, 0, len(id)+len(frame)+2)
	b = append(append(append(b, id...), '\t'), frame...)
	if len(b) == 0 || b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	n.wmu.Lock()
	defer n.wmu.Unlock()
	_, err := n.stdin.Write(b)
	return err
}

func (n *piRuntime) control(c piControl) {
	b, _ := json.Marshal(c)
	if err := n.write("", b); err != nil && !n.isExited() {
		n.log.printf("cannot write to the pi runtime: %v", err)
	}
}

// readLoop routes the Node process's lines to their members.
func (n *piRuntime) readLoop(out *os.File) {
	defer out.Close()
	lr := newLineReader(out, n.h.o.MaxLineBytes+64)
	for {
		line, err := lr.next()
		if errors.Is(err, ErrLineTooLong) {
			n.log.printf("dropped a line longer than %d bytes", n.h.o.MaxLineBytes)
			lr.shrink()
			continue
		}
		if err != nil {
			return
		}
		n.spoke.Store(true)
		tab := strings.IndexByte(string(line[:min(len(line), 32)]), '\t')
		if tab < 0 {
			n.log.printf("not a tagged line: %.200s", line)
			continue
		}
		id, rest := string(line[:tab]), line[tab+1:]
		if id == "" {
			var c piControl
			if err := json.Unmarshal(rest, &c); err != nil {
				n.log.printf("bad control line: %v", err)
				continue
			}
			n.handleControl(c)
			continue
		}
		n.mu.Lock()
		m := n.members[id]
		n.mu.Unlock()
		if m == nil {
			continue // a member that already left
		}
		// One write: the member's reader sees whole lines.
		buf := make([]byte, len(rest)+1)
		copy(buf, rest)
		buf[len(rest)] = '\n'
		_, _ = m.fromW.Write(buf)
		lr.shrink()
	}
}

func (n *piRuntime) handleControl(c piControl) {
	n.mu.Lock()
	m := n.members[c.ID]
	n.mu.Unlock()
	if m == nil {
		return
	}
	switch c.Op {
	case "log":
		m.log.writeRaw(c.Text)
	case "exit":
		var err error
		if c.Code != 0 {
			err = fmt.Errorf("exit status %d", c.Code)
		}
		m.finish(err)
	}
}

// memberWriter is a member proc's stdin: what its writer queue writes
// (whole frames, or a large frame in pieces) goes to the Node process a
// line at a time, tagged. Closing it (stop, or a write failure) asks the
// runtime to unload the extension. Only the proc's queue writes to it.
type memberWriter struct {
	m       *piMember
	partial []byte
}

func (w *memberWriter) Write(b []byte) (int, error) {
	total := len(b)
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			w.partial = append(w.partial, b...)
			break
		}
		line := b[:nl+1]
		if len(w.partial) > 0 {
			line = append(w.partial, line...)
			w.partial = w.partial[:0]
		}
		b = b[nl+1:]
		if len(line) <= 1 {
			continue
		}
		if err := w.m.n.write(w.m.id, line); err != nil {
			return total - len(b), err
		}
	}
	return total, nil
}

func (w *memberWriter) Close() error {
	w.m.close()
	return nil
}

// close asks the runtime to unload the member (its stdin closed).
func (m *piMember) close() {
	if m.closeSent.CompareAndSwap(false, true) {
		select {
		case <-m.exited:
		default:
			m.n.control(piControl{Op: "close", ID: m.id})
		}
	}
}

// finish ends the member: its proc reads EOF and sees the exit.
func (m *piMember) finish(err error) {
	m.exitOnce.Do(func() {
		m.exitErr = err
		m.n.mu.Lock()
		delete(m.n.members, m.id)
		m.n.mu.Unlock()
		m.fromW.Close()
		close(m.exited)
	})
}

// signal is kill(2) for a member: SIGTERM asks the runtime to unload it;
// SIGKILL, for a member still there (the runtime did not unload it within
// termWait, or did not answer pings), means the Node process is stuck:
// it is killed, and every pi extension in it restarts.
func (m *piMember) signal(sig syscall.Signal) {
	if sig != syscall.SIGKILL {
		m.close()
		return
	}
	select {
	case <-m.exited:
		return
	default:
	}
	m.log.printf("the pi runtime did not let %s go; killing it (pid %d): every pi extension in it restarts", m.name, m.n.pid)
	m.n.log.printf("killed: %s was stuck", m.name)
	killGroup(m.n.pid, syscall.SIGKILL)
}

// stopPiNode ends the shared process when the host closes (its members
// have been stopped): stdin closed, then SIGTERM and SIGKILL.
func (h *Host) stopPiNode() {
	h.piMu.Lock()
	n := h.piRT
	h.piRT = nil
	h.piMu.Unlock()
	if n == nil {
		return
	}
	n.wmu.Lock()
	n.stdin.Close()
	n.wmu.Unlock()
	defer func() { <-n.done }()
	select {
	case <-n.exited:
		return
	case <-time.After(shutdownAckWait):
	}
	killGroup(n.pid, syscall.SIGTERM)
	select {
	case <-n.exited:
		return
	case <-time.After(termWait):
	}
	killGroup(n.pid, syscall.SIGKILL)
}

// spawnPiMember is spawn for a pi extension in the shared process.
func spawnPiMember(s *slot, c Candidate) (*proc, error) {
	m, in, outR, err := s.h.attachPi(s, c)
	if err != nil {
		return nil, err
	}
	p := newProc(s, c, m.n.pid, -1, outR, in)
	p.member = m
	s.log.printf("started %s (pid %d, the shared pi runtime; member %s): %s", c.Name, m.n.pid, m.id, strings.Join(c.Manifest.Pi.Entries, " "))
	p.run()
	return p, nil
}

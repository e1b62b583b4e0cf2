package extensions

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zot-editors/zot/extensions/sep"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/childproc"
)

// Process timings fixed by the protocol.
const (
	shutdownAckWait = 2 * time.Second // shutdown → shutdown_ack / exit
	termWait        = 1 * time.Second // SIGTERM → SIGKILL (3 s in total)
	exitDrainWait   = 200 * time.Millisecond
	logRotateBytes  = 16 << 20
)

// errStopped marks a process the host stopped on purpose.
var errStopped = errors.New("stopped by the host")

// proc is one running extension subprocess.
type proc struct {
	s       *slot
	name    string
	dir     string
	log     *extLog
	cmd     *exec.Cmd
	group   *childproc.Group // Windows: its Job Object
	pid     int
	pidfd   int // -1 when the platform has none
	stdout  *os.File
	out     *outQueue
	ui      *uiQueue
	timeout time.Duration

	helloCh   chan struct{}
	readyCh   chan struct{}
	readyOnce sync.Once
	activity  chan struct{}
	ackCh     chan struct{}
	ackOnce   sync.Once
	dead      chan struct{}
	deadOnce  sync.Once
	deadErr   error // written before dead is closed
	exited    chan struct{}
	exitErr   error // written before exited is closed
	readDone  chan struct{}

	stopping      atomic.Bool
	promisedReady atomic.Bool // hello.capabilities has "ready"
	crashHandled  atomic.Bool
	seq           atomic.Uint64
	badLines      atomic.Int64
	hugeLines     atomic.Int64
	wholeLogged   atomic.Int64 // bytes of cut UI texts logged whole (logWhole)
	noInputLogged atomic.Bool  // set_editor_text without a chat input was logged
	lastLine      atomic.Int64 // when the last line came (unix ns): pings go to an idle extension
	pingOut       atomic.Bool  // a ping of the host is unanswered (features.go)

	mu        sync.Mutex
	hello     wire.Frame
	gotHello  bool
	ready     bool
	autoReady string // why it counts as ready without a ready frame
	tools     []*toolReg
	commands  []cmdReg
	events    map[string]bool
	intercept map[string]bool
	pending   map[string]chan wire.Frame
	reqCtx    map[string]context.Context // contexts of the pending requests
	panels    map[string]bool
	// Additions to v1.
	caps     []string                // hello.capabilities
	extended bool                    // negotiated: gets host_capabilities and the extended event fields
	progress map[string]func(string) // tool_update targets by tool_call id
	dialogs  int                     // ui_requests open
	// dialogCancel stops an open ui_request or exec by its id (cancel: the
	// extension withdrew it, pi's AbortSignal on a dialog).
	dialogCancel map[string]context.CancelFunc
	dialogsDone  chan struct{}
	sessionGen   uint64 // the last session_start this process was sent
	diags        []string
	inflight     int
	idle         chan struct{}
	// SEP extensions: the codec between the process and the host's
	// frames, and SEP's longer shutdown grace (5 s).
	bridge *sep.Bridge
	// pi extensions in the shared Node process (pihost.go): the member;
	// cmd and group are then nil and pid is the Node process's.
	member *piMember
	// Providers (providers.go): registered, and the deltas of the model
	// calls in flight by provider_complete id.
	providers    []providerReg
	deltas       map[string]func(json.RawMessage)
	shutdownWait time.Duration
}

// stdioPipes makes a child's stdin (inR, inW) and stdout (outR, outW)
// pipes; on an error none is left open.
func stdioPipes() (inR, inW, outR, outW *os.File, err error) {
	if inR, inW, err = os.Pipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	if outR, outW, err = os.Pipe(); err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, nil, err
	}
	return inR, inW, outR, outW, nil
}

// spawn starts the extension's process and its reader, writer and waiter
// goroutines. The hello handshake continues asynchronously; see
// slot.startProc for the waits.
func spawn(s *slot, c Candidate) (*proc, error) {
	if c.Manifest.Pi != nil && piShared() {
		return spawnPiMember(s, c)
	}
	h := s.h
	execPath, execArgs, err := c.Manifest.Command(c.Dir)
	if err != nil {
		return nil, err
	}
	stderr, err := s.log.openForChild()
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer stderr.Close()
	inR, inW, outR, outW, err := stdioPipes()
	if err != nil {
		return nil, err
	}
	// A SEP extension's stdio goes to a sep.Bridge, which speaks the
	// host's frames on inR/outW: the rest of the host cannot tell.
	childIn, childOut := inR, outW
	var sepIn, sepOut *os.File
	if c.Manifest.SEP != nil {
		if childIn, sepIn, err = os.Pipe(); err == nil {
			if sepOut, childOut, err = os.Pipe(); err != nil {
				childIn.Close()
				sepIn.Close()
			}
		}
		if err != nil {
			inR.Close()
			inW.Close()
			outR.Close()
			outW.Close()
			return nil, err
		}
	}
	var cmd *exec.Cmd
	var pidfd *int
	for attempt := 0; ; attempt++ {
		cmd = exec.Command(execPath, execArgs...)
		cmd.Dir = c.workDir()
		cmd.Env = extensionEnv(os.Environ(), c.Manifest.Env)
		if c.Manifest.SEP != nil {
			cmd.Env = append(cmd.Env, c.Manifest.SEP.ExpandEnv(os.Getenv)...)
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = childIn, childOut, stderr
		// Its own process group (a Job Object on Windows), so stopping it
		// also stops whatever it spawned (a shell script's children).
		childproc.Prepare(cmd)
		pidfd = requestPidfd(cmd)
		err = childproc.Start(cmd) // dies with zot, even a killed one
		// A freshly rebuilt binary can still be open for writing for a
		// moment (ETXTBSY); retry briefly instead of failing the reload.
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || attempt >= 20 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if c.Manifest.SEP == nil {
		inR.Close()
		outW.Close()
	} else {
		childIn.Close()
		childOut.Close()
	}
	var group *childproc.Group
	if err == nil {
		// Windows: the process starts suspended and runs once it is in
		// its job (a failure kills it). Unix: the group it leads.
		if group, err = childproc.Attach(cmd); err != nil {
			_ = cmd.Wait()
		}
	}
	if err != nil {
		inW.Close()
		outR.Close()
		if c.Manifest.SEP != nil {
			inR.Close()
			outW.Close()
			sepIn.Close()
			sepOut.Close()
		}
		return nil, err
	}
	p := newProc(s, c, cmd.Process.Pid, *pidfd, outR, inW)
	p.cmd, p.group = cmd, group
	s.log.printf("started %s (pid %d): %s %s", c.Name, p.pid, execPath, strings.Join(execArgs, " "))
	if c.Manifest.SEP != nil {
		p.shutdownWait = sepShutdownWait
		p.bridge = newBridge(h, p, c, inR, outW, sepIn, sepOut)
		go func() {
			p.bridge.Run()
			inR.Close()
		}()
	}
	p.run()
	return p, nil
}

// newProc is the host's side of an extension connection: frames come on
// stdout and go to in.
func newProc(s *slot, c Candidate, pid, pidfd int, stdout *os.File, in io.WriteCloser) *proc {
	h := s.h
	p := &proc{
		s:         s,
		name:      c.Name,
		dir:       c.Dir,
		log:       s.log,
		pid:       pid,
		pidfd:     pidfd,
		stdout:    stdout,
		timeout:   c.Manifest.CallTimeout(h.o.ToolTimeout),
		helloCh:   make(chan struct{}),
		readyCh:   make(chan struct{}),
		activity:  make(chan struct{}, 1),
		ackCh:     make(chan struct{}),
		dead:      make(chan struct{}),
		exited:    make(chan struct{}),
		readDone:  make(chan struct{}),
		events:    map[string]bool{},
		intercept: map[string]bool{},
		pending:   map[string]chan wire.Frame{},
		reqCtx:    map[string]context.Context{},
		progress:  map[string]func(string){},
		deltas:    map[string]func(json.RawMessage){},
		panels:    map[string]bool{},
	}
	p.out = newOutQueue(in, h.o.EventQueue, p)
	p.ui = newUIQueue(h, p)
	return p
}

// run starts the connection's writer, reader and waiter goroutines.
func (p *proc) run() {
	go p.out.run()
	go p.ui.run()
	go p.readLoop()
	go p.waitLoop()
}

// waitLoop reaps the process. Frames it wrote just before exiting are
// still read (briefly), then the pipe is closed so a grandchild holding
// it open cannot keep the reader alive.
func (p *proc) waitLoop() {
	var err error
	if p.member != nil {
		<-p.member.exited
		err = p.member.exitErr
		p.exitErr = err
		close(p.exited)
	} else {
		awaitExit(p.pidfd) // no OS thread blocked per child (Linux)
		err = p.cmd.Wait()
		p.exitErr = err
		close(p.exited)
		killGroup(p.pid, syscall.SIGKILL) // whatever it left behind
		p.group.Release()                 // Windows: closing the job ends what is left in it
	}
	select {
	case <-p.readDone:
	case <-time.After(exitDrainWait):
		p.stdout.Close()
		<-p.readDone
	}
	p.markDead(fmt.Errorf("exited (%s)", exitText(err)))
	p.out.close(false)
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// readLoop reads frames until stdout closes.
func (p *proc) readLoop() {
	defer close(p.readDone)
	lr := newLineReader(p.stdout, p.s.h.o.MaxLineBytes)
	for {
		line, err := lr.next()
		if errors.Is(err, ErrLineTooLong) {
			if n := p.hugeLines.Add(1); n <= 20 || n%100 == 0 {
				p.log.printf("dropped a line longer than %d bytes (%d so far)", p.s.h.o.MaxLineBytes, n)
			}
			lr.shrink()
			continue
		}
		if err != nil {
			break
		}
		p.lastLine.Store(time.Now().UnixNano())
		select {
		case p.activity <- struct{}{}:
		default:
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		f, err := DecodeFrame(line)
		lr.shrink()
		if err != nil {
			p.mu.Lock()
			gotHello := p.gotHello
			p.mu.Unlock()
			if herr := badHello(line, err); herr != nil && !gotHello {
				// The extension meant to say hello and got it wrong:
				// fail its start now, naming the field (startProc).
				p.markDead(herr)
				go p.terminate()
				continue
			}
			p.logBad("skipped: %v", err)
			continue
		}
		p.handle(f)
	}
	// stdout is closed. If the process is still running it can never
	// answer again: treat it as dead and make sure it goes away.
	select {
	case <-p.exited:
		p.markDead(fmt.Errorf("exited (%s)", exitText(p.exitErr)))
	case <-time.After(100 * time.Millisecond):
		p.markDead(errors.New("closed its stdout"))
		go p.terminate()
	}
}

// logBad logs a bad line, rate-limited so a garbage flood cannot fill
// the disk: the first 20, then one in 1000.
func (p *proc) logBad(format string, args ...any) {
	n := p.badLines.Add(1)
	if n <= 20 || n%1000 == 0 {
		p.log.printf("(bad line #%d) "+format, append([]any{n}, args...)...)
	}
}

// markDead fails every pending call at once and reports the death to the
// slot (which restarts crashed extensions).
func (p *proc) markDead(err error) {
	p.deadOnce.Do(func() {
		p.mu.Lock()
		p.deadErr = err
		close(p.dead)
		p.mu.Unlock()
		if !p.stopping.Load() {
			p.log.printf("extension died: %v", err)
		}
		go p.s.procDied(p, err)
	})
}

func (p *proc) isDead() bool {
	select {
	case <-p.dead:
		return true
	default:
		return false
	}
}

// deadError is the error pending calls see.
func (p *proc) deadError() error {
	if p.stopping.Load() {
		return fmt.Errorf("extension %q was stopped", p.name)
	}
	return fmt.Errorf("extension %q crashed: %v", p.name, p.deadErr)
}

// terminate ends the process group: SIGTERM, then SIGKILL after 1 s.
func (p *proc) terminate() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.kill(syscall.SIGTERM)
	select {
	case <-p.exited:
		return
	case <-time.After(termWait):
	}
	p.kill(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		p.log.printf("process %d did not exit after SIGKILL", p.pid)
	}
}

// kill signals the extension's process group; for a pi extension in the
// shared Node process, its member (piMember.signal).
func (p *proc) kill(sig syscall.Signal) {
	if p.member != nil {
		p.member.signal(sig)
		return
	}
	killGroup(p.pid, sig)
}

// stop shuts the process down: pending calls fail at once, shutdown is
// sent (stdin closed after it), and a process that has not exited within
// 2 s is sent SIGTERM, then SIGKILL a second later.
func (p *proc) stop() {
	if !p.stopping.CompareAndSwap(false, true) {
		<-p.exited
		return
	}
	p.markDead(errStopped)
	b, _ := EncodeFrame(wire.Frame{Type: wire.TypeShutdown})
	p.out.push(b, false)
	p.out.close(true)
	wait := shutdownAckWait
	if p.shutdownWait > 0 {
		wait = p.shutdownWait
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	select {
	case <-p.exited:
		return
	case <-p.ackCh:
		select {
		case <-p.exited:
			return
		case <-deadline.C:
		}
	case <-deadline.C:
	}
	p.log.printf("no exit within %s of shutdown; sending SIGTERM", wait)
	p.terminate()
}

// begin registers an in-flight call; false if the process is dead.
func (p *proc) begin() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isDead() {
		return false
	}
	p.inflight++
	return true
}

// end finishes an in-flight call.
func (p *proc) end() {
	p.mu.Lock()
	p.inflight--
	if p.inflight == 0 && p.idle != nil {
		close(p.idle)
		p.idle = nil
	}
	p.mu.Unlock()
}

// waitIdle waits until no call is in flight (or the process died).
func (p *proc) waitIdle(ctx context.Context) error {
	for {
		p.mu.Lock()
		if p.inflight == 0 {
			p.mu.Unlock()
			return nil
		}
		if p.idle == nil {
			p.idle = make(chan struct{})
		}
		ch := p.idle
		p.mu.Unlock()
		select {
		case <-ch:
		case <-p.dead:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Errors of request.
var (
	errTimeout = errors.New("timed out")
)

// request sends a frame that expects a reply with the same id and waits
// for it, the timeout, ctx, or the process's death, whichever comes
// first. On timeout or cancellation with cancel set, tool_cancel is sent.
func (p *proc) request(ctx context.Context, f wire.Frame, timeout time.Duration, cancel bool) (wire.Frame, error) {
	if f.ID == "" {
		f.ID = p.newID(f.Type)
	}
	ch := make(chan wire.Frame, 1)
	p.mu.Lock()
	if p.isDead() {
		p.mu.Unlock()
		return wire.Frame{}, p.deadError()
	}
	p.pending[f.ID] = ch
	p.reqCtx[f.ID] = ctx
	p.mu.Unlock()
	b, err := EncodeFrame(f)
	if err != nil {
		p.forget(f.ID)
		return wire.Frame{}, err
	}
	p.out.push(b, false)
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	var rerr error
	select {
	case r := <-ch:
		return r, nil
	case <-p.dead:
		select {
		case r := <-ch: // answered just before dying
			return r, nil
		default:
		}
		p.forget(f.ID)
		// The dead extension's open dialogs are closed first (their
		// context ends with it), so a front sees a dialog closed before
		// the error moves the run on past it.
		if w := p.dialogWait(); w != nil {
			select {
			case <-w:
			case <-ctx.Done():
			}
		}
		return wire.Frame{}, p.deadError()
	case <-tc:
		rerr = errTimeout
	case <-ctx.Done():
		rerr = ctx.Err()
	}
	p.forget(f.ID)
	select {
	case r := <-ch:
		return r, nil
	default:
	}
	if cancel {
		if b, err := EncodeFrame(wire.Frame{Type: wire.TypeToolCancel, ID: f.ID}); err == nil {
			p.out.push(b, false)
		}
	}
	return wire.Frame{}, rerr
}

func (p *proc) forget(id string) {
	p.mu.Lock()
	delete(p.pending, id)
	delete(p.reqCtx, id)
	p.mu.Unlock()
}

// newID is a fresh request id.
func (p *proc) newID(typ string) string {
	return fmt.Sprintf("%s-%d", typ, p.seq.Add(1))
}

// send queues a one-way frame.
func (p *proc) send(f wire.Frame, droppable bool) {
	b, err := EncodeFrame(f)
	if err != nil {
		p.log.printf("cannot encode %s frame: %v", f.Type, err)
		return
	}
	p.out.push(b, droppable)
}

// outQueue is the per-extension writer: frames reach the extension in the
// order they were queued. One-way events are droppable: past the bound the
// oldest queued event is dropped (and logged). Requests and replies are
// never dropped; their callers' timeouts bound them.
type outQueue struct {
	w      io.WriteCloser
	p      *proc
	max    int
	mu     sync.Mutex
	items  []outItem
	events int
	drain  bool
	closed bool
	signal chan struct{}
	drops  int64
}

type outItem struct {
	b         []byte
	droppable bool
}

func newOutQueue(w io.WriteCloser, max int, p *proc) *outQueue {
	return &outQueue{w: w, p: p, max: max, signal: make(chan struct{}, 1)}
}

func (q *outQueue) push(b []byte, droppable bool) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	var dropped bool
	if droppable && q.events >= q.max {
		for i, it := range q.items {
			if it.droppable {
				q.items = append(q.items[:i], q.items[i+1:]...)
				q.events--
				dropped = true
				q.drops++
				break
			}
		}
	}
	q.items = append(q.items, outItem{b, droppable})
	if droppable {
		q.events++
	}
	drops := q.drops
	q.mu.Unlock()
	if dropped && (drops <= 10 || drops%1000 == 0) {
		q.p.log.printf("event queue full (%d events): dropped the oldest queued event (%d dropped so far)", q.max, drops)
	}
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// close stops the queue; with drain, what is queued is still written,
// then stdin is closed.
func (q *outQueue) close(drain bool) {
	q.mu.Lock()
	if !q.closed {
		q.closed, q.drain = true, drain
	}
	if !drain {
		q.items, q.events = nil, 0
	}
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// queueWriters lends each queue a write buffer while it writes a batch: an
// idle extension (most of them, most of the time) holds none.
var queueWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 8<<10) }} // larger frames are written through

func (q *outQueue) run() {
	defer q.w.Close()
	failed := false
	for range q.signal {
		for {
			q.mu.Lock()
			items := q.items
			q.items, q.events = nil, 0
			closed := q.closed
			q.mu.Unlock()
			if len(items) == 0 {
				if closed {
					return
				}
				break
			}
			if failed {
				continue
			}
			bw := queueWriters.Get().(*bufio.Writer)
			bw.Reset(q.w)
			for _, it := range items {
				if _, err := bw.Write(it.b); err != nil {
					failed = true
					break
				}
			}
			if !failed && bw.Flush() != nil {
				failed = true
			}
			bw.Reset(nil)
			queueWriters.Put(bw)
			if failed {
				go q.p.stdinFailed()
			}
		}
	}
}

// stdinFailed: the extension stopped reading its stdin. If it has not
// died on its own shortly after, it cannot be talked to: kill it.
func (p *proc) stdinFailed() {
	select {
	case <-p.dead:
	case <-time.After(exitDrainWait):
		p.markDead(errors.New("closed its stdin"))
		p.terminate()
	}
}

// extLog is an extension's log file: its stderr plus the host's lines.
type extLog struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

func newExtLog(home, name string) *extLog {
	return &extLog{path: filepath.Join(home, "logs", "ext-"+name+".log")}
}

// openForChild opens the file for a child's stderr (append mode), rotating
// a log past 16 MiB to .1 first.
func (l *extLog) openForChild() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return nil, err
	}
	l.mu.Lock()
	if st, err := os.Stat(l.path); err == nil && st.Size() > logRotateBytes {
		if l.f != nil {
			l.f.Close()
			l.f = nil
		}
		os.Rename(l.path, l.path+".1")
	}
	l.mu.Unlock()
	return os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
}

// printf appends one host line. Never pass environment values here.
func (l *extLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.opened() {
		return
	}
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(l.f, "[zot] %s %s\n", time.Now().Format("2006-01-02T15:04:05.000Z07:00"), strings.TrimRight(msg, "\n"))
}

// writeRaw appends text as the extension wrote it (a pi extension's
// stderr, which the shared Node process routes here).
func (l *extLog) writeRaw(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opened() {
		_, _ = l.f.WriteString(text)
	}
}

// opened opens the log for appending on first use; l.mu is held. False
// when it cannot be opened (the line is dropped: a log never fails a call).
func (l *extLog) opened() bool {
	if l.f != nil {
		return true
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return false
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	l.f = f
	return true
}

func (l *extLog) close() {
	l.mu.Lock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	l.mu.Unlock()
}

var _ io.Closer = (*os.File)(nil)

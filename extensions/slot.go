package extensions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/extensions/wire"
)

// slot is one discovered extension across its process lifetimes: it keeps
// its place in load order, its log, its crash count and its state while
// processes come and go (crash restarts, reloads).
type slot struct {
	h   *Host
	key string
	log *extLog
	op  sync.Mutex // serialises load / restart / stop

	mu       sync.Mutex
	cand     Candidate
	fp       string // fingerprint of the candidate last scheduled
	state    string
	reason   string
	cur      *proc         // the running, ready process
	adv      *proc         // whose registrations the registry offers
	gate     chan struct{} // open (closed channel) unless a reload is swapping processes
	crashes  int
	gen      int
	timer    *time.Timer
	asked    string // hash the trust question was asked for
	shadowed []string
	replaces []string // replaceable built-in tools this extension's tools replace
	removed  bool
	// guard: the extension's last running process intercepted tool_call.
	// While no process runs (crashed, restarting, given up, failed to
	// start, untrusted after a change, invalid manifest) the registry keeps
	// it as a tool_call interceptor, so tool calls are blocked instead of
	// slipping past a guard that is down. Only a new process that does not
	// intercept tool_call, or the user disabling or removing it, ends that.
	guard bool
	// offOK is the fingerprint for which the user confirmed that a guard
	// disabled by a file change may stop guarding.
	offOK string
	// starting is the process between spawn and ready (nil otherwise):
	// what it has subscribed to so far says whether a tool call or an
	// answer must wait for it (a guard, a redactor).
	starting *proc
	// leftOut: a prompt already went on without this start (the notice
	// named it); later prompts do not wait for it again.
	leftOut bool
}

var openGate = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func newSlot(h *Host, key string, c Candidate) *slot {
	return &slot{h: h, key: key, cand: c, log: newExtLog(h.o.Home, c.Name), state: StateStopped, gate: openGate}
}

func (s *slot) name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cand.Name
}

func (s *slot) setState(state, reason string) {
	s.mu.Lock()
	s.state, s.reason = state, reason
	s.mu.Unlock()
}

// fingerprint captures everything whose change reloads an extension: its
// place and manifest, its trust hash (extensions that need trust), and the
// stat keys of its code files (a rebuilt binary reloads even when nothing
// is hashed).
func (h *Host) fingerprint(c Candidate, hash string) string {
	errText := ""
	if c.Err != nil {
		errText = c.Err.Error()
	}
	trusted := !needsTrust(c.Source) || (hash != "" && IsTrusted(h.o.Home, h.o.Cwd, c.Name, hash))
	var code strings.Builder
	if c.Err == nil {
		fmt.Fprintf(&code, "%x", c.Raw)
		for _, f := range c.Manifest.codeFiles(c.Dir) {
			if fi, err := os.Stat(f); err == nil {
				fmt.Fprintf(&code, "|%s %+v", f, fileID(fi))
			}
		}
	}
	return strings.Join([]string{c.Dir, c.Source, fmt.Sprint(c.Manifest.IsEnabled()), c.ShadowedBy, errText, hash, fmt.Sprint(trusted), code.String()}, "\x00")
}

// hashConcurrency bounds the trust hashes computed at once.
var hashConcurrency = max(2, min(8, runtime.GOMAXPROCS(0)))

// trustHashes computes the trust hash of every candidate that needs one,
// in parallel (bounded); an unchanged file is only stat'ed (Hasher's
// cache). A candidate whose hash fails gets Err.
func (h *Host) trustHashes(cands []Candidate) []string {
	hashes := make([]string, len(cands))
	sem := make(chan struct{}, hashConcurrency)
	var wg sync.WaitGroup
	for i := range cands {
		c := &cands[i]
		if c.Err != nil || c.ShadowedBy != "" || !needsTrust(c.Source) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var err error
			if hashes[i], err = h.hasher.Hash(c.Dir, c.Manifest, c.Raw); err != nil {
				c.Err = fmt.Errorf("trust hash: %w", err)
			}
		}()
	}
	wg.Wait()
	if err := h.hasher.Save(); err != nil {
		h.logf("extensions: cannot save %s: %v", HashCacheFile, err)
	}
	return hashes
}

// rediscover scans the extension directories and reconciles the slots:
// new candidates load, vanished ones stop, changed ones (fingerprint)
// reload — only those. With force every candidate reloads and crash counts
// reset. With wait it returns after the loads finished.
//
// Only the scan and reconciliation are serialised; the loads run after
// discMu is released (each slot's loads are serialised by its op lock,
// and a load superseded by a newer scan does nothing), so a UI.Changed
// callback may call Reload without deadlocking.
func (h *Host) rediscover(ctx context.Context, force, wait bool) {
	h.discMu.Lock()
	locked := true
	defer func() {
		if locked {
			h.discMu.Unlock()
		}
	}()
	cands := h.discover()
	if h.watch != nil {
		h.watch.sync(cands)
	}
	type job struct {
		s        *slot
		c        Candidate
		hash, fp string
	}
	user := force // an explicit reload; a file change is not the user's word
	// Hash outside the locks: it may read files.
	hashes := h.trustHashes(cands)
	fps := make([]string, len(cands))
	for i := range cands {
		fps[i] = h.fingerprint(cands[i], hashes[i])
	}
	var jobs []job
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	old := map[string]*slot{}
	for _, s := range h.slots {
		old[s.key] = s
	}
	slots := make([]*slot, 0, len(cands))
	for i, c := range cands {
		key := c.Name
		switch {
		case c.Err != nil:
			key = "invalid:" + c.Dir
		case c.ShadowedBy != "":
			key = "shadowed:" + c.Dir
		}
		hash, fp := hashes[i], fps[i]
		s, ok := old[key]
		delete(old, key)
		if !ok {
			s = newSlot(h, key, c)
			if h.willStart(c, hash) {
				s.state = StateStarting // from the first Status on, until hello and ready
				// A guard last time is one until its process says
				// otherwise: tool calls wait for its start (and are
				// blocked if it cannot start).
				s.guard = h.guards.has(c.Dir)
			}
		}
		slots = append(slots, s)
		s.mu.Lock()
		if !ok || force || s.fp != fp {
			s.fp = fp
			jobs = append(jobs, job{s, c, hash, fp})
		}
		s.mu.Unlock()
	}
	h.slots = slots
	h.mu.Unlock()
	h.discMu.Unlock()
	locked = false

	var wg sync.WaitGroup
	run := func(fn func()) {
		h.mu.Lock()
		closed := h.closed
		if !closed {
			h.bg.Add(1)
		}
		h.mu.Unlock()
		if closed {
			return
		}
		wg.Add(1)
		go func() {
			defer h.bg.Done()
			defer wg.Done()
			fn()
		}()
	}
	for _, s := range old { // gone from disk
		s.mu.Lock()
		s.removed = true
		s.gen++
		dir := s.cand.Dir
		s.mu.Unlock()
		s.log.printf("no longer loaded from %s (removed, renamed, shadowed or invalid); stopping", dir)
		run(func() {
			s.op.Lock() // after any load in progress
			defer s.op.Unlock()
			s.stopAndDrain(h.ctx)
			s.setState(StateStopped, "removed")
			s.log.close()
		})
	}
	for _, j := range jobs {
		run(func() { j.s.load(ctx, j.c, j.hash, j.fp, user, wait) })
	}
	if wait {
		wg.Wait()
	}
	h.rebuild() // once per batch
	h.changed()
}

// load (re)starts the slot with candidate c, or parks it in a non-running
// state (invalid, shadowed, disabled, untrusted). A (re)load is new code or
// an explicit reload, so the crash count starts over. user: the user asked
// for it (an explicit reload), so a guard may be disabled without asking.
// batch: the caller rebuilds the registry once after all loads.
func (s *slot) load(ctx context.Context, c Candidate, hash, fp string, user, batch bool) {
	s.op.Lock()
	defer s.op.Unlock()
	h := s.h
	s.mu.Lock()
	if s.removed || s.fp != fp {
		s.mu.Unlock()
		return // gone, or superseded by a newer scan's load
	}
	s.gen++
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.cand = c
	s.crashes = 0
	s.mu.Unlock()

	var state, reason string
	switch {
	case c.Err != nil:
		state, reason = StateInvalid, c.Err.Error()
	case c.ShadowedBy != "":
		state, reason = StateShadowed, "shadowed by "+c.ShadowedBy
	case !c.Manifest.IsEnabled():
		s.mu.Lock()
		guard, confirmed := s.guard, s.offOK == fp
		if !guard || user || confirmed {
			s.guard = false
		}
		s.mu.Unlock()
		if guard && !user && !confirmed {
			s.guardOffPending(c, hash, fp)
			return
		}
		state, reason = StateDisabled, fmt.Sprintf("disabled in %s; run `zot ext enable %s`", c.Manifest.FileName(), c.Name)
	case needsTrust(c.Source) && !IsTrusted(h.o.Home, h.o.Cwd, c.Name, hash):
		state, reason = StateUntrusted, fmt.Sprintf("project-local extension not trusted (new or changed); run `zot ext trust %s`", c.Name)
	}
	if state != "" {
		s.stopAndDrain(h.ctx)
		s.setState(state, reason)
		if state != StateShadowed {
			s.log.printf("not started: %s", reason)
		}
		if !batch {
			h.rebuild()
			h.changed()
		}
		if state == StateUntrusted {
			s.askTrust(hash)
		}
		return
	}
	if h.isClosed() {
		return
	}

	// Swap: hold new calls at the gate, let in-flight ones finish on the
	// old process, stop it, start the new one, open the gate.
	s.mu.Lock()
	gate := make(chan struct{})
	s.gate = gate
	old := s.cur
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.gate == gate {
			s.gate = openGate
		}
		s.mu.Unlock()
		close(gate)
	}()
	if old != nil {
		old.waitIdle(h.ctx)
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
		old.stop()
	}
	s.mu.Lock()
	s.state, s.reason, s.leftOut = StateStarting, "", false // a new start: a prompt waits for it again
	s.mu.Unlock()
	p, err := s.startProc(ctx)
	if errors.Is(err, errPiSnapshotStart) {
		// The shared pi runtime could not start from its snapshot: the
		// host now starts it without one (pisnapshot.go).
		s.log.printf("%v; starting it again without the snapshot", err)
		p, err = s.startProc(ctx)
	}
	s.mu.Lock()
	if err != nil {
		s.cur, s.adv = nil, nil
		s.state, s.reason = StateFailed, err.Error()
		s.mu.Unlock()
		s.log.printf("failed to start: %v", err)
	} else if h.closing.Load() || s.removed {
		s.mu.Unlock()
		p.stop() // Close (or a removal) overtook the start
		return
	} else {
		s.cur, s.adv = p, p
		s.state, s.reason = StateReady, ""
		s.mu.Unlock()
		s.checkDiedEarly(p)
		if h.o.readied != nil {
			h.o.readied(c.Name)
		}
	}
	if !batch {
		h.rebuild()
		h.changed()
	}
}

// guardOffPending: a file change disabled a guard. It keeps guarding (or,
// if down, blocking) until the user confirms; then the disabling load runs.
func (s *slot) guardOffPending(c Candidate, hash, fp string) {
	h := s.h
	s.mu.Lock()
	s.cand = c
	if s.cur != nil {
		s.reason = fmt.Sprintf("disabled in %s by a file change; still guarding until you confirm", c.Manifest.FileName())
	}
	asked := s.asked == "off:"+fp
	s.asked = "off:" + fp
	s.mu.Unlock()
	s.log.printf("disabled in %s by a file change; a guard stops only when the user confirms", c.Manifest.FileName())
	h.changed()
	if h.o.ConfirmGuardOff == nil || asked {
		return
	}
	st := s.status()
	h.goBG(func() {
		if !h.o.ConfirmGuardOff(h.ctx, st) {
			s.log.printf("the user kept the guard on")
			return
		}
		s.mu.Lock()
		s.offOK = fp
		s.mu.Unlock()
		s.log.printf("the user confirmed disabling the guard")
		s.load(h.ctx, c, hash, fp, false, false)
	})
}

// checkDiedEarly handles a process that died between becoming ready and
// being installed as cur (its procDied saw a different cur).
func (s *slot) checkDiedEarly(p *proc) {
	if p.isDead() {
		go s.procDied(p, p.deadErr)
	}
}

// stopAndDrain stops the running process after its in-flight calls.
func (s *slot) stopAndDrain(ctx context.Context) {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	p := s.cur
	if p == nil {
		p = s.adv
	}
	s.cur, s.adv = nil, nil
	s.mu.Unlock()
	if p != nil {
		p.waitIdle(ctx)
		p.stop()
	}
	s.h.rebuild()
}

// shutdown is Close's part: stop now, no draining.
func (s *slot) shutdown() {
	s.mu.Lock()
	s.gen++
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	p := s.cur
	if p == nil {
		p = s.adv
	}
	s.mu.Unlock()
	if p != nil {
		p.stop()
	}
	s.mu.Lock()
	s.cur, s.adv = nil, nil
	if s.state == StateReady || s.state == StateStarting || s.state == StateRestarting {
		s.state, s.reason = StateStopped, "host closed"
	}
	s.mu.Unlock()
}

// startProc spawns a process and waits for hello and ready: no hello
// within HelloTimeout kills it; after hello, ready (or ReadyFallback of
// silence, zot's rule for extensions that never send ready, for one that
// did not declare "ready" in hello; at most HelloTimeout) makes it ready.
func (s *slot) startProc(ctx context.Context) (*proc, error) {
	h := s.h
	s.mu.Lock()
	c := s.cand
	s.mu.Unlock()
	// Bound the handshakes in flight: 100 extensions do not fork at once.
	select {
	case h.startSem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("start cancelled: %v", ctx.Err())
	case <-h.ctx.Done():
		return nil, errors.New("host closed")
	}
	defer func() { <-h.startSem }()
	p, err := spawn(s, c)
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %v (log: %s)", c.Manifest.Exec, err, s.log.path)
	}
	s.mu.Lock()
	s.starting = p
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.starting == p {
			s.starting = nil
		}
		s.mu.Unlock()
	}()
	fail := func(err error) (*proc, error) {
		p.stopping.Store(true)
		p.markDead(err)
		p.terminate()
		p.log.printf("%v", err)
		return nil, err
	}
	budget := h.helloBudget(c.Manifest)
	helloT := time.NewTimer(budget)
	defer helloT.Stop()
	select {
	case <-p.helloCh:
	case <-p.dead:
		<-p.readDone
		p.mu.Lock()
		got := p.gotHello
		p.mu.Unlock()
		if errors.Is(p.deadErr, errBadHello) {
			return fail(fmt.Errorf("%v; fix the extension's first frame (docs/extensions.md, Frames) (log: %s)", p.deadErr, s.log.path))
		}
		if !got {
			if p.member != nil && p.member.n.snapshotFailed.Load() {
				return nil, fmt.Errorf("%w: %s (log: %s)", errPiSnapshotStart, p.deadErr, s.log.path)
			}
			return nil, fmt.Errorf("%s before sending hello (log: %s)", p.deadErr, s.log.path)
		}
	case <-helloT.C:
		return fail(fmt.Errorf("no hello within %s; killed (log: %s; a manifest \"timeout\" in seconds gives it longer)", budget, s.log.path))
	case <-ctx.Done():
		return fail(fmt.Errorf("start cancelled: %v", ctx.Err()))
	case <-h.ctx.Done():
		return fail(errors.New("host closed"))
	}
	silence := time.NewTimer(h.o.ReadyFallback)
	defer silence.Stop()
	for {
		select {
		case <-p.readyCh:
			return p, nil
		case <-p.activity:
			if !silence.Stop() {
				select {
				case <-silence.C:
				default:
				}
			}
			silence.Reset(h.o.ReadyFallback)
		case <-silence.C:
			// Silence means ready unless the extension promised ready in
			// hello (our SDK does): that one will send it (a pause under
			// load is not the end of its registrations), up to the hello
			// budget. One that did not (zot's own clock registers and
			// never sends ready) must not hold its commands, or anyone's,
			// for the hello budget: what it registers later still
			// counts (handle rebuilds the registry).
			if p.promisedReady.Load() {
				continue
			}
			p.log.printf("no ready frame; ready after %s of silence", h.o.ReadyFallback)
			p.markReady("no ready frame; ready after silence")
		case <-helloT.C:
			p.log.printf("still registering after %s; treating as ready", budget)
			p.markReady(fmt.Sprintf("no ready frame within %s of start; ready without it", budget))
		case <-p.dead:
			return nil, fmt.Errorf("%s while registering (log: %s)", p.deadErr, s.log.path)
		case <-ctx.Done():
			return fail(fmt.Errorf("start cancelled: %v", ctx.Err()))
		case <-h.ctx.Done():
			return fail(errors.New("host closed"))
		}
	}
}

// procDied is called once per process death. A crash of the running
// process takes its tools out of the registry at once and schedules a
// restart.
func (s *slot) procDied(p *proc, err error) {
	s.h.closePanelsOf(p)
	p.ui.close()
	if p.stopping.Load() {
		return
	}
	s.mu.Lock()
	if s.cur != p || !p.crashHandled.CompareAndSwap(false, true) {
		s.mu.Unlock()
		return
	}
	_, _, _, intercepts := p.regs()
	s.cur, s.adv = nil, nil
	if intercepts[wire.EventToolCall] {
		s.guard = true
	}
	s.mu.Unlock()
	s.h.rebuild()
	s.onCrash(err)
}

// onCrash counts a crash and schedules the next restart, or gives up.
func (s *slot) onCrash(err error) {
	h := s.h
	s.mu.Lock()
	s.crashes++
	n := s.crashes
	if n > len(h.o.RestartBackoff) || h.isClosed() {
		s.state = StateFailed
		s.reason = fmt.Sprintf("crashed %d times, last: %v; not restarting (fix it and save, or reload)", n, err)
		reason := s.reason
		s.mu.Unlock()
		s.log.printf("%s", reason)
		h.changed()
		return
	}
	delay := h.o.RestartBackoff[n-1]
	s.state = StateRestarting
	s.reason = fmt.Sprintf("crashed (%v); restart %d of %d in %s", err, n, len(h.o.RestartBackoff), delay)
	gen := s.gen
	s.timer = time.AfterFunc(delay, func() { h.goBG(func() { s.restartAfterCrash(gen) }) })
	reason := s.reason
	s.mu.Unlock()
	s.log.printf("%s", reason)
	h.changed()
}

func (s *slot) restartAfterCrash(gen int) {
	s.op.Lock()
	defer s.op.Unlock()
	s.mu.Lock()
	if s.gen != gen || s.removed || s.state != StateRestarting {
		s.mu.Unlock()
		return
	}
	s.timer = nil
	c := s.cand
	s.mu.Unlock()
	// Restarting runs the code on disk again: it must still be the code
	// that was trusted.
	if needsTrust(c.Source) {
		hash, err := s.h.hasher.Hash(c.Dir, c.Manifest, c.Raw)
		if err == nil {
			s.h.hasher.Save()
		}
		if err != nil || !IsTrusted(s.h.o.Home, s.h.o.Cwd, c.Name, hash) {
			s.setState(StateUntrusted, fmt.Sprintf("changed since it was trusted; not restarted; run `zot ext trust %s`", c.Name))
			s.log.printf("not restarted: changed since it was trusted")
			s.h.rebuild()
			s.h.changed()
			if err == nil {
				s.askTrust(hash)
			}
			return
		}
	}
	p, err := s.startProc(s.h.ctx)
	if err != nil {
		s.onCrash(err)
		return
	}
	s.mu.Lock()
	if s.h.closing.Load() || s.removed {
		s.mu.Unlock()
		p.stop()
		return
	}
	s.cur, s.adv = p, p
	s.state, s.reason = StateReady, fmt.Sprintf("restarted after %d crash(es)", s.crashes)
	s.mu.Unlock()
	s.log.printf("restarted")
	s.checkDiedEarly(p)
	s.h.rebuild()
	s.h.changed()
}

// acquire returns the running process for a call, waiting while a reload
// swaps processes; the caller must call end on it.
func (s *slot) acquire(ctx context.Context) (*proc, error) {
	for {
		s.mu.Lock()
		gate := s.gate
		select {
		case <-gate:
			p := s.cur
			name, state, reason := s.cand.Name, s.state, s.reason
			if p != nil {
				ok := p.begin()
				s.mu.Unlock()
				if ok {
					return p, nil
				}
				return nil, p.deadError()
			}
			s.mu.Unlock()
			if reason != "" {
				return nil, fmt.Errorf("extension %q is %s: %s", name, state, reason)
			}
			return nil, fmt.Errorf("extension %q is %s", name, state)
		default:
		}
		s.mu.Unlock()
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// askTrust asks the front (once per hash) whether to trust the extension.
func (s *slot) askTrust(hash string) {
	h := s.h
	if h.o.AskTrust == nil {
		return
	}
	s.mu.Lock()
	if s.asked == hash {
		s.mu.Unlock()
		return
	}
	s.asked = hash
	s.mu.Unlock()
	st := s.status()
	h.goBG(func() {
		if !h.o.AskTrust(h.ctx, st) {
			if h.ctx.Err() != nil {
				return // closing: nobody answered
			}
			s.log.printf("trust declined")
			// Say so in the status (the positive event a front waits for):
			// unless a newer load replaced this question meanwhile.
			s.mu.Lock()
			current := s.state == StateUntrusted && s.asked == hash
			if current {
				s.reason = fmt.Sprintf("not trusted: declined when asked; run `zot ext trust %s` to run it", st.Name)
			}
			s.mu.Unlock()
			if current {
				h.changed()
			}
			return
		}
		s.mu.Lock()
		c := s.cand
		s.mu.Unlock()
		if err := RecordTrust(h.o.Home, h.o.Cwd, c.Name, hash); err != nil {
			s.log.printf("cannot record trust: %v", err)
			return
		}
		s.log.printf("trusted")
		h.rediscover(h.ctx, false, true)
	})
}

func (s *slot) setShadowed(list, replaces []string) {
	s.mu.Lock()
	prev, prevRepl := s.shadowed, s.replaces
	s.shadowed, s.replaces = list, replaces
	s.mu.Unlock()
	for _, x := range list {
		if !slices.Contains(prev, x) {
			s.log.printf("shadowed: %s", x)
		}
	}
	for _, x := range replaces {
		if !slices.Contains(prevRepl, x) {
			s.log.printf("replaces the %s: this extension's tool runs instead", x)
		}
	}
}

func (s *slot) status() Status {
	s.mu.Lock()
	c := s.cand
	st := Status{
		Name:        c.Name,
		Version:     c.Manifest.Version,
		Description: c.Manifest.Description,
		Language:    c.Manifest.Language,
		Dir:         c.Dir,
		Source:      c.Source,
		Secrets:     c.Manifest.secretsAsked(),
		State:       s.state,
		Reason:      s.reason,
		Shadowed:    slices.Clone(s.shadowed),
		Replaces:    slices.Clone(s.replaces),
		Crashes:     s.crashes,
		LogPath:     s.log.path,
	}
	p := s.adv
	if s.cur != nil {
		st.PID = s.cur.pid
	}
	if s.guard && s.adv == nil {
		st.Reason = guardDownReason(c.Name, st.Reason)
	}
	s.mu.Unlock()
	if p != nil {
		ts, cs, _, _ := p.regs()
		for _, t := range ts {
			st.Tools = append(st.Tools, t.name)
		}
		for _, c := range cs {
			st.Commands = append(st.Commands, c.name)
		}
		p.mu.Lock()
		st.Diagnostics = slices.Clone(p.diags)
		if p.autoReady != "" {
			st.Diagnostics = append(st.Diagnostics, p.autoReady)
		}
		p.mu.Unlock()
	}
	return st
}

// GuardBlocked starts the reason of a guard that is down.
const GuardBlocked = "guard failed: tools blocked"

func guardDownReason(name, reason string) string {
	r := fmt.Sprintf("%s until it runs again, or you disable it (`zot ext disable %s`) or remove it", GuardBlocked, name)
	if reason != "" {
		r += "; " + reason
	}
	return r
}

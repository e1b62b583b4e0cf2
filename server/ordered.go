package server

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
)

// Bounds of the dispatch queue (docs/protocol.md, "Transport").
const (
	// maxQueuedMessages and maxQueuedBytes bound what has been read but
	// not started. When either is reached the read loop waits for room:
	// backpressure on the editor's pipe instead of unbounded memory. One
	// message is always admitted, however large.
	maxQueuedMessages = 1024
	maxQueuedBytes    = 16 << 20
	// maxReleased bounds the requests that stepped out of the queue with
	// release (each keeps the goroutine it runs on). Past it, release is a
	// no-op and the request keeps its place.
	maxReleased = 32
	// bigMessage is the params size from which memory is returned to the
	// system as soon as the message was handled; burstMessages the number
	// of messages after which it is returned once the queue is empty.
	bigMessage    = 4 << 20
	burstMessages = 10_000
)

// dispatcher runs messages one at a time, in arrival order, on a fixed
// set of goroutines: one worker, plus one per request that stepped out of
// the queue with release(ctx). Slow requests (an extension command waiting
// on its process, a reload) release the queue at once, so the editor can
// still abort, type and press panel keys meanwhile; gopls does the same.
//
// It replaces jsonrpc2.AsyncHandler and an earlier goroutine-per-message
// queue, which held 62k goroutines and 2.5 GB for a burst of 100k
// didChange notifications (docs/decisions.md).
type dispatcher struct {
	next  jsonrpc2.Handler
	ctx   context.Context
	items chan queuedMessage
	room  chan struct{} // a worker took a message (wakes a waiting reader)

	mu          sync.Mutex
	queuedBytes int

	released  atomic.Int32
	sinceIdle atomic.Int64 // messages handled since memory was last returned
	stats     dispatchStats
}

type queuedMessage struct {
	ctx   context.Context
	reply jsonrpc2.Replier
	req   jsonrpc2.Request
	size  int
}

// dispatchStats are high-water marks for zot/debug/stats.
type dispatchStats struct {
	peakQueued   atomic.Int64
	peakReleased atomic.Int64
}

func raise(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// ordered starts the dispatcher's worker; it stops with ctx.
func ordered(ctx context.Context, next jsonrpc2.Handler) *dispatcher {
	d := &dispatcher{next: next, ctx: ctx, items: make(chan queuedMessage, maxQueuedMessages), room: make(chan struct{}, 1)}
	go d.work()
	return d
}

// handle queues a message; it is the read loop's side and waits only
// while the queue is full.
func (d *dispatcher) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	m := queuedMessage{ctx: ctx, reply: reply, req: req, size: len(req.Params())}
	for {
		d.mu.Lock()
		if d.queuedBytes == 0 || d.queuedBytes+m.size <= maxQueuedBytes {
			d.queuedBytes += m.size
			d.mu.Unlock()
			break
		}
		d.mu.Unlock()
		select {
		case <-d.room:
		case <-d.ctx.Done():
			return d.ctx.Err()
		}
	}
	select {
	case d.items <- m:
		raise(&d.stats.peakQueued, int64(len(d.items)))
		return nil
	case <-d.ctx.Done():
		return d.ctx.Err()
	}
}

// work runs queued messages until it hands the queue to another worker or
// the connection ends.
func (d *dispatcher) work() {
	for {
		select {
		case m := <-d.items:
			d.mu.Lock()
			d.queuedBytes -= m.size
			d.mu.Unlock()
			select {
			case d.room <- struct{}{}:
			default:
			}
			big := m.size >= bigMessage
			handedOff := d.run(m)
			m = queuedMessage{}
			burst := d.sinceIdle.Add(1) >= burstMessages && len(d.items) == 0
			if big || burst {
				// What the message (or the burst) allocated is garbage
				// now. Return it to the system at once instead of keeping
				// a heap sized for the peak until the scavenger gets to
				// it; a full collection is cheap next to a large message
				// or thousands of small ones.
				d.sinceIdle.Store(0)
				debug.FreeOSMemory()
			}
			if handedOff {
				return
			}
		case <-d.ctx.Done():
			return
		}
	}
}

// run handles one message and reports whether it released the queue (a
// new worker owns it now).
func (d *dispatcher) run(m queuedMessage) (handedOff bool) {
	var mu sync.Mutex
	const (
		running = iota
		released
		finished
	)
	state := running
	unlock := func() {
		mu.Lock()
		defer mu.Unlock()
		if state != running {
			return
		}
		n := d.released.Add(1)
		if n > maxReleased {
			d.released.Add(-1)
			return
		}
		raise(&d.stats.peakReleased, int64(n))
		state = released
		go d.work()
	}
	ctx := context.WithValue(m.ctx, releaseKey{}, unlock)
	d.next(ctx, m.reply, m.req)
	mu.Lock()
	handedOff = state == released
	state = finished // a release after the handler returned is too late
	mu.Unlock()
	if handedOff {
		d.released.Add(-1)
	}
	return handedOff
}

type releaseKey struct{}

// release lets the next message start before this request replies: the
// request keeps the goroutine it runs on and a new worker takes the queue.
func release(ctx context.Context) {
	if f, ok := ctx.Value(releaseKey{}).(func()); ok {
		f()
	}
}

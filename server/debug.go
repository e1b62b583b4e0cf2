package server

import (
	"context"
	"runtime"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
)

// debugStatsMethod answers the dispatch layer's high-water marks, for
// tests and for diagnosing a stuck server. It exists only when
// Options.DebugStats is set (`ZOT_DEBUG_STATS=1`), so no editor depends on
// it.
const debugStatsMethod = "zot/debug/stats"

// DebugStats is zot/debug/stats's result.
type DebugStats struct {
	// Goroutines is runtime.NumGoroutine now; PeakGoroutines the highest
	// it was when a message arrived.
	Goroutines     int `json:"goroutines"`
	PeakGoroutines int `json:"peakGoroutines"`
	// Queued is how many messages wait to start now; PeakQueued the most
	// that ever did; PeakReleased the most requests that were out of the
	// queue (release) at once.
	Queued       int `json:"queued"`
	PeakQueued   int `json:"peakQueued"`
	PeakReleased int `json:"peakReleased"`
}

// debugStats samples the goroutine count as each message arrives and
// answers zot/debug/stats on the read goroutine, ahead of the queue.
func (s *Server) debugStats(next jsonrpc2.Handler) jsonrpc2.Handler {
	if !s.opts.DebugStats {
		return next
	}
	var peak atomic.Int64
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		raise(&peak, int64(runtime.NumGoroutine()))
		if req.Method() != debugStatsMethod {
			return next(ctx, reply, req)
		}
		q := s.queue
		return reply(ctx, DebugStats{
			Goroutines:     runtime.NumGoroutine(),
			PeakGoroutines: int(peak.Load()),
			Queued:         len(q.items),
			PeakQueued:     int(q.stats.peakQueued.Load()),
			PeakReleased:   int(q.stats.peakReleased.Load()),
		}, nil)
	}
}

package server

import (
	"context"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// handler builds the chain by hand (not protocol.NewServer):
//
//	count          tracks messages until answered (for a clean end of input)
//	canceller      $/cancelRequest, numeric and string ids (cancel.go)
//	debugStats     zot/debug/stats, only with Options.DebugStats (debug.go)
//	ordered        one message at a time, in order, on a fixed set of
//	               goroutines; slow ones release the queue (ordered.go)
//	guard          panics become InternalError; errors never reach the conn
//	dispatch       initialize, shutdown, exit, didChange and zot/*
//	               (the typed table zotMethods, methods.go)
//	standard       the other LSP methods zot serves (lspMethods)
//
// go.lsp.dev/protocol's ServerHandler is not used: it needs all 60
// methods of protocol.Server and sends every method it does not know to
// Server.Request. initialize, initialized, shutdown, exit and didChange
// are answered in dispatch: v0.12's types lack LSP 3.17's
// positionEncoding, reject "params": null on shutdown/exit and a missing
// one on initialized, and cannot tell a full-text change from an edit at
// 0:0 (Range is not a pointer).
func (s *Server) handler() jsonrpc2.Handler {
	h := s.dispatch(s.standard)
	h = s.guard(h)
	s.queue = ordered(s.ctx, h)
	h = s.cancels.middleware(s.queue.handle)
	h = s.debugStats(h)
	return s.count(h)
}

// count tracks every message from its arrival (on the read goroutine) to
// its reply, so the answers to what arrived before the input ended still
// go out (Serve waits for them).
func (s *Server) count(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		s.handling.Add(1)
		s.arrived.Add(1)
		m := new(inFlight)
		return next(context.WithValue(ctx, inFlightKey{}, m), func(ctx context.Context, result any, err error) error {
			if !m.replied.Swap(true) {
				defer s.handling.Done()
				defer s.markProcessed()
			}
			return reply(ctx, result, err)
		}, req)
	}
}

func (s *Server) markProcessed() {
	s.procMu.Lock()
	s.processed++
	close(s.procCh)
	s.procCh = make(chan struct{})
	s.procMu.Unlock()
}

// inFlight is a message being handled; barrier finds it in the context.
type inFlight struct{ replied atomic.Bool }

type inFlightKey struct{}

// barrierWait bounds a barrier: a client that stopped reading must not
// hold a run for long.
const barrierWait = 5 * time.Second

// barrier waits until every message the client sent before now has been
// handled (bounded by max). After a call to the client returns, this
// makes the buffer changes the client sent before its answer (didOpen and
// didChange of an applied edit, the user's typing during a review) visible
// in the overlay: jsonrpc2 hands answers over at once but handles
// notifications in order, behind the requests before them. It waits at
// most barrierWait.
func (s *Server) barrier(ctx context.Context) {
	target := s.arrived.Load()
	if m, ok := ctx.Value(inFlightKey{}).(*inFlight); ok && !m.replied.Load() {
		// Called while handling a request (zot/applyCode): that request
		// is among the messages before now, and is answered only after
		// the barrier, so it is not waited for.
		target--
	}
	t := time.NewTimer(barrierWait)
	defer t.Stop()
	for {
		s.procMu.Lock()
		done, ch := s.processed >= target, s.procCh
		s.procMu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-t.C:
			s.logf("barrier: messages still unhandled after %v", barrierWait)
			return
		}
	}
}

func (s *Server) dispatch(std jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		_, isCall := req.(*jsonrpc2.Call)
		if ctx.Err() != nil {
			return reply(context.WithoutCancel(ctx), nil, rpcError(CodeRequestCancelled, "%s was cancelled", req.Method()))
		}
		method := req.Method()
		switch method {
		case protocol.MethodInitialize:
			res, err := s.initialize(ctx, req.Params())
			return reply(ctx, res, err)
		case protocol.MethodShutdown:
			return reply(ctx, nil, s.shutdown(ctx))
		case protocol.MethodExit:
			s.exit()
			return reply(ctx, nil, nil)
		}
		s.mu.Lock()
		st := s.state
		s.mu.Unlock()
		switch st {
		case stateNew:
			if isCall {
				return reply(ctx, nil, errNotInitialized())
			}
			return reply(ctx, nil, nil) // notifications before initialize are dropped
		case stateShutdown:
			if isCall {
				return reply(ctx, nil, rpcError(jsonrpc2.InvalidRequest, "zot lsp is shutting down: only exit is accepted"))
			}
			return reply(ctx, nil, nil)
		}
		if method == protocol.MethodInitialized {
			// Answered here: ServerHandler drops an initialized without
			// params (a decode error) and the host would never start.
			return reply(ctx, nil, s.Initialized(ctx, nil))
		}
		if method == protocol.MethodTextDocumentDidChange {
			s.didChange(req.Params())
			return reply(ctx, nil, nil)
		}
		if strings.HasPrefix(method, zotPrefix) {
			h, ok := zotMethods[method]
			if !ok {
				return reply(ctx, nil, errMethodNotFound(method))
			}
			res, err := h.serve(s, ctx, req.Params())
			if err != nil {
				if ctx.Err() != nil {
					err = rpcError(CodeRequestCancelled, "%s was cancelled", method)
				}
				if !isCall {
					s.logf("%s: %v", method, err)
				}
				return reply(ctx, nil, errFailed(err))
			}
			return reply(ctx, res, nil)
		}
		return std(ctx, reply, req)
	}
}

// guard turns a panic into an InternalError reply (so ordered, which
// waits for each reply, never stalls) and swallows handler errors, which
// jsonrpc2 would answer by closing the connection.
func (s *Server) guard(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) (err error) {
		var replied atomic.Bool
		once := func(ctx context.Context, result any, rerr error) error {
			if replied.Swap(true) {
				return nil
			}
			return reply(ctx, result, rerr)
		}
		defer func() {
			if p := recover(); p != nil {
				s.logf("panic in %s: %v\n%s", req.Method(), p, debug.Stack())
				once(ctx, nil, rpcError(jsonrpc2.InternalError, "internal error in %s: %v (please report it)", req.Method(), p))
			}
			if !replied.Load() {
				once(ctx, nil, nil)
			}
			err = nil
		}()
		if herr := next(ctx, once, req); herr != nil {
			s.logf("%s: %v", req.Method(), herr)
		}
		return nil
	}
}

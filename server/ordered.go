package server

import (
	"context"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// ordered is jsonrpc2.AsyncHandler with a release valve: messages start in
// arrival order and each waits for the one before it to reply — unless that
// one calls release(ctx) first. Slow requests (an extension command waiting
// on its process, a reload) release the queue at once, so the editor can
// still abort, type and press panel keys meanwhile; gopls does the same.
func ordered(next jsonrpc2.Handler) jsonrpc2.Handler {
	prev := make(chan struct{})
	close(prev)
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		waitFor := prev
		done := make(chan struct{})
		prev = done
		var once sync.Once
		unlock := func() { once.Do(func() { close(done) }) }
		ctx = context.WithValue(ctx, releaseKey{}, unlock)
		go func() {
			<-waitFor
			next(ctx, func(ctx context.Context, result any, err error) error {
				unlock()
				return reply(ctx, result, err)
			}, req)
		}()
		return nil
	}
}

type releaseKey struct{}

// release lets the next message start before this request replies.
func release(ctx context.Context) {
	if f, ok := ctx.Value(releaseKey{}).(func()); ok {
		f()
	}
}

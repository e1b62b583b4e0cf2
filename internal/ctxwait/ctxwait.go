// Package ctxwait waits for work to end, or for a context, whichever
// comes first.
package ctxwait

import "context"

// Wait runs wait (a WaitGroup's Wait, say) and returns nil once it has
// returned, or ctx's error once ctx is done first; wait then goes on in
// the background and its goroutine ends when it returns. A ctx that can
// never be done (context.Background) costs no goroutine.
func Wait(ctx context.Context, wait func()) error {
	if ctx.Done() == nil {
		wait()
		return nil
	}
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

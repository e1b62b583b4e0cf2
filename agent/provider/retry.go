package provider

import (
	"context"
	"errors"
	"time"
)

// Retries are ours, with what the SDKs' retry policy lacks:
//   - the SDKs retry only the request, not a stream that fails before its
//     first delta (an overloaded_error event, a dropped connection); our loop
//     retries any failure as long as nothing reached onEvent;
//   - one policy for both providers (0.5 s, 1 s, 2 s… capped at 8 s, or
//     Retry-After / retry-after-ms; x-should-retry: false stops);
//   - the wait goes through Options.Wait, so tests assert the number of
//     attempts and the delays asked for without sleeping or timing;
//   - a stalled stream (StallError) is retried once, before its first delta.
const (
	backoffBase   = 500 * time.Millisecond
	backoffCap    = 8 * time.Second
	maxRetryAfter = 60 * time.Second
)

type retrier struct {
	provider string
	max      int
	wait     func(ctx context.Context, d time.Duration) error
}

// attemptFunc makes one request; delivered reports whether any event
// reached the caller (after which nothing is retried).
type attemptFunc func() (resp Response, delivered bool, err error)

func (r *retrier) run(ctx context.Context, attempt attemptFunc) (Response, error) {
	stalls := 0
	for n := 1; ; n++ {
		resp, delivered, err := attempt()
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			resp.Stop = StopAborted
			return resp, ctx.Err()
		}
		if !delivered {
			resp = Response{}
		} else {
			resp.Stop = StopError
		}
		var ae *APIError
		var se *StallError
		isAPI := errors.As(err, &ae)
		retry := !delivered && n <= r.max
		switch {
		case isAPI:
			retry = retry && ae.Retryable()
		case errors.As(err, &se):
			// A server that went silent once may again: one more try.
			stalls++
			retry = retry && stalls == 1
		default:
			retry = retry && retryableTransport(err) && !refusedLoopback(err)
		}
		if !retry {
			if isAPI && n > 1 {
				ae.Attempts = n
			}
			return resp, err
		}
		if err := r.wait(ctx, r.delay(ae, n)); err != nil {
			return Response{Stop: StopAborted}, ctx.Err()
		}
	}
}

// delay is the wait before attempt n+1.
func (r *retrier) delay(ae *APIError, n int) time.Duration {
	if ae != nil && ae.HasRetryAfter {
		return min(ae.RetryAfter, maxRetryAfter)
	}
	d := backoffBase << (n - 1)
	if d > backoffCap || d <= 0 {
		d = backoffCap
	}
	return d
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

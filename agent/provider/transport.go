package provider

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Both APIs are one streaming POST each, so the transport is net/http and
// nothing else. The official SDKs did this job until measured: importing
// them alone costs 8.5 MB of resident memory and 32 MB of binary (their
// generated packages' init and data), which put an idle `zot rpc` over its
// 20 MB budget, while we used only their Post (see docs/decisions.md).
// The SDKs stay as test-only dependencies: conformance_test.go builds the
// same requests with their param types and runs their stream decoders over
// the recorded streams in testdata/, to keep our wire honest.

const anthropicVersion = "2023-06-01"

// userAgent names zot to the APIs.
const userAgent = "zot"

// endpoint is what both clients share: the HTTP client, the provider's
// auth headers, retries and the catalogue that prices the usage.
type endpoint struct {
	provider string
	hc       *http.Client
	header   http.Header
	retry    retrier
	catalog  *Catalog
	// firstByte and idle bound the silences of a stream (see watchdog).
	firstByte, idle time.Duration
}

func newEndpoint(provider string, opts Options, r retrier) endpoint {
	e := endpoint{provider: provider, hc: opts.HTTPClient, header: http.Header{}, retry: r, catalog: opts.Catalog,
		firstByte: opts.FirstByteTimeout, idle: opts.IdleTimeout}
	if e.firstByte == 0 {
		e.firstByte = DefaultFirstByteTimeout
	}
	if e.idle == 0 {
		e.idle = DefaultIdleTimeout
	}
	return e
}

// Stream silences zot waits out before it gives up on a connection. The
// first byte may take long (a big prompt on a local server, a reasoning
// model thinking before its first chunk); once streaming, both APIs send
// something (a delta, a ping) every few seconds.
const (
	DefaultFirstByteTimeout = 5 * time.Minute
	DefaultIdleTimeout      = 2 * time.Minute
)

// StallError is a stream that sent nothing for too long.
type StallError struct {
	Provider string
	Silence  time.Duration
	// Started: some of the answer had arrived (else no byte of the body did).
	Started bool
}

func (e *StallError) Error() string {
	if !e.Started {
		return fmt.Sprintf("%s: the stream stalled: no response within %s of sending the request (the server may be down or overloaded; send the prompt again)", e.Provider, e.Silence)
	}
	return fmt.Sprintf("%s: the stream stalled: nothing received for %s in the middle of the answer (the partial answer was not kept; send the prompt again)", e.Provider, e.Silence)
}

// watchdog cancels an attempt whose stream falls silent: firstByte until
// the body's first byte, idle between reads after that. Reads of the body
// go through it so each one re-arms the timer.
type watchdog struct {
	body      io.Reader
	timer     *time.Timer
	firstByte time.Duration
	idle      time.Duration
	started   bool
	fired     chan struct{}
}

func newWatchdog(cancel context.CancelFunc, firstByte, idle time.Duration) *watchdog {
	w := &watchdog{firstByte: firstByte, idle: idle, fired: make(chan struct{})}
	w.timer = time.AfterFunc(firstByte, func() { close(w.fired); cancel() })
	return w
}

func (w *watchdog) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 {
		w.started = true
		w.timer.Reset(w.idle)
	}
	return n, err
}

// stalled reports the stall, if the timer fired.
func (w *watchdog) stalled(provider string) *StallError {
	select {
	case <-w.fired:
		d := w.firstByte
		if w.started {
			d = w.idle
		}
		return &StallError{Provider: provider, Silence: d, Started: w.started}
	default:
		return nil
	}
}

// stream POSTs body to url (with retries) and decodes the streamed answer
// with read; the response's usage is priced for model.
func (c endpoint) stream(ctx context.Context, url string, body *sharedBody, extra http.Header, model Model, onEvent func(StreamEvent),
	read func(io.Reader, func(StreamEvent)) (Response, bool, error)) (Response, error) {
	defer body.done()
	resp, err := c.retry.run(ctx, func() (Response, bool, error) {
		actx, cancel := context.WithCancel(ctx)
		dog := newWatchdog(cancel, c.firstByte, c.idle)
		defer dog.timer.Stop()
		raw, err := post(actx, c.hc, c.provider, url, c.header, extra, body)
		if err != nil {
			cancel()
			if s := dog.stalled(c.provider); s != nil && ctx.Err() == nil {
				return Response{}, false, s
			}
			return Response{}, false, err
		}
		dog.body = raw.Body
		onEvent(StreamEvent{Open: true})
		resp, delivered, err := read(dog, onEvent)
		if err == nil {
			go drain(raw.Body, cancel)
			return resp, delivered, nil
		}
		raw.Body.Close()
		cancel()
		if ctx.Err() == nil {
			if s := dog.stalled(c.provider); s != nil {
				return resp, delivered, s
			}
		}
		return resp, delivered, err
	})
	if err != nil {
		err = explain(err, model, c.catalog)
	}
	cost(c.catalog, model, &resp.Usage)
	return resp, err
}

// drain reads what is left of a finished stream, then closes it. The end
// of the answer (message_stop, [DONE]) is often a packet ahead of the end
// of the HTTP body (the chunked terminator), and net/http closes a
// connection whose body is closed before its end: every such call made the
// next one connect again (and, to a provider, shake hands with TLS again:
// a round trip and milliseconds of CPU). The call has returned by then; a
// server that keeps the body open past drainWait loses the connection.
func drain(body io.ReadCloser, cancel context.CancelFunc) {
	t := time.AfterFunc(drainWait, cancel)
	io.Copy(io.Discard, io.LimitReader(body, drainLimit))
	t.Stop()
	body.Close()
	cancel()
	drained()
}

// drained is called when drain is done (a test's hook).
var drained = func() {}

// drainWait and drainLimit bound what drain waits for and reads.
const (
	drainWait  = 2 * time.Second
	drainLimit = 64 << 10
)

// post sends one JSON request and returns the response when it is 2xx.
// Any other status becomes an *APIError carrying the API's own message and
// the retry headers; a connection failure becomes a readable transport error.
func post(ctx context.Context, hc *http.Client, provider, url string, header, extra http.Header, body *sharedBody) (*http.Response, error) {
	r := body.reader()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, r)
	if err != nil {
		r.Close()
		return nil, transportError(provider, err)
	}
	req.ContentLength = int64(len(body.data))
	req.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
	req.Header = header.Clone()
	for k, v := range extra {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", userAgent)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, transportError(provider, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return nil, httpError(provider, resp.StatusCode, string(raw), resp.Header)
}

// httpError builds the *APIError of a non-2xx answer.
func httpError(provider string, status int, raw string, header http.Header) *APIError {
	e := &APIError{Provider: provider, Status: status}
	e.Type, e.Message = errorBody(raw)
	if e.Message == "" {
		e.Message = strings.ToLower(http.StatusText(status))
		if e.Message == "" {
			e.Message = "error"
		}
	}
	if header != nil {
		e.RetryAfter, e.HasRetryAfter = retryAfter(header, time.Now())
		e.NoRetry = strings.EqualFold(header.Get("x-should-retry"), "false")
	}
	return e
}

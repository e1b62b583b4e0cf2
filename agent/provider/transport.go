package provider

import (
	"bytes"
	"context"
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
// The SDKs stay as test-only dependencies: stream_test.go feeds the
// scripted server's streams through their decoders to keep our wire honest.

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
}

func newEndpoint(provider string, opts Options, r retrier) endpoint {
	return endpoint{provider: provider, hc: opts.HTTPClient, header: http.Header{}, retry: r, catalog: opts.Catalog}
}

// stream POSTs body to url (with retries) and decodes the streamed answer
// with read; the response's usage is priced for model.
func (c endpoint) stream(ctx context.Context, url string, body []byte, model Model, onEvent func(StreamEvent),
	read func(io.Reader, func(StreamEvent)) (Response, bool, error)) (Response, error) {
	resp, err := c.retry.run(ctx, func() (Response, bool, error) {
		raw, err := post(ctx, c.hc, c.provider, url, c.header, body)
		if err != nil {
			return Response{}, false, err
		}
		defer raw.Body.Close()
		return read(raw.Body, onEvent)
	})
	cost(c.catalog, model, &resp.Usage)
	return resp, err
}

// post sends one JSON request and returns the response when it is 2xx.
// Any other status becomes an *APIError carrying the API's own message and
// the retry headers; a connection failure becomes a readable transport error.
func post(ctx context.Context, hc *http.Client, provider, url string, header http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, transportError(provider, err)
	}
	req.Header = header.Clone()
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

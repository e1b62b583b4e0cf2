package provider

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// APIError is an error answered by a model API, as a person can read it:
// "anthropic: 401 invalid x-api-key".
type APIError struct {
	Provider string
	// Status is the HTTP status; 0 for an error event inside a stream.
	Status int
	// Type is the API's error type when it gave one (rate_limit_error,
	// overloaded_error, invalid_request_error…).
	Type    string
	Message string
	// RetryAfter is what Retry-After / retry-after-ms asked for, if HasRetryAfter.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// NoRetry is set when the server said x-should-retry: false.
	NoRetry bool
	// Attempts is how many requests were made, when more than one.
	Attempts int
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	if e.Status != 0 {
		b.WriteString(strconv.Itoa(e.Status))
		b.WriteByte(' ')
	}
	b.WriteString(e.Message)
	if e.Status == 0 && e.Type != "" {
		b.WriteString(" (" + e.Type + ")")
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Retryable reports whether the request may succeed if sent again.
func (e *APIError) Retryable() bool {
	if e.NoRetry {
		return false
	}
	if e.Status != 0 {
		return e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout || e.Status >= 500
	}
	switch e.Type {
	case "overloaded_error", "api_error", "rate_limit_error", "server_error", "timeout_error":
		return true
	}
	return false
}

// errorBody extracts the type and message of an API error body; both APIs
// use {"error":{"type","message"}}. A body that is not JSON is used as the
// message, shortened.
func errorBody(raw string) (typ, msg string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", ""
	}
	if !gjson.Valid(raw) {
		return "", shorten(raw)
	}
	r := gjson.Parse(raw)
	e := r.Get("error")
	switch {
	case e.IsObject():
		typ, msg = e.Get("type").String(), e.Get("message").String()
		if typ == "" {
			typ = e.Get("code").String()
		}
	case e.Type == gjson.String:
		msg = e.Str
	}
	if msg == "" {
		msg = r.Get("message").String()
	}
	if msg == "" {
		msg = r.Get("detail").String()
	}
	if msg == "" {
		msg = shorten(raw)
	}
	return typ, msg
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// retryAfter reads retry-after-ms, then Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// streamError is an error event inside a stream.
func streamError(provider string, data string) *APIError {
	typ, msg := errorBody(data)
	if msg == "" {
		msg = "error event in stream"
	}
	return &APIError{Provider: provider, Type: typ, Message: msg}
}

// transportError keeps err (for errors.Is) behind a readable message.
type transportErr struct {
	msg string
	err error
}

func (e *transportErr) Error() string { return e.msg }
func (e *transportErr) Unwrap() error { return e.err }

func transportError(provider string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &transportErr{msg: fmt.Sprintf("%s: cannot reach %s: %v", provider, ue.URL, ue.Err), err: err}
	}
	return &transportErr{msg: provider + ": " + err.Error(), err: err}
}

// retryableTransport reports whether a non-API error is a connection
// problem worth another attempt.
func retryableTransport(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, errTruncated)
}

var errTruncated = errors.New("stream ended before its final event")

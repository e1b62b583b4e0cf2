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
	"syscall"
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
	// Hint says what to do about it (set by explain).
	Hint string
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
	if e.Hint != "" {
		b.WriteString(" — ")
		b.WriteString(e.Hint)
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

// refusedLoopback reports a connection refused by a loopback address:
// nothing listens on that port of this machine (a local server not
// started, a wrong --base-url), and waiting will not change that, so the
// call fails at once instead of backing off for seconds.
func refusedLoopback(err error) bool {
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return false
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Addr == nil {
		return false
	}
	host, _, splitErr := net.SplitHostPort(oe.Addr.String())
	if splitErr != nil {
		host = oe.Addr.String()
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var errTruncated = errors.New("stream ended before its final event")

// explain adds to an API error what the user can do about it: which
// credential to fix, which model ids exist, how to shrink the context.
func explain(err error, m Model, cat *Catalog) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Hint != "" {
		return err
	}
	msg := strings.ToLower(ae.Message)
	switch {
	case ae.Status == http.StatusUnauthorized || ae.Type == "authentication_error" || ae.Type == "invalid_api_key":
		ae.Hint = "the API key was refused: set " + envKey(ae.Provider) + " (or --api-key, or $ZOT_HOME/auth.json) to a valid key"
	case ae.Status == http.StatusForbidden || ae.Type == "permission_error":
		ae.Hint = "this key may not use model " + m.ID + "; check the key's permissions or pick another model (/model)"
	case ae.Status == http.StatusNotFound && (strings.Contains(msg, "model") || ae.Type == "not_found_error" || ae.Type == "model_not_found"):
		ae.Hint = "unknown model " + strconv.Quote(m.ID)
		if cat == nil {
			cat = Builtin()
		}
		if ids := cat.ids(m.Provider); len(ids) > 0 {
			ae.Hint += "; known " + m.Provider + " models: " + strings.Join(ids, ", ")
		}
		ae.Hint += " (switch with /model or --model)"
	case ae.Status == http.StatusRequestEntityTooLarge || contextTooLong(msg, ae.Type):
		ae.Hint = "the conversation is too long for " + m.ID + "; run /compact to summarise it, or /new to start over"
	case ae.Type == "overloaded_error" || ae.Status == 529 || ae.Status == http.StatusServiceUnavailable:
		if ae.Status == 0 {
			ae.Hint = "the API is overloaded and cut the answer short; send the prompt again in a moment"
		} else {
			ae.Hint = "the API is overloaded; try again in a moment"
		}
	case ae.Status == http.StatusTooManyRequests || ae.Type == "rate_limit_error":
		ae.Hint = "rate limited; wait a moment, or check the account's limits"
	}
	return err
}

func contextTooLong(msg, typ string) bool {
	return typ == "context_length_exceeded" || typ == "request_too_large" ||
		strings.Contains(msg, "prompt is too long") || strings.Contains(msg, "context length") ||
		strings.Contains(msg, "context_length") || strings.Contains(msg, "context window") ||
		strings.Contains(msg, "too many tokens")
}

func envKey(provider string) string {
	if provider == OpenAI {
		return "OPENAI_API_KEY"
	}
	return "ANTHROPIC_API_KEY"
}

package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/agent/llmtest/jsonresume"
	"github.com/zot-editors/zot/internal/jsonstr"
)

// Server is a running scripted LLM server.
type Server struct {
	mu      sync.Mutex
	script  Script
	next    int // index of the current reply
	fails   int // 429s already answered for the current reply
	served  int // replies consumed (for ids and the exhausted message)
	records []*record
	// dropBodies: records keep no body (see DropBodies).
	dropBodies bool

	gates map[string]*gate

	validator jsonresume.Validator // of request bodies

	ln   net.Listener
	srv  *http.Server
	url  string
	done chan struct{}
	once sync.Once
}

// RecordedRequest is one request the server received.
type RecordedRequest struct {
	Method string
	Path   string
	Header http.Header
	// Body is the parsed JSON body (nil when it is not a JSON object).
	Body map[string]any
	// Raw is the body as sent.
	Raw []byte
}

type record struct {
	req    RecordedRequest
	parsed bool
}

// New starts a server for script on 127.0.0.1 (a random port). It panics if
// it cannot listen, like httptest.NewServer. Close it when done.
func New(script Script) *Server {
	s, err := start("127.0.0.1:0", script)
	if err != nil {
		panic("llmtest: " + err.Error())
	}
	return s
}

func start(addr string, script Script) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{script: script, ln: ln, done: make(chan struct{})}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed
	return s, nil
}

// Serve runs a server for script on addr ("" or "127.0.0.1:0" for a random
// port) until ctx is done; ready, if not nil, gets the base URL once the
// server listens. It returns nil when ctx ends it. This is `zot mock-llm`.
func Serve(ctx context.Context, addr string, script Script, ready func(url string)) error {
	if err := script.Validate(); err != nil {
		return fmt.Errorf("llmtest: %w", err)
	}
	s, err := start(addr, script)
	if err != nil {
		return fmt.Errorf("llmtest: %w", err)
	}
	if ready != nil {
		ready(s.URL())
	}
	<-ctx.Done()
	s.Close()
	return nil
}

// URL is the base URL of the server, "http://127.0.0.1:PORT", usable as the
// base URL of both SDKs (the server routes on the path suffix).
func (s *Server) URL() string { return s.url }

// AnthropicURL is the base URL in the form the Anthropic SDK expects
// (no /v1; the SDK appends v1/messages).
func (s *Server) AnthropicURL() string { return s.url }

// OpenAIURL is the base URL in the form the OpenAI SDK expects (with /v1;
// the SDK appends chat/completions).
func (s *Server) OpenAIURL() string { return s.url + "/v1" }

// Close stops the server and ends hanging streams.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Requests returns the requests received so far, in order (429 answers of
// fail_times included, so len counts attempts).
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]RecordedRequest, len(s.records))
	for i, r := range s.records {
		if !r.parsed {
			r.parsed = true
			var m map[string]any
			if json.Unmarshal(r.req.Raw, &m) == nil {
				r.req.Body = m
			}
		}
		out[i] = r.req
	}
	return out
}

// DropBodies makes the requests received from now on recorded without
// their bodies (Raw and Body nil; method, path and header kept). A
// benchmark's long session would otherwise hold every body it sent — at
// 400 prompts some 350 MB, whose allocation in the benchmark's own process
// slows the answers zot waits for, and the waiting costs zot CPU.
func (s *Server) DropBodies() {
	s.mu.Lock()
	s.dropBodies = true
	s.mu.Unlock()
}

// Append adds replies to the end of the script.
func (s *Server) Append(replies ...Reply) {
	s.mu.Lock()
	s.script.Replies = append(s.script.Replies, replies...)
	s.mu.Unlock()
}

// Served is the number of replies consumed so far.
func (s *Server) Served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

type api int

const (
	apiNone api = iota
	apiAnthropic
	apiOpenAI
	apiModels
)

func route(path string) api {
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(path, "/messages"):
		return apiAnthropic
	case strings.HasSuffix(path, "/chat/completions"):
		return apiOpenAI
	case strings.HasSuffix(path, "/models"):
		return apiModels
	}
	return apiNone
}

type action int

const (
	actStream action = iota
	actFail
	actExhausted
)

// take picks the answer to the next model request.
func (s *Server) take() (Reply, int, action) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.script.Replies) {
		if !s.script.Loop || len(s.script.Replies) == 0 {
			return Reply{}, s.served, actExhausted
		}
		s.next = 0
	}
	r := s.script.Replies[s.next]
	if s.fails < r.FailTimes {
		s.fails++
		return r, s.served + 1, actFail
	}
	s.next++
	s.fails = 0
	s.served++
	return r, s.served, actStream
}

// RequestsPath answers GET with the model requests received so far (not
// counting its own): a JSON array of {"path", "body"}. It lets a test
// outside the process (the VS Code end-to-end test, through `zot mock-llm`)
// check what the client sent.
const RequestsPath = "/llmtest/requests"

// ServedRequest is one entry of RequestsPath's answer: the request's path
// and its body as sent (a JSON string when the body was not JSON).
type ServedRequest struct {
	Path string          `json:"path"`
	Body json.RawMessage `json:"body"`
}

// FetchRequests asks the server at baseURL, usually in another process
// (`zot mock-llm`), for the model requests it has received.
func FetchRequests(baseURL string) ([]ServedRequest, error) {
	resp, err := http.Get(baseURL + RequestsPath)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", RequestsPath, resp.Status)
	}
	var out []ServedRequest
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("GET %s: %w", RequestsPath, err)
	}
	return out, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == RequestsPath && r.Method == http.MethodGet {
		s.serveRequests(w)
		return
	}
	body, err := readBody(r)
	if err != nil {
		return
	}
	kind := route(r.URL.Path)
	s.mu.Lock()
	kept := body
	if s.dropBodies {
		kept = nil
	}
	s.records = append(s.records, &record{req: RecordedRequest{
		Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: kept,
	}})
	s.mu.Unlock()

	switch kind {
	case apiNone:
		writeError(w, apiOpenAI, http.StatusNotFound, "llmtest: no endpoint "+r.URL.Path+" (have /v1/messages, /v1/chat/completions, /v1/models)", nil)
		return
	case apiModels:
		s.models(w)
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, kind, http.StatusMethodNotAllowed, "llmtest: "+r.URL.Path+" wants POST", nil)
		return
	}
	meta, err := requestMeta(body, kind == apiOpenAI, &s.validator)
	if err != nil {
		writeError(w, kind, http.StatusBadRequest, "llmtest: request body is not JSON: "+err.Error(), nil)
		return
	}
	if !meta.Stream {
		writeError(w, kind, http.StatusBadRequest, "llmtest supports streaming only", nil)
		return
	}

	reply, n, act := s.take()
	switch act {
	case actExhausted:
		h := w.Header()
		h.Set("x-should-retry", "false")
		writeError(w, kind, http.StatusInternalServerError, fmt.Sprintf("llmtest: script exhausted after %d replies", n), nil)
		return
	case actFail:
		ra := 0.0
		if reply.RetryAfter != nil {
			ra = *reply.RetryAfter
		}
		writeError(w, kind, http.StatusTooManyRequests, "llmtest: rate limited (fail_times)", &ra)
		return
	}
	if reply.Status != 0 {
		msg := reply.ErrorMessage
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		writeError(w, kind, reply.Status, msg, reply.RetryAfter)
		return
	}

	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	if reply.Gate != "" {
		g := s.gate(reply.Gate)
		g.arrive.Do(func() { close(g.arrived) })
		select {
		case <-g.release:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	if reply.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	st := &stream{
		w: w, f: flusher, ctx: r.Context(), done: s.done,
		delay: time.Duration(reply.DelayMS) * time.Millisecond,
		reply: reply, n: n, model: meta.Model,
		deltas: reply.deltas(),
	}
	st.usage = st.defaultUsage(len(body))
	if kind == apiAnthropic {
		st.anthropic()
	} else {
		st.openai(meta.IncludeUsage)
	}
}

// readBody reads a request's body in one buffer of its announced length
// (io.ReadAll grows one through copies: at 0.9 MB, a tenth of a
// millisecond more before the answer).
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxPresized {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(r.Body)
}

// maxPresized: a larger announced length is not trusted with a buffer
// before its bytes arrive.
const maxPresized = 64 << 20

func (s *Server) serveRequests(w http.ResponseWriter) {
	type shown struct {
		Path string          `json:"path"`
		Body json.RawMessage `json:"body"`
	}
	s.mu.Lock()
	out := make([]shown, 0, len(s.records))
	for _, rec := range s.records {
		b := json.RawMessage(rec.req.Raw)
		if !json.Valid(b) {
			b, _ = json.Marshal(string(rec.req.Raw))
		}
		out = append(out, shown{rec.req.Path, b})
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out) //nolint:errcheck // the client went away
}

func (s *Server) models(w http.ResponseWriter) {
	ids := s.script.Models
	if len(ids) == 0 {
		ids = []string{"llmtest"}
	}
	// One body that reads as both APIs' list shape.
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Type        string `json:"type"`
		Created     int64  `json:"created"`
		CreatedAt   string `json:"created_at"`
		OwnedBy     string `json:"owned_by"`
		DisplayName string `json:"display_name"`
	}
	list := struct {
		Object  string  `json:"object"`
		Data    []model `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID string  `json:"first_id"`
		LastID  string  `json:"last_id"`
	}{Object: "list"}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", Type: "model", Created: 1700000000,
			CreatedAt: "2023-11-14T22:13:20Z", OwnedBy: "llmtest", DisplayName: id})
	}
	list.FirstID, list.LastID = ids[0], ids[len(ids)-1]
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list) //nolint:errcheck
}

// writeError answers an HTTP error with a body in the API's shape.
func writeError(w http.ResponseWriter, kind api, status int, msg string, retryAfter *float64) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if retryAfter != nil {
		h.Set("Retry-After", strconv.FormatFloat(*retryAfter, 'f', -1, 64))
	}
	w.WriteHeader(status)
	typ := errorType(status)
	var b []byte
	if kind == apiAnthropic {
		b = append(b, `{"type":"error","error":{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","message":`...)
		b = jsonstr.Append(b, msg)
		b = append(b, `}}`...)
	} else {
		b = append(b, `{"error":{"message":`...)
		b = jsonstr.Append(b, msg)
		b = append(b, `,"type":"`...)
		b = append(b, typ...)
		b = append(b, `","param":null,"code":null}}`...)
	}
	w.Write(b) //nolint:errcheck
}

func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// stream writes one scripted reply as SSE.
type stream struct {
	w     http.ResponseWriter
	f     http.Flusher
	ctx   context.Context
	done  chan struct{}
	delay time.Duration
	buf   []byte

	reply  Reply
	n      int
	model  string
	deltas []string
	usage  Usage
}

func (st *stream) defaultUsage(reqBytes int) Usage {
	if st.reply.Usage != nil {
		return *st.reply.Usage
	}
	out := 0
	for _, d := range st.deltas {
		out += len(d)
	}
	for _, tc := range st.reply.ToolCalls {
		out += len(tc.Name) + len(tc.Args)
	}
	return Usage{Input: max(1, reqBytes/4), Output: max(1, out/4)}
}

// flush writes the buffered event(s); false when the client is gone.
func (st *stream) flush() bool {
	if _, err := st.w.Write(st.buf); err != nil {
		return false
	}
	st.buf = st.buf[:0]
	if st.f != nil {
		st.f.Flush()
	}
	return st.ctx.Err() == nil
}

// wait sleeps the per-delta delay; false when the client is gone.
func (st *stream) wait() bool {
	if st.delay <= 0 {
		return true
	}
	t := time.NewTimer(st.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-st.ctx.Done():
	case <-st.done:
	}
	return false
}

func (st *stream) toolID(i int, prefix string) string {
	if id := st.reply.ToolCalls[i].ID; id != "" {
		return id
	}
	return prefix + strconv.Itoa(st.n) + "_" + strconv.Itoa(i+1)
}

func (st *stream) args(i int) string {
	a := st.reply.ToolCalls[i].Args
	if len(a) == 0 {
		return "{}"
	}
	return string(a)
}

func (st *stream) stop(anthropic bool) string {
	s := st.reply.Stop
	if s == "" {
		s = "end_turn"
		if len(st.reply.ToolCalls) > 0 {
			s = "tool_use"
		}
	}
	if anthropic {
		if s == "length" {
			return "max_tokens"
		}
		return s
	}
	switch s {
	case "end_turn":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	}
	return s
}

// gate holds the reply of the same name (Reply.Gate).
type gate struct {
	arrived, release    chan struct{}
	arrive, releaseOnce sync.Once
}

func (s *Server) gate(name string) *gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = map[string]*gate{}
	}
	g := s.gates[name]
	if g == nil {
		g = &gate{arrived: make(chan struct{}), release: make(chan struct{})}
		s.gates[name] = g
	}
	return g
}

// Arrived is closed once the request of the reply gated name has arrived;
// the reply is then held until Release(name).
func (s *Server) Arrived(name string) <-chan struct{} { return s.gate(name).arrived }

// Release lets the reply gated name stream (now, or as soon as its request
// arrives).
func (s *Server) Release(name string) {
	g := s.gate(name)
	g.releaseOnce.Do(func() { close(g.release) })
}

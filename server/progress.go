package server

import (
	"context"
	"sync"
	"time"

	"go.lsp.dev/protocol"
)

// progress reports a run as window/workDoneProgress (title "zot"), so
// editors show it natively. It runs on its own goroutine: the editor's
// answer to window/workDoneProgress/create never holds up the run, and a
// burst of reports collapses to the latest.
type progress struct {
	s     *Server
	runID string
	token string

	mu      sync.Mutex
	last    string // last reported message
	next    string // waiting to be sent
	ended   string
	isEnded bool
	wake    chan struct{}
}

func (s *Server) startProgress(r *run) *progress {
	p := &progress{s: s, runID: r.id, token: "zot-" + r.id, wake: make(chan struct{}, 1)}
	s.mu.Lock()
	ok := s.caps.workDoneProgress
	s.mu.Unlock()
	if !ok {
		return p // reports are no-ops
	}
	go p.loop(r.title)
	return p
}

func (p *progress) loop(title string) {
	s := p.s
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	err := s.call(ctx, protocol.MethodWorkDoneProgressCreate, map[string]string{"token": p.token}, nil)
	cancel()
	if err != nil {
		s.logf("window/workDoneProgress/create: %v", err)
		return
	}
	s.mu.Lock()
	s.progressToken[p.token] = p.runID
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.progressToken, p.token)
		s.mu.Unlock()
	}()
	s.notify(protocol.MethodProgress, &progressParams{Token: p.token,
		Value: &protocol.WorkDoneProgressBegin{Kind: protocol.WorkDoneProgressKindBegin, Title: "zot", Message: title, Cancellable: true}})
	for {
		<-p.wake
		p.mu.Lock()
		msg, ended, endMsg := p.next, p.isEnded, p.ended
		p.next = ""
		p.mu.Unlock()
		if msg != "" && !ended {
			s.notify(protocol.MethodProgress, &progressParams{Token: p.token,
				Value: &protocol.WorkDoneProgressReport{Kind: protocol.WorkDoneProgressKindReport, Message: msg}})
		}
		if ended {
			s.notify(protocol.MethodProgress, &progressParams{Token: p.token,
				Value: &protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: endMsg}})
			return
		}
	}
}

// report sets the progress message; repeats are free.
func (p *progress) report(msg string) {
	p.mu.Lock()
	if msg == p.last || p.isEnded {
		p.mu.Unlock()
		return
	}
	p.last, p.next = msg, msg
	p.mu.Unlock()
	p.poke()
}

func (p *progress) end(msg string) {
	p.mu.Lock()
	p.isEnded, p.ended = true, msg
	p.mu.Unlock()
	p.poke()
}

func (p *progress) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// WorkDoneProgressCancel aborts the run whose progress the user cancelled.
func (s *Server) WorkDoneProgressCancel(ctx context.Context, params *protocol.WorkDoneProgressCancelParams) error {
	tok := params.Token.String()
	s.mu.Lock()
	runID, ok := s.progressToken[tok]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	if cur, _ := s.runs.status(); cur == runID {
		s.runs.abort(false)
	}
	return nil
}

// progressParams is $/progress with a string token.
type progressParams struct {
	Token string `json:"token"`
	Value any    `json:"value"`
}

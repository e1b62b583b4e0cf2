package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/extensions"
)

func (s *Server) zotSessions(ctx context.Context) (SessionsResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return SessionsResult{}, err
	}
	infos, err := rt.Sessions()
	if err != nil {
		return SessionsResult{}, err
	}
	if infos == nil {
		infos = []session.Info{}
	}
	return SessionsResult{Sessions: infos, Current: rt.State().SessionID}, nil
}

func (p *ResumeParams) validate(method string) error {
	if strings.TrimSpace(p.ID) == "" {
		return fieldError(method, "id", "is required: a session id from zot/sessions, or \"latest\"")
	}
	return nil
}

func (s *Server) zotSessionResume(ctx context.Context, p *ResumeParams) (SessionResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return SessionResult{}, err
	}
	if err := s.beforeSwitch(ctx, "resume", p.ID); err != nil {
		return SessionResult{}, err
	}
	if err := rt.Resume(p.ID); err != nil {
		return SessionResult{}, err
	}
	s.sessionChanged()
	st := rt.State()
	return SessionResult{SessionID: st.SessionID, MessageCount: st.MessageCount, ForkedFrom: st.ForkedFrom, Message: forkNotice(st)}, nil
}

// forkNotice says that a resumed session was forked, or "".
func forkNotice(st agent.State) string {
	if st.ForkedFrom == "" {
		return ""
	}
	return fmt.Sprintf("Session %s is open in another zot window or process, so it was not resumed in place: continuing in a new session %s, a copy of it (%d messages).", st.ForkedFrom, st.SessionID, st.MessageCount)
}

// switchGuard is a host whose extensions may refuse a new session or a
// resume (session_before_switch: extensions.Host).
type switchGuard interface {
	BeforeSwitch(ctx context.Context, reason, which string) agent.TreeDecision
}

// beforeSwitch asks the extensions before zot/session/new and resume; an
// error naming the one that refused.
func (s *Server) beforeSwitch(ctx context.Context, reason, which string) error {
	g, ok := s.currentHost().(switchGuard)
	if !ok {
		return nil
	}
	return extensions.SwitchRefusal(g.BeforeSwitch(ctx, reason, which))
}

func (s *Server) zotSessionNew(ctx context.Context) (SessionResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return SessionResult{}, err
	}
	if err := s.beforeSwitch(ctx, "new", ""); err != nil {
		return SessionResult{}, err
	}
	if err := rt.NewSession(); err != nil {
		return SessionResult{}, err
	}
	s.sessionChanged()
	st := rt.State()
	return SessionResult{SessionID: st.SessionID, MessageCount: st.MessageCount}, nil
}

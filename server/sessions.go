package server

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/zot-editors/zot/agent/session"
)

func (s *Server) zotSessions(ctx context.Context, _ json.RawMessage) (any, error) {
	rt, err := s.runtime()
	if err != nil {
		return nil, err
	}
	infos, err := rt.Sessions()
	if err != nil {
		return nil, err
	}
	if infos == nil {
		infos = []session.Info{}
	}
	return map[string]any{"sessions": infos, "current": rt.State().SessionID}, nil
}

// ResumeParams is zot/session/resume's params.
type ResumeParams struct {
	// ID is a session id from zot/sessions, or "latest".
	ID string `json:"id"`
}

// SessionResult answers zot/session/resume and zot/session/new.
type SessionResult struct {
	SessionID    string `json:"sessionId"`
	MessageCount int    `json:"messageCount"`
}

func (s *Server) zotSessionResume(ctx context.Context, raw json.RawMessage) (any, error) {
	const method = "zot/session/resume"
	var p ResumeParams
	if err := decodeParams(method, raw, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.ID) == "" {
		return nil, fieldError(method, "id", "is required: a session id from zot/sessions, or \"latest\"")
	}
	rt, err := s.runtime()
	if err != nil {
		return nil, err
	}
	if err := rt.Resume(p.ID); err != nil {
		return nil, err
	}
	st := rt.State()
	return SessionResult{SessionID: st.SessionID, MessageCount: st.MessageCount}, nil
}

func (s *Server) zotSessionNew(ctx context.Context, _ json.RawMessage) (any, error) {
	rt, err := s.runtime()
	if err != nil {
		return nil, err
	}
	if err := rt.NewSession(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.allowBash = false
	s.mu.Unlock()
	st := rt.State()
	return SessionResult{SessionID: st.SessionID, MessageCount: st.MessageCount}, nil
}

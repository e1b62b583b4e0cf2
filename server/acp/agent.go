package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/provider"
	zsession "github.com/zot-editors/zot/agent/session"
)

var (
	_ sdk.Agent       = (*Server)(nil)
	_ sdk.AgentLoader = (*Server)(nil)
)

// authMethodID is the one authentication method zot offers: a key the
// user puts where zot looks (the editor cannot hand it over in ACP).
const authMethodID = "zot-api-key"

// Initialize negotiates the protocol version (ours is the SDK's, 1; an
// older client gets its own back when we speak it, else ours) and says
// what zot can do.
func (s *Server) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.caps = p.ClientCapabilities
	s.inited = true
	s.mu.Unlock()
	version := sdk.ProtocolVersion(sdk.ProtocolVersionNumber)
	if p.ProtocolVersion > 0 && p.ProtocolVersion < version {
		version = p.ProtocolVersion
	}
	if p.ClientInfo != nil {
		s.logf("client %s %s, protocol %d; fs read %v write %v, terminal %v", p.ClientInfo.Name, p.ClientInfo.Version, p.ProtocolVersion,
			p.ClientCapabilities.Fs.ReadTextFile, p.ClientCapabilities.Fs.WriteTextFile, p.ClientCapabilities.Terminal)
	}
	resp := sdk.InitializeResponse{
		ProtocolVersion: version,
		AgentInfo:       &sdk.Implementation{Name: "zot", Title: sdk.Ptr("zot"), Version: agent.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			PromptCapabilities:  sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}},
			// session/new's mcpServers: stdio always, and these.
			McpCapabilities: sdk.McpCapabilities{Http: true, Sse: true},
		},
		AuthMethods: []sdk.AuthMethod{},
	}
	if s.opts.Config.Sessions {
		// With --no-session nothing is saved: nothing to load, list,
		// resume or fork.
		resp.AgentCapabilities.LoadSession = true
		resp.AgentCapabilities.SessionCapabilities.List = &sdk.SessionListCapabilities{}
		resp.AgentCapabilities.SessionCapabilities.Resume = &sdk.SessionResumeCapabilities{}
		resp.AgentCapabilities.SessionCapabilities.Fork = &sdk.SessionForkCapabilities{}
	}
	if err := s.keyMissing(); err != nil {
		resp.AuthMethods = []sdk.AuthMethod{{Agent: &sdk.AuthMethodAgent{
			Id:          authMethodID,
			Name:        "API key",
			Description: sdk.Ptr(authHint(err)),
		}}}
	}
	return resp, nil
}

// keyMissing is the error of a missing provider key, nil when there is
// one (or the provider needs none: a loopback server).
func (s *Server) keyMissing() error {
	cfg := s.opts.Config
	h := cfg.Home
	if h == "" {
		h = home.Dir()
	}
	if cfg.Client != nil {
		return nil
	}
	cat, err := provider.LoadCatalog(h)
	if err != nil {
		return nil // agent.New reports a broken models.json at session/new
	}
	prov := cfg.Provider
	if prov == "" {
		prov = cat.ProviderOf(cfg.Model)
	}
	base := cfg.BaseURL
	if base == "" {
		modelID := cfg.Model
		if modelID == "" {
			modelID = cat.Default(prov)
		}
		if m, err := cat.Resolve(prov, modelID, ""); err == nil {
			base = m.BaseURL
		}
	}
	_, err = provider.APIKey(prov, cfg.APIKey, base, h)
	if err != nil && strings.Contains(err.Error(), "no API key") {
		return err
	}
	return nil
}

// authHint tells the user where zot looks for a key.
func authHint(err error) string {
	return err.Error() + ". zot reads ANTHROPIC_API_KEY / OPENAI_API_KEY from the environment the editor starts it with, " +
		"or $ZOT_HOME/auth.json (default ~/.zot/auth.json): {\"anthropic\":{\"api_key\":\"…\"}}. Set one, then restart the agent or authenticate again."
}

func authRequired(err error) error {
	return &sdk.RequestError{Code: -32000, Message: "Authentication required: " + authHint(err), Data: map[string]any{"authMethods": []string{authMethodID}}}
}

// Authenticate succeeds once a key is where zot looks (the user wrote
// auth.json after initialize); otherwise it says where to put one.
func (s *Server) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	if p.MethodId != authMethodID {
		return sdk.AuthenticateResponse{}, fieldError("methodId", "must be %q, the only method zot offers, not %q", authMethodID, p.MethodId)
	}
	if err := s.keyMissing(); err != nil {
		return sdk.AuthenticateResponse{}, authRequired(err)
	}
	return sdk.AuthenticateResponse{}, nil
}

// NewSession starts a session in cwd: a fresh runtime (a new saved
// session unless --no-session) and its extensions.
func (s *Server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	ss, err := s.openSession(ctx, cwd, "", p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	ss.rt.ObserveSessionStart("new")
	ss.announceAfterNew()
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(ss.id), Modes: ss.modeState(), Models: ss.modelState(), ConfigOptions: ss.configOptions()}, nil
}

// LoadSession reopens a saved session and replays its conversation as
// session/update notifications before answering.
func (s *Server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	ss, opened, err := s.reopen(ctx, string(p.SessionId), p.Cwd, p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if opened {
		ss.rt.ObserveSessionStart("load")
	}
	ss.replay(ctx)
	ss.announce()
	return sdk.LoadSessionResponse{Modes: ss.modeState(), Models: ss.modelState(), ConfigOptions: ss.configOptions()}, nil
}

// ResumeSession reopens a saved session without replaying it.
func (s *Server) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	ss, opened, err := s.reopen(ctx, string(p.SessionId), p.Cwd, p.McpServers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	if opened {
		ss.rt.ObserveSessionStart("resume")
	}
	ss.announce()
	return sdk.ResumeSessionResponse{Modes: ss.modeState(), Models: ss.modelState(), ConfigOptions: ss.configOptions()}, nil
}

// reopen opens the saved session id; opened is false when it was open on
// this connection already (the same conversation, nothing started).
func (s *Server) reopen(ctx context.Context, id, cwdParam string, mcp []sdk.McpServer) (ss *session, opened bool, err error) {
	cwd, err := checkCwd(cwdParam)
	if err != nil {
		return nil, false, err
	}
	if id == "" {
		return nil, false, fieldError("sessionId", "is required: an id from session/list")
	}
	if ss := s.session(id); ss != nil {
		return ss, false, nil
	}
	if !s.opts.Config.Sessions {
		return nil, false, fieldError("sessionId", "cannot be loaded: zot acp runs with --no-session, so no session is saved or read")
	}
	if _, err := zsession.FindWorkspace(s.home(), cwd, id); err != nil {
		return nil, false, fieldError("sessionId", "%v (in %s; session/list names the saved ones)", err, cwd)
	}
	ss, err = s.openSession(ctx, cwd, id, mcp)
	return ss, err == nil, err
}

// ListSessions lists the saved sessions of cwd (default: the process's
// working directory), newest first.
func (s *Server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	cwd := s.opts.Config.CWD
	if p.Cwd != nil && *p.Cwd != "" {
		c, err := checkCwd(*p.Cwd)
		if err != nil {
			return sdk.ListSessionsResponse{}, err
		}
		cwd = c
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	cwd, _ = filepath.Abs(cwd)
	infos, err := zsession.ListWorkspace(s.home(), cwd)
	if err != nil {
		return sdk.ListSessionsResponse{}, err
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, in := range infos {
		info := sdk.SessionInfo{SessionId: sdk.SessionId(in.ID), Cwd: cwd, UpdatedAt: sdk.Ptr(in.Modified.UTC().Format(time.RFC3339))}
		if in.Title != "" {
			info.Title = sdk.Ptr(in.Title)
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

// CloseSession cancels the session's run and frees it (extensions shut
// down, runtime closed).
func (s *Server) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	ss, err := s.lookup(p.SessionId)
	if err != nil {
		return sdk.CloseSessionResponse{}, err
	}
	s.mu.Lock()
	delete(s.sessions, ss.id)
	s.mu.Unlock()
	ss.abort()
	ss.waitIdle(10 * time.Second)
	ss.close()
	return sdk.CloseSessionResponse{}, nil
}

// Cancel stops the session's run at once: the model stream is cut, bash's
// process group killed (or its terminal killed), pending permission
// requests withdrawn; the prompt then answers stopReason "cancelled".
func (s *Server) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	ss := s.session(string(p.SessionId))
	if ss == nil {
		s.logf("session/cancel: unknown session %q", p.SessionId)
		return nil
	}
	ss.abort()
	return nil
}

// SetSessionMode switches the permission mode (auto, ask, readonly).
func (s *Server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	ss, err := s.lookup(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	m, ok := parseMode(string(p.ModeId))
	if !ok {
		return sdk.SetSessionModeResponse{}, fieldError("modeId", "must be auto, ask or readonly, not %q", p.ModeId)
	}
	ss.setMode(m)
	return sdk.SetSessionModeResponse{}, nil
}

// UnstableSetSessionModel switches the session's model among the
// catalogue (built-ins and $ZOT_HOME/models.json) of its provider.
func (s *Server) UnstableSetSessionModel(ctx context.Context, p sdk.UnstableSetSessionModelRequest) (sdk.UnstableSetSessionModelResponse, error) {
	ss, err := s.lookup(p.SessionId)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	if err := ss.setModel("modelId", string(p.ModelId)); err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	return sdk.UnstableSetSessionModelResponse{}, nil
}

// setModel switches to one of the session's availableModels; field names
// the request's field in errors.
func (ss *session) setModel(field, id string) error {
	if id == "" {
		return fieldError(field, "is required: one of the session's availableModels")
	}
	// The session's availableModels: the catalogue and models.json (a
	// --base-url server would take any id; the client offers the list).
	var ids []string
	known := false
	for _, m := range ss.modelState().AvailableModels {
		ids = append(ids, string(m.ModelId))
		known = known || string(m.ModelId) == id
	}
	if !known {
		return fieldError(field, "%q is not one of the session's models: %s (add others to $ZOT_HOME/models.json)", id, strings.Join(ids, ", "))
	}
	if err := ss.rt.SetModel(id); err != nil {
		return fieldError(field, "%v", err)
	}
	ss.modelChanged()
	return nil
}

// UnstableForkSession opens a new session that continues a copy of a
// saved one (open here or not): the same conversation under a new id, in
// the request's cwd; the original is left as it is.
func (s *Server) UnstableForkSession(ctx context.Context, p sdk.UnstableForkSessionRequest) (sdk.UnstableForkSessionResponse, error) {
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	id := string(p.SessionId)
	if id == "" {
		return sdk.UnstableForkSessionResponse{}, fieldError("sessionId", "is required: the session to fork")
	}
	if !s.opts.Config.Sessions {
		return sdk.UnstableForkSessionResponse{}, fieldError("sessionId", "cannot be forked: zot acp runs with --no-session, so no session is saved to copy")
	}
	// The original: open in this process (in its own cwd), else saved in cwd.
	srcCwd := cwd
	src := s.session(id)
	if src != nil {
		srcCwd = src.cwd
	}
	path, err := zsession.FindWorkspace(s.home(), srcCwd, id)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, fieldError("sessionId", "%v (in %s; session/list names the saved ones)", err, srcCwd)
	}
	mcp, err := convertJSON[[]sdk.McpServer](p.McpServers)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, fieldError("mcpServers", "%v", err)
	}
	ss, err := s.openSessionAs(ctx, cwd, "", path, mcp)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	if src != nil {
		// The copy starts in the original's permission mode.
		ss.mu.Lock()
		ss.mode = src.permissionMode()
		ss.mu.Unlock()
	}
	// A copy of a conversation: it goes on, as a resumed one does.
	ss.rt.ObserveSessionStart("resume")
	ss.announceAfterNew()
	resp := sdk.UnstableForkSessionResponse{SessionId: sdk.SessionId(ss.id), Modes: ss.modeState()}
	if resp.Models, err = convertJSON[*sdk.UnstableSessionModelState](ss.modelState()); err != nil {
		return sdk.UnstableForkSessionResponse{}, requestError(err)
	}
	if resp.ConfigOptions, err = convertJSON[[]sdk.UnstableSessionConfigOption](ss.configOptions()); err != nil {
		return sdk.UnstableForkSessionResponse{}, requestError(err)
	}
	return resp, nil
}

// Prompt runs one prompt turn and answers with its stop reason.
func (s *Server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	ss, err := s.lookup(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return ss.prompt(ctx, p)
}

func (s *Server) session(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (s *Server) lookup(id sdk.SessionId) (*session, error) {
	if id == "" {
		return nil, fieldError("sessionId", "is required")
	}
	ss := s.session(string(id))
	if ss == nil {
		return nil, fieldError("sessionId", "unknown session %q: create one with session/new or open a saved one with session/load", id)
	}
	return ss, nil
}

func (s *Server) home() string {
	if h := s.opts.Config.Home; h != "" {
		return h
	}
	return home.Dir()
}

func (s *Server) clientCaps() sdk.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// checkCwd validates a session's working directory: absolute and an
// existing directory.
func checkCwd(cwd string) (string, error) {
	if cwd == "" {
		return "", fieldError("cwd", "is required: the absolute path of the project directory")
	}
	if !filepath.IsAbs(cwd) {
		return "", fieldError("cwd", "must be an absolute path, not %q", cwd)
	}
	st, err := os.Stat(cwd)
	if err != nil {
		return "", fieldError("cwd", "%v", err)
	}
	if !st.IsDir() {
		return "", fieldError("cwd", "%s is not a directory", cwd)
	}
	return filepath.Clean(cwd), nil
}

// fieldError is an Invalid params error whose message names the field.
func fieldError(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &sdk.RequestError{Code: -32602, Message: "Invalid params: " + field + " " + msg, Data: map[string]any{"field": field, "error": msg}}
}

// requestError turns a runtime error into a JSON-RPC error; a missing key
// becomes the auth error editors know.
func requestError(err error) error {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re
	}
	if strings.Contains(err.Error(), "no API key") {
		return authRequired(err)
	}
	return &sdk.RequestError{Code: -32603, Message: err.Error()}
}

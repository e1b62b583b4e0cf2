package server

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/internal/bigjson"
)

// zotMethods is the one table of client → server zot/* methods: each entry
// decodes its params into a typed struct, validates them, calls the
// handler and encodes its typed result. Handlers only see valid, typed
// params.
var zotMethods = newMethodTable(
	request(MethodPrompt, (*Server).zotPrompt),
	request(MethodAbort, (*Server).zotAbort),
	request0(MethodCompact, (*Server).zotCompact),
	request(MethodUserBash, (*Server).zotUserBash),
	request0(MethodState, (*Server).zotState),
	request0(MethodMessages, (*Server).zotMessages),
	request0(MethodClear, (*Server).zotClear),
	request0(MethodModels, (*Server).zotModels),
	request(MethodSetModel, (*Server).zotSetModel),
	request(MethodSetReasoning, (*Server).zotSetReasoning),
	request(MethodSetPermissionMode, (*Server).zotSetPermissionMode),
	request0(MethodPing, (*Server).zotPing),
	request0(MethodCommands, (*Server).zotCommands),
	request(MethodCommand, (*Server).zotCommand),
	request(MethodCommandComplete, (*Server).zotCommandComplete),
	request0(MethodSkills, (*Server).zotSkills),
	request0(MethodSessions, (*Server).zotSessions),
	request(MethodSessionResume, (*Server).zotSessionResume),
	request0(MethodSessionNew, (*Server).zotSessionNew),
	request(MethodSessionFork, (*Server).zotSessionFork),
	request0(MethodExtensions, (*Server).zotExtensions),
	request0(MethodExtensionsReload, (*Server).zotExtensionsReload),
	request0(MethodMCP, (*Server).zotMCP),
	request(MethodMCPRestart, (*Server).zotMCPRestart),
	request0(MethodMCPResources, (*Server).zotMCPResources),
	request0(MethodRetry, (*Server).zotRetry),
	request(MethodResend, (*Server).zotResend),
	request(MethodApplyCode, (*Server).zotApplyCode),
	request0(MethodCheckpoints, (*Server).zotCheckpoints),
	request(MethodCheckpointRestore, (*Server).zotCheckpointRestore),
	request(MethodCheckpointDiff, (*Server).zotCheckpointDiff),
	notification(MethodPanelKey, (*Server).zotPanelKey),
	notification(MethodPanelClosed, (*Server).zotPanelClosed),
)

// Direction of a method, as docs/protocol.md's method index spells it.
const (
	clientToServer = "c→s"
	serverToClient = "s→c"
)

// methodSpec describes one zot/* method of the contract.
type methodSpec struct {
	Method       string
	Dir          string // clientToServer | serverToClient
	Notification bool
}

// methodHandler serves one client → server method.
type methodHandler struct {
	methodSpec
	serve func(s *Server, ctx context.Context, raw json.RawMessage) (any, error)
}

type methodTable map[string]methodHandler

func newMethodTable(hs ...methodHandler) methodTable {
	t := methodTable{}
	for _, h := range hs {
		if _, dup := t[h.Method]; dup {
			panic("zot method registered twice: " + h.Method)
		}
		t[h.Method] = h
	}
	return t
}

func (t methodTable) names() []string {
	out := make([]string, 0, len(t))
	for m := range t {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func zotMethodNames() []string { return zotMethods.names() }

// validator is implemented by params with rules beyond their JSON types;
// the error names the method and the field (fieldError).
type validator interface {
	validate(method string) error
}

// decode unmarshals and validates the params of method.
func decode[P any](method string, raw json.RawMessage) (*P, error) {
	p := new(P)
	// A large string (a 16 MiB prompt) is unquoted in place, in the
	// frame's own memory, which the params then share (bigjson): no copy.
	// Nothing reads the frame after its params are decoded.
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] != '{' {
		if err := decodeParams(method, raw, p); err != nil {
			return nil, err
		}
	} else if _, err := bigjson.Unmarshal(trimmed, p); err != nil {
		return nil, paramsError(method, err)
	}
	if v, ok := any(p).(validator); ok {
		if err := v.validate(method); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// request registers a request with params P and result R.
func request[P, R any](method string, fn func(s *Server, ctx context.Context, p *P) (R, error)) methodHandler {
	return methodHandler{methodSpec{method, clientToServer, false}, func(s *Server, ctx context.Context, raw json.RawMessage) (any, error) {
		p, err := decode[P](method, raw)
		if err != nil {
			return nil, err
		}
		res, err := fn(s, ctx, p)
		if err != nil {
			return nil, err
		}
		return encode(method, res)
	}}
}

// request0 registers a request without params (any params are ignored,
// as LSP does for params a method does not define).
func request0[R any](method string, fn func(s *Server, ctx context.Context) (R, error)) methodHandler {
	return methodHandler{methodSpec{method, clientToServer, false}, func(s *Server, ctx context.Context, _ json.RawMessage) (any, error) {
		res, err := fn(s, ctx)
		if err != nil {
			return nil, err
		}
		return encode(method, res)
	}}
}

// encode marshals a result here rather than in the reply: jsonrpc2 would
// fail to send a result it cannot encode and the client would wait
// forever; this way it gets an InternalError naming the method.
func encode(method string, res any) (any, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, rpcError(jsonrpc2.InternalError, "%s: cannot encode the result: %v (please report it)", method, err)
	}
	return json.RawMessage(b), nil
}

// notification registers a notification with params P. Its errors are
// logged (and answered, when a client sends it as a request).
func notification[P any](method string, fn func(s *Server, ctx context.Context, p *P) error) methodHandler {
	return methodHandler{methodSpec{method, clientToServer, true}, func(s *Server, ctx context.Context, raw json.RawMessage) (any, error) {
		p, err := decode[P](method, raw)
		if err != nil {
			return nil, err
		}
		return nil, fn(s, ctx, p)
	}}
}

// serverNotification is a server → client notification with params P.
type serverNotification[P any] struct{ method string }

func (n serverNotification[P]) spec() methodSpec { return methodSpec{n.method, serverToClient, true} }

func (n serverNotification[P]) send(s *Server, p P) { s.notify(n.method, p) }

// serverRequest is a server → client request with params P and result R.
type serverRequest[P, R any] struct{ method string }

func (r serverRequest[P, R]) spec() methodSpec { return methodSpec{r.method, serverToClient, false} }

func (r serverRequest[P, R]) call(ctx context.Context, s *Server, p *P) (R, error) {
	var res R
	err := s.call(ctx, r.method, p, &res)
	return res, err
}

// lspMethods are the standard LSP methods zot serves besides those
// dispatch answers itself (initialize, initialized, shutdown, exit,
// didChange), typed with go.lsp.dev/protocol's params. Every other request
// is answered MethodNotFound and every other notification ignored
// ($/setTrace, workspace/didChangeConfiguration …), so zot does not
// implement protocol.Server's 60 methods to say "no" to them.
var lspMethods = newMethodTable(
	notification(protocol.MethodTextDocumentDidOpen, (*Server).DidOpen),
	notification(protocol.MethodTextDocumentDidClose, (*Server).DidClose),
	notification(protocol.MethodTextDocumentDidSave, (*Server).DidSave),
	notification(protocol.MethodWorkDoneProgressCancel, (*Server).WorkDoneProgressCancel),
	request(protocol.MethodTextDocumentCodeAction, (*Server).codeAction),
	request(methodCodeActionResolve, (*Server).codeActionResolve),
	request(methodExecuteCommand, (*Server).executeCommand),
)

// standard serves lspMethods; it ends the handler chain.
func (s *Server) standard(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	h, ok := lspMethods[req.Method()]
	if !ok {
		if _, isCall := req.(*jsonrpc2.Call); isCall {
			return reply(ctx, nil, rpcError(jsonrpc2.MethodNotFound, "zot lsp does not implement %s", req.Method()))
		}
		return reply(ctx, nil, nil)
	}
	res, err := h.serve(s, ctx, req.Params())
	if err != nil {
		s.logf("%s: %v", req.Method(), err)
	}
	return reply(ctx, res, err)
}

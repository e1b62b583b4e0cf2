package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/internal/ospath"
)

// initializeParams is the part of LSP's InitializeParams zot reads,
// decoded by hand (see handler.go for why not protocol.InitializeParams).
type initializeParams struct {
	ProcessID             *int64          `json:"processId"`
	RootURI               string          `json:"rootUri"`
	RootPath              string          `json:"rootPath"`
	WorkspaceFolders      []wsFolder      `json:"workspaceFolders"`
	InitializationOptions json.RawMessage `json:"initializationOptions"`
	Capabilities          struct {
		General struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
		Workspace struct {
			ApplyEdit     bool `json:"applyEdit"`
			WorkspaceEdit struct {
				DocumentChanges    bool     `json:"documentChanges"`
				ResourceOperations []string `json:"resourceOperations"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Experimental json.RawMessage `json:"experimental"`
	} `json:"capabilities"`
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

type wsFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// InitOptions is initializationOptions: each set field overrides the
// command line.
type InitOptions struct {
	Provider           string   `json:"provider"`
	Model              string   `json:"model"`
	Reasoning          string   `json:"reasoning"`
	APIKey             string   `json:"apiKey"`
	BaseURL            string   `json:"baseUrl"`
	PermissionMode     string   `json:"permissionMode"`
	Ext                []string `json:"ext"`
	MaxSteps           int      `json:"maxSteps"`
	AppendSystemPrompt string   `json:"appendSystemPrompt"`
	Resume             string   `json:"resume"`
	// AddDirs are directories outside the workspace the agent may write
	// without asking (as --add-dir).
	AddDirs []string `json:"addDirs"`
	// NoMCP starts no MCP servers (as --no-mcp); MCPConfig adds
	// configuration files (as --mcp-config; those inside the workspace
	// need trust, like project servers).
	NoMCP     bool     `json:"noMcp"`
	MCPConfig []string `json:"mcpConfig"`
	// CodeActions are the project's own code actions (codeaction.go).
	CodeActions []ProjectAction `json:"codeActions"`
	// PiFlags are values of pi extensions' flags (registerFlag), as
	// `--flag name=value`: the editor's setting (VS Code zot.piFlags,
	// Neovim pi_flags). A value is a string, a boolean or a number.
	PiFlags map[string]any `json:"piFlags"`
}

// clientZot is capabilities.experimental.zot: what the client implements
// of zot's server → client requests.
type clientZot struct {
	ReviewEdit bool `json:"reviewEdit"`
	Save       bool `json:"save"`
	Panels     bool `json:"panels"`
	// Notify: the client shows zot/notify, so warn/error notifications
	// are not also sent as window/showMessage.
	Notify bool `json:"notify"`
	// UI: the client answers zot/ui/request and shows zot/ui/status and
	// zot/ui/widget (extensions' dialogs, status items and widgets).
	UI bool `json:"ui"`
	// Input: the client has a chat input that zot/input/set sets and
	// zot/input/get reads (extensions' set_editor_text, get_editor_text).
	Input bool `json:"input"`
	// Editor: the client shows zot/ui/request kind editor as a multi-line
	// box; without it an editor dialog is asked as kind input.
	Editor bool `json:"editor"`
	// declared: the client sent experimental.zot at all (one of zot's own
	// clients, which use the zot/* tier).
	declared bool
}

// clientCaps is what the server needs to know about the client.
type clientCaps struct {
	applyEdit        bool
	documentChanges  bool
	createFiles      bool
	workDoneProgress bool
	zot              clientZot
	name             string
}

// InitializeResult is initialize's answer.
type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   ServerInfo         `json:"serverInfo"`
}

// ServerInfo names the server.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ServerCapabilities is the subset zot advertises.
type ServerCapabilities struct {
	PositionEncoding string          `json:"positionEncoding"`
	TextDocumentSync TextSyncOptions `json:"textDocumentSync"`
	// The standard tier (codeaction.go): code actions run as commands.
	CodeActionProvider     *CodeActionOptions     `json:"codeActionProvider,omitempty"`
	ExecuteCommandProvider *ExecuteCommandOptions `json:"executeCommandProvider,omitempty"`
	Experimental           struct {
		Zot ZotInfo `json:"zot"`
	} `json:"experimental"`
}

// TextSyncOptions is textDocumentSync: open/close and incremental changes.
type TextSyncOptions struct {
	OpenClose bool                          `json:"openClose"`
	Change    protocol.TextDocumentSyncKind `json:"change"`
	Save      *struct {
		IncludeText bool `json:"includeText"`
	} `json:"save,omitempty"`
}

// ZotInfo is experimental.zot in the initialize result.
type ZotInfo struct {
	ProtocolVersion int `json:"protocolVersion"`
	// Protocol is the revision of the contract (ProtocolRevision): a
	// client compares it with the revision it needs.
	Protocol       int           `json:"protocol"`
	Version        string        `json:"version"`
	Provider       string        `json:"provider"`
	Model          string        `json:"model"`
	Reasoning      string        `json:"reasoning,omitempty"`
	Cwd            string        `json:"cwd"`
	PermissionMode string        `json:"permissionMode"`
	Commands       []CommandInfo `json:"commands"`
	// Error is why the agent cannot run (no API key …), shown as is.
	Error string `json:"error,omitempty"`
}

func (s *Server) initialize(_ context.Context, raw json.RawMessage) (any, error) {
	const method = "initialize"
	s.mu.Lock()
	if s.state != stateNew {
		s.mu.Unlock()
		return nil, rpcError(jsonrpc2.InvalidRequest, "initialize was already received")
	}
	s.mu.Unlock()

	var p initializeParams
	if err := decodeParams(method, raw, &p); err != nil {
		return nil, err
	}
	var opts InitOptions
	if len(p.InitializationOptions) > 0 {
		if err := decodeParams(method, p.InitializationOptions, &opts); err != nil {
			return nil, prefixField(err, "initializationOptions")
		}
	}
	if err := validateProjectActions(method, "initializationOptions.codeActions", opts.CodeActions); err != nil {
		return nil, err
	}
	mode := ModeAuto
	if opts.PermissionMode != "" {
		m, ok := parseMode(opts.PermissionMode)
		if !ok {
			return nil, fieldError(method, "initializationOptions.permissionMode", "must be auto, ask or readonly, not %q", opts.PermissionMode)
		}
		mode = m
	}
	var zc clientZot
	if len(p.Capabilities.Experimental) > 0 {
		var ex struct {
			Zot json.RawMessage `json:"zot"`
		}
		if json.Unmarshal(p.Capabilities.Experimental, &ex) == nil && len(ex.Zot) > 0 {
			_ = json.Unmarshal(ex.Zot, &zc)
			zc.declared = true
		}
	}
	caps := clientCaps{
		applyEdit:        p.Capabilities.Workspace.ApplyEdit,
		documentChanges:  p.Capabilities.Workspace.WorkspaceEdit.DocumentChanges,
		workDoneProgress: p.Capabilities.Window.WorkDoneProgress,
		zot:              zc,
	}
	for _, op := range p.Capabilities.Workspace.WorkspaceEdit.ResourceOperations {
		if op == "create" {
			caps.createFiles = true
		}
	}
	if p.ClientInfo != nil {
		caps.name = p.ClientInfo.Name
	}
	enc := pickEncoding(p.Capabilities.General.PositionEncodings)

	cfg := s.opts.Config
	cwd := workspaceDir(cfg.CWD, p)
	cfg.CWD = cwd
	if opts.Provider != "" {
		cfg.Provider = opts.Provider
	}
	if opts.Model != "" {
		cfg.Model = opts.Model
	}
	if opts.Reasoning != "" {
		cfg.Reasoning = opts.Reasoning
	}
	if opts.APIKey != "" {
		cfg.APIKey = opts.APIKey
	}
	if opts.BaseURL != "" {
		cfg.BaseURL = opts.BaseURL
	}
	if opts.MaxSteps > 0 {
		cfg.MaxSteps = opts.MaxSteps
	}
	if opts.AppendSystemPrompt != "" {
		if cfg.AppendSystemPrompt != "" {
			cfg.AppendSystemPrompt += "\n\n"
		}
		cfg.AppendSystemPrompt += opts.AppendSystemPrompt
	}
	if opts.Resume != "" {
		cfg.Resume, cfg.Sessions = opts.Resume, true
	}
	addDirs, err := absDirs(append(append([]string(nil), cfg.AddDirs...), opts.AddDirs...), cwd)
	if err != nil {
		return nil, fieldError(method, "initializationOptions.addDirs", "%v", err)
	}
	cfg.AddDirs = addDirs
	s.ws.setRoot(cwd, addDirs)
	cfg.Workspace = s.ws
	cfg.Hooks = s.hookChain()
	cfg.Warn = func(msg string) {
		s.logf("%s", msg)
		s.showMessage(protocol.MessageTypeWarning, "zot: "+msg)
	}
	cfg = s.withEditorTools(cfg)
	cfg = s.withCheckpointBuffers(cfg)
	if err := applyPiFlags(method, opts.PiFlags); err != nil {
		return nil, err
	}
	exts, editorExts := slices.Clone(s.opts.Exts), slices.Clone(opts.Ext)
	cfg.WriteRules = append(slices.Clip(cfg.WriteRules), protectedWrites(cfg.Home, cwd, append(slices.Clone(exts), editorExts...)))
	mcpConfigs, err := absFiles(opts.MCPConfig, cwd)
	if err != nil {
		return nil, fieldError(method, "initializationOptions.mcpConfig", "%v", err)
	}

	plain, plainWarn := readPlainCaps(raw, opts.CodeActions, cfg.Home)
	if plainWarn != "" {
		s.logf("%s", plainWarn)
		defer s.showMessage(protocol.MessageTypeWarning, plainWarn)
	}

	rt, err := s.opts.NewRuntime(cfg)

	s.mu.Lock()
	s.caps, s.enc, s.cwd, s.cfg, s.exts, s.editorExts, s.mode = caps, enc, cwd, cfg, exts, editorExts, mode
	s.noMCP, s.mcpConfigs = opts.NoMCP, mcpConfigs
	s.plain = plain
	if err != nil {
		s.rtErr = err
		s.logf("the agent cannot start: %v", err)
	} else {
		s.rt = rt
		if n := forkNotice(rt.State()); n != "" {
			s.logf("%s", n)
		}
	}
	s.state = stateInitialized
	s.mu.Unlock()

	res := &InitializeResult{ServerInfo: ServerInfo{Name: "zot", Version: agent.Version}}
	res.Capabilities.PositionEncoding = enc.String()
	res.Capabilities.TextDocumentSync = TextSyncOptions{OpenClose: true, Change: protocol.TextDocumentSyncKindIncremental}
	res.Capabilities.TextDocumentSync.Save = &struct {
		IncludeText bool `json:"includeText"`
	}{}
	// The standard tier (code actions, commands) is for editors that know
	// nothing of zot: zot's own clients have the zot/* tier, and a
	// language client registers each announced command as an editor
	// command (VS Code's would clash with the extension's own zot.abort).
	if !caps.zot.declared {
		standardCapabilities(&res.Capabilities, plain)
	}
	res.Capabilities.Experimental.Zot = s.info()
	return res, nil
}

// info is experimental.zot: the server's identity and state.
func (s *Server) info() ZotInfo {
	s.mu.Lock()
	rt, rtErr, cfg, mode, cwd := s.rt, s.rtErr, s.cfg, s.mode, s.cwd
	s.mu.Unlock()
	rev := ProtocolRevision
	if s.opts.ReportRevision != 0 {
		rev = s.opts.ReportRevision
	}
	z := ZotInfo{ProtocolVersion: ProtocolVersion, Protocol: rev, Version: agent.Version, Provider: cfg.Provider, Model: cfg.Model,
		Cwd: cwd, PermissionMode: string(mode), Commands: s.commandList()}
	if rt != nil {
		st := rt.State()
		z.Provider, z.Model, z.Reasoning = st.Provider, st.Model, st.Reasoning
	}
	if rtErr != nil {
		z.Error = errNoRuntime(rtErr).Error()
	}
	return z
}

// workspaceDir picks the working directory: --cwd if given, else the first
// workspace folder, rootUri, rootPath, the process's directory.
func workspaceDir(flagCwd string, p initializeParams) string {
	if flagCwd != "" {
		if abs, err := filepath.Abs(flagCwd); err == nil {
			return abs
		}
		return flagCwd
	}
	for _, f := range p.WorkspaceFolders {
		if d := uriPath(f.URI); d != "" {
			return d
		}
	}
	if d := uriPath(p.RootURI); d != "" {
		return d
	}
	if p.RootPath != "" {
		return filepath.Clean(p.RootPath)
	}
	wd, _ := os.Getwd()
	return wd
}

// uriPath is the file system path of a file: URI ("" if it is not one).
func uriPath(u string) string {
	if !strings.HasPrefix(u, "file:") {
		return ""
	}
	p, err := ospath.FromURI(u)
	if err != nil {
		return ""
	}
	return filepath.Clean(p)
}

// prefixField rewrites an InvalidParams error so the field is named from
// the top of params.
func prefixField(err error, prefix string) error {
	re, ok := err.(*jsonrpc2.Error)
	if !ok {
		return err
	}
	msg := strings.Replace(re.Message, "initialize: \"", "initialize: \""+prefix+".", 1)
	msg = strings.Replace(msg, "initialize: params ", "initialize: \""+prefix+"\" ", 1)
	return &jsonrpc2.Error{Code: re.Code, Message: msg}
}

// Initialized starts the extension host in the background (it may ask the
// user to trust project extensions, which must not hold up the editor) and
// tells the user when the agent cannot run.
func (s *Server) Initialized(ctx context.Context, _ *protocol.InitializedParams) error {
	s.mu.Lock()
	rtErr := s.rtErr
	already := s.hostStarted
	s.hostStarted = true
	s.mu.Unlock()
	if rtErr != nil {
		s.showMessage(protocol.MessageTypeError, errNoRuntime(rtErr).Error())
	}
	if !already {
		s.startMCP() // returns at once: the servers connect in the background
		go s.startHost()
	}
	return nil
}

func (s *Server) shutdown(_ context.Context) error {
	s.mu.Lock()
	switch s.state {
	case stateNew:
		s.mu.Unlock()
		return errNotInitialized()
	case stateShutdown:
		s.mu.Unlock()
		return rpcError(jsonrpc2.InvalidRequest, "shutdown was already received: send exit")
	}
	s.state = stateShutdown
	s.mu.Unlock()
	s.teardown()
	return nil
}

func (s *Server) exit() {
	s.exitOnce.Do(func() { close(s.exited) })
}

// absFiles makes each file absolute (relative ones against cwd); an
// empty entry is an error.
func absFiles(files []string, cwd string) ([]string, error) {
	out := make([]string, 0, len(files))
	for _, f := range files {
		if strings.TrimSpace(f) == "" {
			return nil, fmt.Errorf("has an empty file name")
		}
		if !filepath.IsAbs(f) {
			f = filepath.Join(cwd, f)
		}
		out = append(out, filepath.Clean(f))
	}
	return out, nil
}

// absDirs makes each directory absolute (relative ones against cwd); an
// empty entry is an error.
func absDirs(dirs []string, cwd string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if strings.TrimSpace(d) == "" {
			return nil, fmt.Errorf("has an empty directory")
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		out = append(out, filepath.Clean(d))
	}
	return out, nil
}

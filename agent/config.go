package agent

import (
	"context"
	"net/http"
	"time"

	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/tools"
)

// Config configures a Runtime. Only Provider (or its default) and a
// credential are needed; everything else has a default.
type Config struct {
	Provider string // "anthropic" (default) or "openai"
	Model    string // default: the provider's default model
	APIKey   string // else the provider's env var, else $ZOT_HOME/auth.json
	BaseURL  string // OpenAI-compatible servers (Ollama, vLLM, llama.cpp, OpenRouter) or a proxy
	// Reasoning is the thinking level: off, low, medium, high; "" is the
	// model's default. A level other than off on a model that does not
	// reason is an error.
	Reasoning string

	CWD                string // default: the process's working directory
	SystemPrompt       string // replaces the built-in system prompt
	AppendSystemPrompt string // appended to the system prompt
	MaxSteps           int    // model calls per prompt; default 50
	NoTools            bool   // no built-in tools (extension and MCP tools stay)
	Tools              []string
	// NoSkills turns skills off (--no-skill): no discovery, no "Available
	// skills" in the system prompt, no skill tool.
	NoSkills bool
	// Warn receives what the user should know that belongs to no run: a
	// SKILL.md skipped for a broken frontmatter (once each). Optional.
	Warn func(msg string)
	// AddDirs are directories outside CWD the agent may write without
	// asking (--add-dir). Other writes outside CWD need the user's
	// approval, which the disk workspace cannot ask: they are refused.
	AddDirs []string

	// Home is $ZOT_HOME; default home.Dir().
	Home string
	// Workspace routes tool reads and writes; default the disk at CWD.
	Workspace tools.Workspace
	// WriteRules add reasons a write needs the user's approval (protected
	// paths: $ZOT_HOME, extension directories), asked in the same one
	// question as a write outside the workspace. The workspace must be a
	// tools.WriteGuard when any are given.
	WriteRules []tools.WriteRule
	// Hooks lets the extension host observe and steer runs; may be nil.
	Hooks Hooks
	// ExtraTools is consulted before every model call, so a registry that
	// changes (an extension reloaded) takes effect at the next call and
	// never in the middle of one, and again when a tool call runs (an
	// extension that finished starting meanwhile may own the tool). On a
	// name clash zot's own tools (tools.Core) win; an extra tool named
	// ls, grep or find replaces ours.
	ExtraTools func() []tools.Tool
	// AwaitTool is asked when the model calls a tool the current set
	// lacks: an extension still starting may be about to register it, so
	// it may wait (bounded by that extension's start budget) and return
	// the tool, or nil for "unknown tool". Optional.
	AwaitTool func(ctx context.Context, name string) tools.Tool
	// AwaitExtensions is called at the start of every prompt, before its
	// input hooks and first model call: the extension host waits there,
	// bounded, for extensions still starting, so the prompt is offered
	// their tools and runs their hooks. Optional.
	AwaitExtensions func(ctx context.Context)

	// Sessions turns on session persistence (off: zot rpc's default), in
	// the per-workspace directory session.Dir(Home, CWD) under
	// $ZOT_HOME/sessions.
	Sessions bool
	// Resume: "" starts a new session, "latest" resumes the newest one for
	// CWD, anything else is a session id.
	Resume string
	// SessionPath resumes the session file at this path (zot's
	// --session PATH), wherever it lies; it wins over Resume.
	SessionPath string
	// Fork continues the session Resume or SessionPath names in a copy
	// under a new id, saved in CWD's session directory (its transcript and
	// extension entries copied; State.ForkedFrom names the original); the
	// original is left as it is. ACP's session/fork.
	Fork bool

	// Checkpoints records the workspace before every prompt's run
	// (agent/checkpoint), for RestoreCheckpoint: zot lsp and zot rpc.
	Checkpoints bool
	// Buffers are the editor's open documents (zot lsp): checkpoints
	// record their unsaved text and restores put it back through the
	// editor. Optional.
	Buffers Buffers

	// Client overrides the provider client (tests, embedding).
	Client provider.Client
	// Providers are the model providers extensions contribute (SEP's
	// provider/*, zot's register_provider): their models are listed and
	// selectable as "provider/model" next to the catalogue's, and their
	// model calls go to the extension. Optional.
	Providers ExtensionProviders
	// HTTPClient is used by the provider clients; default http.DefaultClient.
	HTTPClient *http.Client
	// FirstByteTimeout and IdleTimeout bound a model stream's silences
	// (0: provider.DefaultFirstByteTimeout / DefaultIdleTimeout).
	FirstByteTimeout, IdleTimeout time.Duration
}

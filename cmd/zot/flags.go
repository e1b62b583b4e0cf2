package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/zot-editors/zot/agent"
)

// listFlag is a repeatable string flag (--ext a -e b).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// common holds the flags every running mode shares (zot's flag set).
type common struct {
	provider, model, apiKey, baseURL, cwd string
	systemPrompt, appendSystemPrompt      string
	reasoning                             string
	maxSteps                              int
	noTools                               bool
	tools                                 string
	exts                                  listFlag
	addDirs                               listFlag
	noSession                             bool
	resume                                string
	cont                                  bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.provider, "provider", "", "LLM provider: anthropic or openai (default anthropic, or the provider of --model)")
	fs.StringVar(&c.model, "model", "", "model id (default: the provider's default)")
	fs.StringVar(&c.apiKey, "api-key", "", "API key (default: ANTHROPIC_API_KEY / OPENAI_API_KEY, then $ZOT_HOME/auth.json); visible to other local processes in the command line, so prefer those")
	fs.StringVar(&c.baseURL, "base-url", "", "provider base URL (OpenAI-compatible servers: Ollama, vLLM, llama.cpp, OpenRouter)")
	fs.StringVar(&c.cwd, "cwd", "", "working directory (default: the current directory)")
	fs.StringVar(&c.systemPrompt, "system-prompt", "", "replace the system prompt")
	fs.StringVar(&c.appendSystemPrompt, "append-system-prompt", "", "append to the system prompt")
	fs.IntVar(&c.maxSteps, "max-steps", 0, "model calls per prompt (default 50)")
	fs.BoolVar(&c.noTools, "no-tools", false, "disable all tools")
	fs.StringVar(&c.tools, "tools", "", "comma-separated allowlist of built-in tools (read,write,edit,bash,ls,grep,find)")
	fs.Var(&c.exts, "ext", "load an extension directory for this run (repeatable)")
	fs.Var(&c.exts, "e", "short for --ext")
	fs.Var(&c.addDirs, "add-dir", "let write and edit change files under this directory outside the workspace without asking (repeatable)")
	fs.BoolVar(&c.noSession, "no-session", false, "do not save this session")
	fs.StringVar(&c.resume, "resume", "", "resume a session by id (see `zot sessions`)")
	fs.BoolVar(&c.cont, "c", false, "continue the latest session of this workspace")
	fs.StringVar(&c.reasoning, "reasoning", "", "how much the model thinks: off, low, medium or high (default: the model's; see README)")
}

// config turns the flags into a runtime configuration.
func (c *common) config(sessions bool) agent.Config {
	cfg := agent.Config{
		Provider: c.provider, Model: c.model, APIKey: c.apiKey, BaseURL: c.baseURL, Reasoning: c.reasoning,
		Cwd: c.cwd, SystemPrompt: c.systemPrompt, AppendSystemPrompt: c.appendSystemPrompt,
		MaxSteps: c.maxSteps, NoTools: c.noTools, AddDirs: absAll(c.addDirs),
		Sessions: sessions && !c.noSession,
	}
	if c.tools != "" {
		for _, t := range strings.Split(c.tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				cfg.Tools = append(cfg.Tools, t)
			}
		}
	}
	if c.cont {
		cfg.Resume, cfg.Sessions = "latest", true
	}
	if c.resume != "" {
		cfg.Resume, cfg.Sessions = c.resume, true
	}
	return cfg
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

const usage = `zot — a coding agent for your editor

Usage:
  zot -p "prompt" [flags]       print the answer (stderr shows tool activity); --json for events
  zot rpc [flags]               newline-delimited JSON RPC on stdin/stdout (docs/rpc.md)
  zot lsp [flags]               the editor front: LSP JSON-RPC on stdio (docs/protocol.md)
  zot ext <list|install|remove|enable|disable|logs|trust> …
                                manage extensions (docs/extensions.md)
  zot sessions [--cwd DIR]      list saved sessions of a workspace
  zot mock-llm --script FILE    run the scripted test LLM on loopback (prints its base URL)
  zot version

Flags (all running modes):
`

func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, usage)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// absAll makes paths absolute against the process's directory.
func absAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		out = append(out, p)
	}
	return out
}

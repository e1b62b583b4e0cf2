package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/extensions"
)

// listFlag is a repeatable string flag (--ext a -e b).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// piFlags is --flag name=value (repeatable): values for pi extensions'
// registerFlag/getFlag. They reach the pi runtime as $ZOT_PI_FLAGS (a JSON
// object) in zot's environment, which every extension process inherits,
// so every mode (and every host it starts) passes them on.
type piFlags map[string]string

func (p *piFlags) String() string { return "" }

func (p *piFlags) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	name = strings.TrimLeft(strings.TrimSpace(name), "-")
	if name == "" {
		return fmt.Errorf("--flag wants name=value (or name, for a boolean), not %q", v)
	}
	if !ok {
		val = "true"
	}
	if *p == nil {
		*p = piFlags{}
	}
	(*p)[name] = val
	b, _ := json.Marshal(*p)
	return os.Setenv(extensions.EnvPiFlags, string(b))
}

// common holds the flags every running mode shares (zot's flag set).
type common struct {
	provider, model, apiKey, baseURL, cwd string
	systemPrompt                          string
	appendSystemPrompt                    listFlag
	reasoning                             string
	maxSteps                              int
	noTools                               bool
	tools                                 string
	exts                                  listFlag
	piFlags                               piFlags
	addDirs                               listFlag
	noSession                             bool
	noExt                                 bool
	noMCP                                 bool
	mcpConfigs                            listFlag
	noSkill                               bool
	resume                                string
	sessionPath                           string
	cont                                  bool
	noYolo                                bool
	noCheckpoints                         bool
	// approve asks about each tool call under --no-yolo; the front sets it.
	approve agent.Approver
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.provider, "provider", "", "LLM provider: anthropic or openai (default anthropic, or the provider of --model)")
	fs.StringVar(&c.model, "model", "", "model id (default: the provider's default)")
	fs.StringVar(&c.apiKey, "api-key", "", "API key (default: ANTHROPIC_API_KEY / OPENAI_API_KEY, then $ZOT_HOME/auth.json); visible to other local processes in the command line, so prefer those")
	fs.StringVar(&c.baseURL, "base-url", "", "provider base URL (OpenAI-compatible servers: Ollama, vLLM, llama.cpp, OpenRouter)")
	fs.StringVar(&c.cwd, "cwd", "", "working directory (default: the current directory)")
	fs.StringVar(&c.systemPrompt, "system-prompt", "", "replace the system prompt")
	fs.Var(&c.appendSystemPrompt, "append-system-prompt", "append to the system prompt (repeatable; each is its own paragraph)")
	fs.IntVar(&c.maxSteps, "max-steps", 0, "model calls per prompt (default 50; zot's is unlimited, ours bounds a runaway loop)")
	fs.BoolVar(&c.noTools, "no-tools", false, "no built-in tools (read, write, edit, bash, skill, ls, grep, find); extension and MCP tools stay")
	fs.StringVar(&c.tools, "tools", "", "comma-separated allowlist of built-in tools (read,write,edit,bash,ls,grep,find)")
	fs.Var(&c.exts, "ext", "load an extension for this run: a directory, or a pi extension (.ts/.js file, directory with index.ts, package with a \"pi\" key) (repeatable)")
	fs.Var(&c.exts, "e", "short for --ext")
	fs.Var(&c.exts, "extension", "same as --ext (pi's spelling)")
	fs.Var(&c.piFlags, "flag", "set a pi extension's flag (registerFlag): --flag name=value, or --flag name for true (repeatable)")
	fs.Var(&c.addDirs, "add-dir", "let write and edit change files under this directory outside the workspace without asking (repeatable)")
	fs.BoolVar(&c.noSession, "no-session", false, "do not save this session")
	fs.BoolVar(&c.noExt, "no-ext", false, "load no extensions (neither installed ones nor --ext)")
	fs.BoolVar(&c.noMCP, "no-mcp", false, "start no MCP servers (neither $ZOT_HOME/mcp.json, the workspace's .mcp.json / .zot/mcp.json nor --mcp-config)")
	fs.Var(&c.mcpConfigs, "mcp-config", "also read MCP servers from this file (Claude Code's mcpServers format; repeatable; wins on a name clash)")
	fs.BoolVar(&c.noSkill, "no-skill", false, "no skills: no SKILL.md discovery, no skill tool")
	fs.StringVar(&c.resume, "resume", "", "resume a session by id (see `zot sessions`)")
	fs.StringVar(&c.resume, "r", "", "short for --resume")
	fs.StringVar(&c.sessionPath, "session", "", "resume the session file at this path")
	fs.BoolVar(&c.cont, "c", false, "continue the latest session of this workspace")
	fs.BoolVar(&c.cont, "continue", false, "same as -c")
	fs.BoolVar(&c.noYolo, "no-yolo", false, "ask before every tool call (zot -p without a terminal and zot rpc cannot ask: tool calls are refused)")
	fs.BoolVar(&c.noCheckpoints, "no-checkpoints", false, "zot lsp, rpc and acp: do not record the workspace before each prompt (no checkpoints to restore)")
	fs.StringVar(&c.reasoning, "reasoning", "", "how much the model thinks: off, low, medium or high (default: the model's; see README)")
}

// checkpointed is config for a front that offers checkpoints (zot lsp,
// zot rpc, zot acp): the workspace is recorded before every prompt unless
// --no-checkpoints.
func (c *common) checkpointed(sessions bool) agent.Config {
	cfg := c.config(sessions)
	cfg.Checkpoints = !c.noCheckpoints
	return cfg
}

// config turns the flags into a runtime configuration.
func (c *common) config(sessions bool) agent.Config {
	cfg := agent.Config{
		Provider: c.provider, Model: c.model, APIKey: c.apiKey, BaseURL: c.baseURL, Reasoning: c.reasoning,
		CWD: c.cwd, SystemPrompt: c.systemPrompt, AppendSystemPrompt: strings.Join(c.appendSystemPrompt, "\n\n"),
		MaxSteps: c.maxSteps, NoTools: c.noTools, NoSkills: c.noSkill, AddDirs: absAll(c.addDirs),
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
	if c.sessionPath != "" {
		cfg.SessionPath, cfg.Sessions = c.sessionPath, true
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
  zot acp [flags]               the Agent Client Protocol on stdio: Zed, JetBrains, Emacs, Neovim (docs/acp.md)
  zot ext <list|install|remove|enable|disable|logs|trust> …
                                manage extensions (docs/extensions.md)
  zot mcp <list|trust> …        MCP servers: list their state, trust a project one (docs/mcp.md)
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

// parseFlags parses args; an unknown flag is one line naming the closest
// real flag (the usage would bury it), -h prints the usage.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	usage := fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimLeft(name, "-")
		dashes := "--"
		if len(name) == 1 {
			dashes = "-"
		}
		msg = fmt.Sprintf("unknown flag %s%s", dashes, name)
		if best := closestFlag(fs, name); best != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		msg += "; `" + fs.Name() + " -h` lists the flags"
	}
	fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), msg)
	return err
}

// closestFlag is the defined flag nearest to name by edit distance, written
// as it is typed (-c, --model), or "" when none is close.
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestDist := "", len(name)/2+2
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	switch {
	case best == "":
		return ""
	case len(best) == 1:
		return "-" + best
	}
	return "--" + best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// splitBareResume removes a -r / --resume given without an id (last, or
// followed by another flag) from args: zot's "pick a session" form.
func splitBareResume(args []string) ([]string, bool) {
	for i, a := range args {
		if a != "-r" && a != "--resume" && a != "-resume" {
			continue
		}
		if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
			return append(append([]string(nil), args[:i]...), args[i+1:]...), true
		}
	}
	return args, false
}

// pickSession lists the workspace's sessions newest first. On a terminal it
// asks for a number and returns that session's id; without one it prints
// the list and returns ok=false (the caller exits 2).
func pickSession(c *common, stdin io.Reader, stderr io.Writer) (string, bool) {
	dir := c.cwd
	if dir == "" {
		dir, _ = os.Getwd()
	}
	dir, _ = filepath.Abs(dir)
	infos, err := session.ListWorkspace(home.Dir(), dir)
	if err != nil {
		fmt.Fprintln(stderr, "zot:", err)
		return "", false
	}
	if len(infos) == 0 {
		fmt.Fprintln(stderr, "zot: no sessions for", dir)
		return "", false
	}
	for i, in := range infos {
		fmt.Fprintf(stderr, "%3d  %s  %s  %s\n", i+1, in.Modified.Format("2006-01-02 15:04"), in.ID, in.Title)
	}
	if f, ok := stdin.(*os.File); !ok || !isTerminal(f.Fd()) {
		fmt.Fprintln(stderr, "zot: -r without an id needs a terminal to ask; pass one of the ids above (-r ID)")
		return "", false
	}
	fmt.Fprint(stderr, "session number: ")
	line, _ := bufio.NewReader(stdin).ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || n < 1 || n > len(infos) {
		fmt.Fprintf(stderr, "zot: want a number from 1 to %d\n", len(infos))
		return "", false
	}
	return infos[n-1].ID, true
}

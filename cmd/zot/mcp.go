package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/extensions/mcp"
)

// mcpPrintWait bounds how long print mode waits for MCP servers to start
// before its one prompt (a hung server fails at StartTimeout anyway).
const mcpPrintWait = 90 * time.Second

// startMCP loads the MCP configuration and starts the servers in the
// background; nil with --no-mcp. Problems (a bad file, a failed or
// untrusted server) are printed to stderr once each: print and RPC modes
// have no UI to ask for trust, so a project server stays untrusted until
// `zot mcp trust NAME`.
func startMCP(c *common, cwd, zotHome string, stderr io.Writer) *mcp.Host {
	if c.noMCP {
		return nil
	}
	abs, err := filepath.Abs(cwd)
	if err == nil {
		cwd = abs
	}
	servers, errs := mcp.Load(mcp.Sources{Home: zotHome, Cwd: cwd, Extra: c.mcpConfigs}, nil)
	rep := &mcpReporter{w: stderr, told: map[string]string{}}
	for _, e := range errs {
		fmt.Fprintln(stderr, "zot:", e)
	}
	h := mcp.NewHost(mcp.Options{Cwd: cwd, Home: zotHome, Servers: servers, ConfigErrors: errs, ClientVersion: agent.Version,
		Changed: func() { rep.report(rep.h.Status()) }})
	rep.h = h
	h.Start()
	return h
}

// mcpReporter prints a server's failure or distrust once per reason.
type mcpReporter struct {
	mu   sync.Mutex
	w    io.Writer
	h    *mcp.Host
	told map[string]string
}

func (r *mcpReporter) report(sts []mcp.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range sts {
		switch st.State {
		case mcp.StateFailed, mcp.StateUntrusted, mcp.StateInvalid, mcp.StateRestarting:
		default:
			continue
		}
		line := fmt.Sprintf("zot: MCP server %s: %s: %s\n", st.Name, st.State, st.LastError)
		if r.told[st.Name] != line {
			r.told[st.Name] = line
			fmt.Fprint(r.w, line)
		}
	}
}

const mcpUsage = `usage: zot mcp <command>

  list [--cwd DIR] [--json] [--timeout 30s]
                      start the configured MCP servers, show each one's
                      scope, transport, state, tools and last error, stop them
  trust [--cwd DIR] NAME
                      trust a project MCP server (.mcp.json, .zot/mcp.json)
                      as it is configured now; a change asks again

Flags --mcp-config FILE (repeatable) add configuration files as in zot.
`

// cmdMCP is `zot mcp list|trust`.
func cmdMCP(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, mcpUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	fs := newFlagSet("zot mcp "+args[0], stderr)
	cwd := fs.String("cwd", "", "workspace (default: the current directory)")
	var extra listFlag
	fs.Var(&extra, "mcp-config", "also read MCP servers from this file (repeatable)")
	asJSON := fs.Bool("json", false, "list: print JSON")
	timeout := fs.Duration("timeout", 30*time.Second, "list: how long to wait for the servers to start")
	fs.Usage = func() { fmt.Fprint(stderr, mcpUsage) }
	if err := parseFlags(fs, args[1:], stderr); err != nil {
		return 2
	}
	dir := *cwd
	if dir == "" {
		dir, _ = os.Getwd()
	}
	dir, _ = filepath.Abs(dir)
	zh := home.Dir()
	servers, errs := mcp.Load(mcp.Sources{Home: zh, Cwd: dir, Extra: extra}, nil)
	switch args[0] {
	case "list":
		return mcpList(servers, errs, dir, zh, *asJSON, *timeout, stdout, stderr)
	case "trust":
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "zot mcp trust: name one server (zot mcp list shows them)")
			return 2
		}
		h := mcp.NewHost(mcp.Options{Cwd: dir, Home: zh, Servers: servers})
		if err := h.Trust(fs.Arg(0)); err != nil {
			fmt.Fprintln(stderr, "zot mcp trust:", err)
			return 1
		}
		h.Close(context.Background())
		fmt.Fprintf(stdout, "trusted MCP server %s in %s\n", fs.Arg(0), dir)
		return 0
	}
	fmt.Fprintf(stderr, "zot mcp: unknown command %q\n%s", args[0], mcpUsage)
	return 2
}

func mcpList(servers []mcp.ServerConfig, errs []error, dir, zh string, asJSON bool, timeout time.Duration, stdout, stderr io.Writer) int {
	h := mcp.NewHost(mcp.Options{Cwd: dir, Home: zh, Servers: servers, ConfigErrors: errs, ClientVersion: agent.Version,
		StartTimeout: timeout, RestartBackoff: []time.Duration{}})
	h.Start()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	_ = h.WaitStarted(ctx)
	cancel()
	sts := h.Status()
	h.Close(context.Background())
	if asJSON {
		b, _ := json.MarshalIndent(map[string]any{"servers": sts, "errors": h.ConfigErrors()}, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	for _, e := range errs {
		fmt.Fprintln(stderr, "zot:", e)
	}
	if len(sts) == 0 {
		fmt.Fprintf(stdout, "no MCP servers configured for %s (%s, .mcp.json, .zot/mcp.json)\n", dir, filepath.Join(zh, mcp.UserFile))
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPE\tTRANSPORT\tSTATE\tTOOLS\tCOMMAND\tLAST ERROR")
	for _, st := range sts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", st.Name, st.Scope, st.Transport, st.State, len(st.Tools), st.Command, oneLine(st.LastError))
	}
	tw.Flush()
	return 0
}

func oneLine(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "\n", " ")
}

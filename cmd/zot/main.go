// Command zot is the zot coding agent: print mode, `zot rpc`, `zot lsp`,
// extension management and the scripted test LLM. Flags and subcommands
// only; the work happens in agent/, server/ and extensions/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"text/tabwriter"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/internal/childproc"
	"github.com/zot-editors/zot/server/printmode"
	"github.com/zot-editors/zot/server/rpc"
)

func main() {
	// First: descendants that escape their process group come back to
	// zot, and none outlives even a killed zot (an old kernel without
	// subreapers: groups only). In zot's supervisor process Init runs the
	// supervisor and does not return.
	_ = childproc.Init()
	// A `go install …@vX` build reports vX everywhere (initialize, hello).
	agent.Version, _, _ = buildVersion()
	stop := startProfile()
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	childproc.Cleanup()
	stop()
	os.Exit(code)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "rpc":
			return cmdRPC(args[1:], stdin, stdout, stderr)
		case "mock-llm":
			return cmdMockLLM(args[1:], stdout, stderr)
		case "sessions":
			return cmdSessions(args[1:], stdout, stderr)
		case "version", "--version", "-v", "-version":
			printVersion(stdout)
			return 0
		}
		if code, ok := runExtra(args, stdin, stdout, stderr); ok {
			return code
		}
	}
	return cmdPrint(args, stdin, stdout, stderr)
}

func cmdPrint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("zot", stderr)
	var c common
	c.register(fs)
	prompt := fs.String("p", "", "prompt to answer (print mode)")
	asJSON := fs.Bool("json", false, "print mode: events as JSON lines")
	rpcMode := fs.Bool("rpc", false, "same as `zot rpc`")
	listModels := fs.Bool("list-models", false, "list the models zot knows (built-ins and $ZOT_HOME/models.json) and exit")
	fs.Usage = func() { printUsage(stderr, fs) }
	args, pick := splitBareResume(args)
	if err := parseFlags(fs, args, stderr); err != nil {
		return 2
	}
	if pick {
		id, ok := pickSession(&c, stdin, stderr)
		if !ok {
			return 2
		}
		c.resume = id
	}
	if *listModels {
		return cmdListModels(stdout, stderr)
	}
	if *rpcMode {
		return serveRPC(&c, stdin, stdout, stderr)
	}
	text := *prompt
	if text == "" && fs.NArg() > 0 {
		text = fs.Arg(0)
	}
	if text == "" {
		printUsage(stderr, fs)
		return 2
	}
	if c.noYolo {
		c.approve = terminalApprover(stdin, stderr)
	}
	ctx, interrupted := interruptible(context.Background())
	code := func() int {
		rt, _, closeExt, err := newRuntime(ctx, &c, c.config(true), false, stderr, nil, nil)
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintln(stderr, "zot:", err)
			}
			return 1
		}
		// Closing aborts the run (its bash process groups are killed) and
		// shuts the extensions down, on every path.
		defer closeExt()
		defer rt.Close()
		if err := printmode.Run(ctx, rt, text, *asJSON, stdout, stderr); err != nil {
			if !errors.Is(err, printmode.ErrRun) && !errors.Is(err, printmode.ErrInterrupted) {
				fmt.Fprintln(stderr, "zot:", err)
			}
			return 1
		}
		return 0
	}()
	if sig := interrupted(); sig != 0 {
		fmt.Fprintln(stderr, "zot: interrupted")
		return 128 + int(sig) // the shell's convention: 130 for SIGINT, 143 for SIGTERM
	}
	return code
}

// interruptible returns a context cancelled by the first SIGINT or
// SIGTERM, and a function reporting which one came (0: none). After the
// first, the signals get their default action back, so a second Ctrl-C
// ends a shutdown that hangs.
func interruptible(parent context.Context) (context.Context, func() syscall.Signal) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var got atomic.Int32
	go func() {
		sig := (<-sigs).(syscall.Signal)
		got.Store(int32(sig))
		signal.Stop(sigs)
		cancel()
	}()
	return ctx, func() syscall.Signal { return syscall.Signal(got.Load()) }
}

func cmdRPC(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("zot rpc", stderr)
	var c common
	c.register(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return 2
	}
	return serveRPC(&c, stdin, stdout, stderr)
}

func serveRPC(c *common, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	// Sessions are off by default in RPC mode: the embedding application
	// owns persistence (docs/rpc.md). --resume / -c turn them on.
	// Extensions' dialogs, status and widgets are rpc events; panels
	// need an editor.
	front := newLateFront(rpc.RPCUICapabilities)
	if c.noYolo { // asked as an ext_ui_request dialog of "zot"
		c.approve = dialogApprover(front)
	}
	// An extension may notify before the server exists: stderr only.
	var live atomic.Pointer[rpc.Server]
	notify := func(ext, level, msg string) {
		if srv := live.Load(); srv != nil {
			srv.Notify(ext, level, msg)
		}
	}
	rt, host, closeExt, err := newRuntime(ctx, c, c.checkpointed(false), true, stderr, front, notify)
	if err != nil {
		fmt.Fprintln(stderr, "zot rpc:", err)
		return 1
	}
	defer closeExt()
	defer rt.Close()
	opts := rpc.Options{Token: os.Getenv("ZOTCORE_RPC_TOKEN")}
	if host != nil {
		opts.Commands = host
	}
	srv := rpc.New(rt, opts)
	live.Store(srv)
	front.setSession(srv.EnqueueRun, srv.Shutdown)
	front.set(srv, srv.StartPrompt)
	if err := srv.Serve(ctx, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "zot rpc:", err)
		return 1
	}
	return 0
}

func cmdMockLLM(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("zot mock-llm", stderr)
	script := fs.String("script", "", "script file (JSON; see agent/llmtest)")
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return 2
	}
	if *script == "" {
		fmt.Fprintln(stderr, "zot mock-llm: --script FILE is required (see README: a run with no API key)")
		return 2
	}
	s, err := llmtest.LoadScript(*script)
	if err != nil {
		fmt.Fprintln(stderr, "zot mock-llm:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = llmtest.Serve(ctx, *addr, s, func(url string) {
		fmt.Fprintln(stdout, url)
		if f, ok := stdout.(*os.File); ok {
			f.Sync()
		}
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "zot mock-llm:", err)
		return 1
	}
	return 0
}

// cmdListModels prints the catalogue: provider, id, limits and prices (USD
// per million tokens), then what models.json left out.
func cmdListModels(stdout, stderr io.Writer) int {
	cat, err := provider.LoadCatalog(home.Dir())
	if err != nil {
		fmt.Fprintln(stderr, "zot:", err)
		return 1
	}
	price := func(p float64) string {
		if p == 0 {
			return "-"
		}
		return strconv.FormatFloat(p, 'f', -1, 64)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tMODEL\tCONTEXT\tMAX OUT\tREASONING\tINPUT $/M\tOUTPUT $/M\tCACHE READ $/M\tCACHE WRITE $/M\tBASE URL")
	for _, m := range cat.All() {
		reasoning := "no"
		if m.Reasoning {
			reasoning = "yes"
		}
		base := m.BaseURL
		if base == "" {
			base = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Provider, m.ID, m.ContextWindow, m.MaxOutput, reasoning,
			price(m.InputPrice), price(m.OutputPrice), price(m.CacheRead), price(m.CacheWrite), base)
	}
	tw.Flush()
	for _, n := range cat.Notes() {
		fmt.Fprintln(stderr, "zot:", n)
	}
	return 0
}

func cmdSessions(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("zot sessions", stderr)
	cwd := fs.String("cwd", "", "workspace (default: the current directory)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return 2
	}
	dir := *cwd
	if dir == "" {
		dir, _ = os.Getwd()
	}
	dir, _ = filepath.Abs(dir)
	infos, err := session.ListWorkspace(home.Dir(), dir)
	if err != nil {
		fmt.Fprintln(stderr, "zot sessions:", err)
		return 1
	}
	if len(infos) == 0 {
		fmt.Fprintln(stdout, "no sessions for", dir)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tMODIFIED\tMESSAGES\tTITLE")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", in.ID, in.Modified.Format("2006-01-02 15:04"), in.Messages, in.Title)
	}
	tw.Flush()
	return 0
}

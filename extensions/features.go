package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/sep"
	"github.com/zot-editors/zot/extensions/wire"
)

// SEP's additions that zot's v1 frames lacked — kv, exec, ping, command
// argument completion (the bus is in sepwire.go) — served once by the
// host for both wires: a zot extension negotiates them in
// hello.capabilities and hello_ack.host_capabilities.features lists
// them; a SEP extension's bridge asks for them in the hello it says for
// it (docs/extensions.md, "Capabilities").

// Execer is the optional part of a front's Actions that runs a command
// for an extension (agent.Runtime.Exec through RuntimeActions): the
// model's bash rules — guards, the front's approval, the process rules.
type Execer interface {
	Exec(ctx context.Context, ext, command string, timeout time.Duration) (tools.ExecResult, error)
}

// ExecRuntime is what RuntimeActions needs to offer exec
// (*agent.Runtime has it).
type ExecRuntime interface {
	Exec(ctx context.Context, ext, command string, timeout time.Duration) (tools.ExecResult, error)
}

func (a *runtimeActions) Exec(ctx context.Context, ext, command string, timeout time.Duration) (tools.ExecResult, error) {
	rt, ok := a.rt.(ExecRuntime)
	if !ok {
		return tools.ExecResult{}, fmt.Errorf("this front cannot run commands for extensions")
	}
	return rt.Exec(ctx, ext, command, timeout)
}

// features is host_capabilities.features: what of SEP's additions this
// host serves now.
func (h *Host) features() []string {
	f := []string{wire.CapBus, wire.CapKV, wire.CapPing, wire.CapComplete, wire.CapProviders}
	if _, ok := h.actions().(Execer); ok {
		f = append(f, wire.CapExec)
	}
	slices.Sort(f)
	return f
}

// has reports whether the process declared capability c.
func (p *proc) has(c string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.caps, c)
}

// kvStore is the extension's store under $ZOT_HOME (the one a SEP
// extension of the same name reads too).
func (p *proc) kvStore() *sep.KV {
	return sep.OpenKV(sep.KVPath(p.s.h.o.Home, p.name))
}

// onKV serves kv_get, kv_set, kv_delete and kv_list.
func (p *proc) onKV(f wire.Frame) {
	if !p.has(wire.CapKV) {
		p.sendError(f.Type, f.ID, `%s needs "kv" in hello.capabilities`, f.Type)
		return
	}
	if f.ID == "" {
		p.sendError(f.Type, "", "%s needs an id (action_result answers it)", f.Type)
		return
	}
	params := map[string]any{"prefix": f.Prefix}
	if f.Type != wire.TypeKVList {
		if f.Key == "" {
			p.send(wire.Frame{Type: wire.TypeActionResult, ID: f.ID, Error: f.Type + " needs a key"}, false)
			return
		}
		params["key"] = f.Key
	}
	if f.Type == wire.TypeKVSet {
		if len(f.Value) == 0 {
			p.send(wire.Frame{Type: wire.TypeActionResult, ID: f.ID, Error: "kv_set needs a value (any JSON)"}, false)
			return
		}
		params["value"] = f.Value
	}
	raw, _ := json.Marshal(params)
	method := "kv/" + strings.TrimPrefix(f.Type, "kv_")
	res := wire.Frame{Type: wire.TypeActionResult, ID: f.ID}
	out, e := p.kvStore().Serve(method, raw)
	if e != nil {
		res.Error = e.Message
	} else {
		b, _ := json.Marshal(out)
		var r struct {
			Value json.RawMessage `json:"value"`
			Keys  []string        `json:"keys"`
		}
		_ = json.Unmarshal(b, &r)
		res.Value, res.Keys = r.Value, r.Keys
		if f.Type == wire.TypeKVList && res.Keys == nil {
			res.Keys = []string{}
		}
	}
	p.send(res, false)
}

// onExec serves exec on its own goroutine: the command may wait for the
// user's approval and for guards, which this reader serves. The call ends
// with the process: cancel {id} (pi's AbortSignal) or the extension's end
// stops the command (its process group killed), and the answer says
// killed.
func (p *proc) onExec(f wire.Frame) {
	res := wire.Frame{Type: wire.TypeActionResult, ID: f.ID}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopDead := context.AfterFunc(deadContext(p), cancel)
	defer stopDead()
	if f.ID != "" {
		defer p.cancellable(f.ID, cancel)()
	}
	r, err := p.exec(ctx, f)
	res.Killed = ctx.Err() != nil
	if err != nil {
		res.Error = err.Error()
		p.log.printf("exec: %v", err)
	}
	if err == nil || r.Stdout != "" || r.Stderr != "" {
		code := r.ExitCode
		res.Stdout, res.Stderr, res.ExitCode = &r.Stdout, &r.Stderr, &code
	}
	if f.ID == "" {
		if err != nil {
			p.send(wire.Frame{Type: wire.TypeError, Ref: f.Type, Error: err.Error()}, false)
		}
		return
	}
	p.send(res, false)
}

func (p *proc) exec(ctx context.Context, f wire.Frame) (tools.ExecResult, error) {
	if !p.has(wire.CapExec) {
		return tools.ExecResult{}, fmt.Errorf(`exec needs "exec" in hello.capabilities`)
	}
	command := f.Command
	if command == "" && f.Name != "" {
		// pi's form: a program and its arguments, as one shell line (what
		// the guards and the user see is what runs).
		command = shellLine(append([]string{f.Name}, f.Names...))
	}
	if strings.TrimSpace(command) == "" {
		return tools.ExecResult{}, fmt.Errorf("exec needs a command")
	}
	if f.Cwd != "" {
		command = "cd " + shellLine([]string{f.Cwd}) + " && " + command
	}
	ex, ok := p.s.h.actions().(Execer)
	if !ok {
		return tools.ExecResult{}, fmt.Errorf("this front offers no exec")
	}
	return ex.Exec(ctx, p.name, command, time.Duration(f.TimeoutMS)*time.Millisecond)
}

// shellLine is args as one POSIX shell command line (what a guard sees).
func shellLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// CompletionTimeout bounds an extension's answer to command_complete:
// completion is interactive, and a slow extension offers nothing.
const CompletionTimeout = 2 * time.Second

// CompleteCommand asks the extension owning command name for completions
// of its argument (partial: what is typed after the name). A command of
// an extension that did not negotiate completion, or one that does not
// answer within CompletionTimeout, has none: nil, no error. An unknown
// command is ErrUnknownCommand.
func (h *Host) CompleteCommand(ctx context.Context, name, partial string) ([]wire.Completion, error) {
	name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "/"))
	e, ok := h.reg.Load().cmdIndex[name]
	if !ok {
		return nil, fmt.Errorf("%w: /%s", ErrUnknownCommand, name)
	}
	ctx, cancel := context.WithTimeout(ctx, CompletionTimeout)
	defer cancel()
	p, err := e.s.acquire(ctx)
	if err != nil {
		return nil, nil
	}
	defer p.end()
	if !p.has(wire.CapComplete) {
		return nil, nil
	}
	f, err := p.request(ctx, wire.Frame{Type: wire.TypeCommandComplete, Name: e.name, Text: partial}, CompletionTimeout, false)
	if err != nil {
		p.log.printf("command_complete /%s: %v", e.name, err)
		return nil, nil
	}
	if f.Error != "" {
		p.log.printf("command_complete /%s: %s", e.name, f.Error)
	}
	out := make([]wire.Completion, 0, len(f.Completions))
	for _, c := range f.Completions {
		if c.Value != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

// onPing answers an extension's ping at once.
func (p *proc) onPing(f wire.Frame) {
	if !p.has(wire.CapPing) {
		p.sendError(f.Type, f.ID, `ping needs "ping" in hello.capabilities`)
		return
	}
	p.send(wire.Frame{Type: wire.TypePong, ID: f.ID}, false)
}

// onPong: the extension answered the host's ping.
func (p *proc) onPong(wire.Frame) { p.pingOut.Store(false) }

// pingLoop pings a zot extension that negotiated "ping" once it has been
// silent for the ping interval ($ZOT_SEP_PING_INTERVAL, SEP's 60 s); two
// pings missed in a row are a crash: the process is killed and the host
// restarts it, as SEP's bridge does for its extensions.
func (p *proc) pingLoop(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-p.dead:
			return
		case <-t.C:
		}
		if p.pingOut.Load() {
			missed++
		} else {
			missed = 0
		}
		if missed >= 2 {
			p.log.printf("no answer to two pings in a row; treating the extension as crashed")
			p.kill(syscall.SIGKILL)
			return
		}
		idle := time.Since(time.Unix(0, p.lastLine.Load())) >= interval
		if idle && !p.pingOut.Load() {
			p.pingOut.Store(true)
			p.send(wire.Frame{Type: wire.TypePing, ID: p.newID(wire.TypePing)}, false)
		}
	}
}

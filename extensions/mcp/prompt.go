package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// PromptInfo is a server's prompt as a slash command,
// /mcp__<server>__<prompt> args.
type PromptInfo struct {
	Name        string // mcp__<server>__<prompt>, unique
	Server      string
	Remote      string
	Description string
	Args        []PromptArg
}

// PromptArg is one argument of a prompt, in the server's order.
type PromptArg struct {
	Name        string
	Description string
	Required    bool
}

// Usage is the argument list as help shows it: "city [state]".
func (p PromptInfo) Usage() string {
	var parts []string
	for _, a := range p.Args {
		if a.Required {
			parts = append(parts, a.Name)
		} else {
			parts = append(parts, "["+a.Name+"]")
		}
	}
	return strings.Join(parts, " ")
}

type promptRef struct {
	s    *server
	info PromptInfo
}

func buildPrompts(ss []*server) []promptRef {
	var out []promptRef
	var names []string
	for _, s := range ss {
		s.mu.Lock()
		ready, ps := s.state == StateReady, s.prompts
		s.mu.Unlock()
		if !ready {
			continue
		}
		for _, p := range ps {
			info := PromptInfo{Server: s.cfg.Name, Remote: p.Name, Description: p.Description}
			if info.Description == "" {
				info.Description = p.Title
			}
			for _, a := range p.Arguments {
				info.Args = append(info.Args, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			out = append(out, promptRef{s, info})
			names = append(names, PromptName(s.cfg.Name, p.Name))
		}
	}
	names = uniqueNames(names)
	for i := range out {
		out[i].info.Name = names[i]
	}
	return out
}

// Prompts are the prompts of every ready server.
func (h *Host) Prompts() []PromptInfo {
	h.mu.Lock()
	ss := slices.Clone(h.servers)
	h.mu.Unlock()
	var out []PromptInfo
	for _, p := range buildPrompts(ss) {
		out = append(out, p.info)
	}
	return out
}

// GetPrompt fetches the prompt name (mcp__<server>__<prompt>) with args
// given as on a command line: words fill the arguments in the server's
// order, and the last argument takes the rest of the line. What comes
// back is the text to send as the user's prompt.
func (h *Host) GetPrompt(ctx context.Context, name, args string) (string, error) {
	h.mu.Lock()
	ss := slices.Clone(h.servers)
	h.mu.Unlock()
	var ref *promptRef
	for _, p := range buildPrompts(ss) {
		if p.info.Name == name {
			ref = &p
			break
		}
	}
	if ref == nil {
		return "", fmt.Errorf("no MCP prompt named %s (its server may not be ready)", name)
	}
	values := map[string]string{}
	words := strings.Fields(args)
	for i, a := range ref.info.Args {
		if i >= len(words) {
			break
		}
		if i == len(ref.info.Args)-1 {
			values[a.Name] = strings.Join(words[i:], " ")
		} else {
			values[a.Name] = words[i]
		}
	}
	for _, a := range ref.info.Args {
		if a.Required && values[a.Name] == "" {
			return "", fmt.Errorf("/%s needs %s: /%s %s", name, a.Name, name, ref.info.Usage())
		}
	}
	if len(ref.info.Args) == 0 && len(words) > 0 {
		return "", fmt.Errorf("/%s takes no arguments", name)
	}
	cs := ref.s.snapshot().cs
	if cs == nil {
		return "", fmt.Errorf("MCP server %s is not connected", ref.s.cfg.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, ref.s.cfg.Timeout)
	defer cancel()
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: ref.info.Remote, Arguments: values})
	if err != nil {
		return "", fmt.Errorf("prompts/get %s on MCP server %s: %w", ref.info.Remote, ref.s.cfg.Name, err)
	}
	return promptText(res), nil
}

// promptText flattens a prompt's messages into one user prompt: a lone
// user message is its text; several are labelled by role.
func promptText(res *sdk.GetPromptResult) string {
	var parts []string
	label := len(res.Messages) > 1
	for _, m := range res.Messages {
		var text string
		for _, c := range ConvertResult(&sdk.CallToolResult{Content: []sdk.Content{m.Content}}) {
			if c.Type == "text" {
				text += c.Text
			} else {
				text += "[" + c.Type + " " + c.MimeType + " omitted]"
			}
		}
		if label {
			text = string(m.Role) + ": " + text
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n\n")
}

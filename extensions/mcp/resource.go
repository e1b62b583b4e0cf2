package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourceInfo is one resource a ready server lists: what an editor offers
// to attach as context (the `@` picker).
type ResourceInfo struct {
	Server      string
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
}

// Resources are the resources of every ready server, by server then URI.
// Resource templates are not listed (an editor has no way to fill them).
func (h *Host) Resources() []ResourceInfo {
	h.mu.Lock()
	ss := slices.Clone(h.servers)
	h.mu.Unlock()
	var out []ResourceInfo
	for _, s := range ss {
		s.mu.Lock()
		ready, rs := s.state == StateReady, s.resources
		s.mu.Unlock()
		if !ready {
			continue
		}
		for _, r := range rs {
			out = append(out, ResourceInfo{Server: s.cfg.Name, URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
	}
	return out
}

// ReadResource reads uri from the server named server (resources/read)
// and returns its text: text contents as they are, binary contents as a
// line naming them (the model cannot read them as text). mime is the
// first content's type.
func (h *Host) ReadResource(ctx context.Context, server, uri string) (text, mime string, err error) {
	s := h.server(server)
	if s == nil {
		return "", "", fmt.Errorf("no MCP server named %q (zot/mcp lists them)", server)
	}
	snap := s.snapshot()
	if snap.cs == nil {
		return "", "", fmt.Errorf("MCP server %s is %s, not ready: its resource %s cannot be read now", server, snap.state, uri)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := snap.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", "", fmt.Errorf("resources/read %s on MCP server %s: %w", uri, server, err)
	}
	var parts []string
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if mime == "" {
			mime = c.MIMEType
		}
		switch {
		case c.Blob != nil:
			parts = append(parts, fmt.Sprintf("[binary content of %s (%s, %d bytes) not included]", c.URI, orUnknown(c.MIMEType), len(c.Blob)))
		default:
			parts = append(parts, c.Text)
		}
	}
	if len(parts) == 0 {
		return "", mime, fmt.Errorf("resources/read %s on MCP server %s returned no contents", uri, server)
	}
	return strings.Join(parts, "\n\n"), mime, nil
}

func orUnknown(mime string) string {
	if mime == "" {
		return "type unknown"
	}
	return mime
}

func (s *server) listResources(ctx context.Context, cs *sdk.ClientSession) {
	var rs []*sdk.Resource
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			s.log("resources/list: %v", err)
			return
		}
		rs = append(rs, r)
	}
	slices.SortStableFunc(rs, func(a, b *sdk.Resource) int { return strings.Compare(a.URI, b.URI) })
	s.mu.Lock()
	s.resources = rs
	s.mu.Unlock()
}

// refreshResources answers notifications/resources/list_changed.
func (s *server) refreshResources(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.h.ctx, s.h.o.StartTimeout)
	defer cancel()
	s.listResources(ctx, cs)
	s.h.changed()
}

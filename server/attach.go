package server

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/zot-editors/zot/agent/message"
)

// Attachments: the chips a user attaches to a prompt become context blocks
// of the user's message, one text block each, after the user's own text:
//
//	<context kind="file" label="calc.py" uri="file:///w/calc.py">
//	calc.py (40 lines):
//	```
//	…
//	```
//	</context>
//
// The first line is the block's header (attributes XML-escaped); clients
// show a block as a chip from it and never as text (docs/protocol.md,
// "Attachments"). The model reads a delimited, labelled block.

// contextOpen starts every context block; contextClose ends it.
const (
	contextOpen  = "<context "
	contextClose = "</context>"
)

// Size limits of what one attachment adds to the prompt. A larger file is
// cut (the block says so and names the read tool for the rest); a
// terminal keeps its last lines.
const (
	maxAttachedFile     = 256 << 10
	maxAttachedTerminal = 64 << 10
	maxAttachedResource = 256 << 10
)

// validAttachmentKinds are the kinds zot/prompt accepts.
var validAttachmentKinds = map[string]bool{
	AttachFile: true, AttachSelection: true, AttachProblems: true, AttachTerminal: true, AttachMCPResource: true,
}

// validate checks one attachment's required fields; field names the
// attachment ("attachments[2]").
func (a *Attachment) validate(method, field string) error {
	if !validAttachmentKinds[a.Kind] {
		return fieldError(method, field+".kind", "must be file, selection, problems, terminal or mcpResource, not %q", a.Kind)
	}
	switch a.Kind {
	case AttachFile, AttachSelection:
		if uriPath(a.URI) == "" {
			return fieldError(method, field+".uri", "must be a file: URI for a %s attachment, not %q", a.Kind, a.URI)
		}
		if a.Kind == AttachSelection && a.Range == nil {
			return fieldError(method, field+".range", "is required for a selection attachment")
		}
	case AttachTerminal:
		if a.Text == "" {
			return fieldError(method, field+".text", "is required for a terminal attachment (the terminal's output)")
		}
	case AttachMCPResource:
		if a.Server == "" {
			return fieldError(method, field+".server", "is required for an mcpResource attachment (the MCP server's name from zot/mcp/resources)")
		}
		if a.URI == "" {
			return fieldError(method, field+".uri", "is required for an mcpResource attachment (the resource's URI)")
		}
	}
	return nil
}

// contextBlock renders one block: the header with attrs (pairs of name and
// value; empty values are left out), then body.
func contextBlock(kind, label string, attrs []string, body string) string {
	var b strings.Builder
	b.WriteString(contextOpen)
	attr := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s=\"%s\" ", k, html.EscapeString(oneLine(v)))
		}
	}
	attr("kind", kind)
	attr("label", label)
	for i := 0; i+1 < len(attrs); i += 2 {
		attr(attrs[i], attrs[i+1])
	}
	s := strings.TrimSuffix(b.String(), " ")
	return s + ">\n" + strings.TrimRight(body, "\n") + "\n" + contextClose
}

// oneLine keeps a header attribute on the header line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// fenced puts text in a code fence longer than any backtick run inside it,
// so the content cannot close the fence early.
func fenced(lang, text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

// langOf is the fence language for a path (its extension), or "".
func langOf(path string) string {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if ext == "" || strings.ContainsAny(ext, " `") {
		return ""
	}
	return ext
}

// isBinary reports data the model cannot read as text: a NUL byte in its
// first 8 KiB, or invalid UTF-8 there.
func isBinary(data []byte) bool {
	head := data[:min(len(data), 8<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if len(head) < len(data) {
		// A rune may straddle the cut.
		for i := 0; i < 3 && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

// cutAt cuts s to at most n bytes at a line end (or a rune boundary).
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i > n/2 {
		return s[:i+1]
	}
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// tailAt keeps at most the last n bytes of s, from a line start.
func tailAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < n/2 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[1:]
	}
	return s
}

// expandLocal renders the attachments the server can read at once (files,
// selections, problems, terminals); MCP resources are left for the run
// (nil in their slot), as reading one is a call to another process.
func (s *Server) expandLocal(ctx context.Context, as []Attachment) ([]message.Content, error) {
	out := make([]message.Content, len(as))
	for i := range as {
		a := &as[i]
		var text string
		var err error
		switch a.Kind {
		case AttachFile:
			text, err = s.attachFile(ctx, a)
		case AttachSelection:
			text, err = s.attachSelection(ctx, a)
		case AttachProblems:
			text = s.attachProblems(a)
		case AttachTerminal:
			text = attachTerminal(a)
		case AttachMCPResource:
			continue
		}
		if err != nil {
			return nil, rpcError(CodeRequestFailed, "%s: attachments[%d]: %v", MethodPrompt, i, err)
		}
		out[i] = message.Text(text)
	}
	return out, nil
}

// expandRemote fills the MCP resource slots expandLocal left, in order.
func (s *Server) expandRemote(ctx context.Context, as []Attachment, local []message.Content) ([]message.Content, error) {
	out := make([]message.Content, 0, len(as))
	for i := range as {
		if as[i].Kind != AttachMCPResource {
			out = append(out, local[i])
			continue
		}
		text, err := s.attachMCPResource(ctx, &as[i])
		if err != nil {
			return nil, err
		}
		out = append(out, message.Text(text))
	}
	return out, nil
}

// attachFile reads the file as the agent's tools do: the open buffer
// (unsaved typing counts), else the disk. A range keeps only those lines.
func (s *Server) attachFile(ctx context.Context, a *Attachment) (string, error) {
	path := uriPath(a.URI)
	shown := s.ws.display(path)
	data, err := s.ws.ReadFile(ctx, path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", shown, err)
	}
	s.ws.NoteRead(path, data) // the model is shown it: as the read tool
	label := a.Label
	if label == "" {
		label = filepath.Base(path)
	}
	if isBinary(data) {
		return contextBlock(AttachFile, label, []string{"path", shown, "uri", a.URI},
			fmt.Sprintf("%s is a binary file (%d bytes); its content is not included.", shown, len(data))), nil
	}
	text := string(data)
	if a.Range != nil {
		return s.rangeBlock(AttachFile, label, shown, a.URI, text, a)
	}
	lines := countLines(text)
	head := fmt.Sprintf("%s (%d lines):", shown, lines)
	if cut := cutAt(text, maxAttachedFile); len(cut) < len(text) {
		head = fmt.Sprintf("%s (%d lines; only the first %d are included — read the file for the rest):", shown, lines, countLines(cut))
		text = cut
	}
	return contextBlock(AttachFile, label, []string{"path", shown, "uri", a.URI},
		head+"\n"+fenced(langOf(path), text)), nil
}

// attachSelection is the selected text: the open buffer's text of the
// range, else the text the client sent, else the range of the file.
func (s *Server) attachSelection(ctx context.Context, a *Attachment) (string, error) {
	path := uriPath(a.URI)
	shown := s.ws.display(path)
	label := a.Label
	if d, ok := s.overlay.get(path); ok {
		return s.rangeBlock(AttachSelection, label, shown, a.URI, d.text, a)
	}
	if a.Text != "" {
		if label == "" {
			label = fmt.Sprintf("%s:%d-%d", filepath.Base(path), a.Range.Start.Line+1, lastSelectedLine(a.Range))
		}
		return contextBlock(AttachSelection, label,
			[]string{"path", shown, "uri", a.URI, "lines", fmt.Sprintf("%d-%d", a.Range.Start.Line+1, lastSelectedLine(a.Range))},
			fmt.Sprintf("%s, lines %d–%d:\n%s", shown, a.Range.Start.Line+1, lastSelectedLine(a.Range), fenced(langOf(path), a.Text))), nil
	}
	data, err := s.ws.ReadFile(ctx, path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", shown, err)
	}
	return s.rangeBlock(AttachSelection, label, shown, a.URI, string(data), a)
}

// rangeBlock renders the text of a.Range in text (the whole document).
func (s *Server) rangeBlock(kind, label, shown, uri, text string, a *Attachment) (string, error) {
	s.mu.Lock()
	enc := s.enc
	s.mu.Unlock()
	li := newLineIndex(text)
	from, to := li.offset(a.Range.Start, enc), li.offset(a.Range.End, enc)
	if from > to {
		return "", fmt.Errorf("the range of %s ends before it starts", shown)
	}
	first, last := int(a.Range.Start.Line)+1, lastSelectedLine(a.Range)
	if label == "" {
		label = fmt.Sprintf("%s:%d-%d", filepath.Base(shown), first, last)
	}
	sel := text[from:to]
	head := fmt.Sprintf("%s, lines %d–%d:", shown, first, last)
	if cut := cutAt(sel, maxAttachedFile); len(cut) < len(sel) {
		head = fmt.Sprintf("%s, lines %d–%d (only the first %d lines are included — read the file for the rest):", shown, first, last, countLines(cut))
		sel = cut
	}
	return contextBlock(kind, label, []string{"path", shown, "uri", uri, "lines", fmt.Sprintf("%d-%d", first, last)},
		head+"\n"+fenced(langOf(shown), sel)), nil
}

// attachProblems lists the diagnostics the editor shows, one a line as a
// compiler prints them: path:line:column: severity: message [source code].
func (s *Server) attachProblems(a *Attachment) string {
	label := a.Label
	where := "the workspace"
	if p := uriPath(a.URI); p != "" {
		where = s.ws.display(p)
		if label == "" {
			label = "problems in " + filepath.Base(p)
		}
	}
	if label == "" {
		label = "problems"
	}
	if len(a.Diagnostics) == 0 {
		return contextBlock(AttachProblems, label, []string{"uri", a.URI}, fmt.Sprintf("The editor shows no problems in %s.", where))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The problems the editor shows in %s (%d):\n", where, len(a.Diagnostics))
	for _, d := range a.Diagnostics {
		file := d.URI
		if p := uriPath(d.URI); p != "" {
			file = s.ws.display(p)
		}
		sev := d.Severity
		if sev == "" {
			sev = "error"
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s: %s", file, d.Range.Start.Line+1, d.Range.Start.Character+1, sev, oneLine(d.Message))
		switch {
		case d.Source != "" && d.Code != "":
			fmt.Fprintf(&b, " [%s %s]", d.Source, d.Code)
		case d.Source != "":
			fmt.Fprintf(&b, " [%s]", d.Source)
		case d.Code != "":
			fmt.Fprintf(&b, " [%s]", d.Code)
		}
		b.WriteByte('\n')
	}
	return contextBlock(AttachProblems, label, []string{"uri", a.URI}, b.String())
}

// attachTerminal is the terminal output the editor captured (its end).
func attachTerminal(a *Attachment) string {
	label := a.Label
	if label == "" {
		label = "terminal"
	}
	text := a.Text
	head := fmt.Sprintf("The output of the terminal %q:", label)
	if cut := tailAt(text, maxAttachedTerminal); len(cut) < len(text) {
		head = fmt.Sprintf("The last %d lines of the output of the terminal %q:", countLines(cut), label)
		text = cut
	}
	return contextBlock(AttachTerminal, label, nil, head+"\n"+fenced("", text))
}

// attachMCPResource reads the resource through the MCP host.
func (s *Server) attachMCPResource(ctx context.Context, a *Attachment) (string, error) {
	h := s.currentMCP()
	if h == nil {
		return "", fmt.Errorf("cannot attach %s: MCP is off or not started", a.URI)
	}
	text, mime, err := h.ReadResource(ctx, a.Server, a.URI)
	if err != nil {
		return "", err
	}
	label := a.Label
	if label == "" {
		label = a.URI
	}
	head := fmt.Sprintf("The resource %s of the MCP server %s:", a.URI, a.Server)
	if cut := cutAt(text, maxAttachedResource); len(cut) < len(text) {
		head = fmt.Sprintf("The resource %s of the MCP server %s (cut to its first %d bytes):", a.URI, a.Server, len(cut))
		text = cut
	}
	return contextBlock(AttachMCPResource, label, []string{"server", a.Server, "uri", a.URI, "mimeType", mime},
		head+"\n"+fenced("", text)), nil
}

// isContextBlock reports a text block that is an attachment (a chip).
func isContextBlock(c message.Content) bool {
	return c.Type == message.TypeText && strings.HasPrefix(c.Text, contextOpen) && strings.HasSuffix(c.Text, contextClose)
}

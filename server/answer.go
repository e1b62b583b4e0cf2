package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/atomicfile"
	"github.com/zot-editors/zot/internal/ospath"
)

// A code action's answer (what the model said besides its edits) reaches
// a plain LSP client the standard way: window/showMessage when it is
// short; else a markdown transcript under $ZOT_HOME/transcripts, opened
// with window/showDocument when the client has it, else named in a
// showMessage with the answer's beginning.

// Limits of an answer shown whole in window/showMessage.
const (
	shortAnswerChars = 300
	shortAnswerLines = 3
)

// transcriptsDir is under $ZOT_HOME, not the workspace: a transcript is
// the user's, not the project's (no stray files in the repository, none in
// a protected .zot directory).
const transcriptsDir = "transcripts"

// showAnswer tells the user how a code action ended.
func (s *Server) showAnswer(ctx context.Context, runID string, a *ActionArgs, prompt string, o *actionOutcome) {
	answer := strings.Join(o.texts, "\n\n")
	switch {
	case o.stop == "aborted":
		s.showMessage(protocol.MessageTypeInfo, a.Title+": aborted")
		return
	case len(o.errs) > 0 && answer == "":
		s.showMessage(protocol.MessageTypeError, a.Title+": "+strings.Join(o.errs, "; "))
		return
	case answer == "" && len(o.edited) > 0:
		s.showMessage(protocol.MessageTypeInfo, a.Title+": changed "+s.shownPaths(o.edited))
		return
	case answer == "":
		s.showMessage(protocol.MessageTypeInfo, a.Title+": done (no answer)")
		return
	case len(answer) <= shortAnswerChars && strings.Count(answer, "\n") < shortAnswerLines:
		s.showMessage(protocol.MessageTypeInfo, "zot: "+answer)
		return
	}
	path, err := s.writeTranscript(runID, a, prompt, answer, o)
	if err != nil {
		s.logf("writing the transcript: %v", err)
		s.showMessage(protocol.MessageTypeInfo, "zot: "+clipAnswer(answer))
		return
	}
	s.mu.Lock()
	canShow := s.plain.showDocument
	s.mu.Unlock()
	if canShow {
		var res struct {
			Success bool `json:"success"`
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := s.call(sctx, "window/showDocument", map[string]any{"uri": ospath.ToURI(path), "takeFocus": true}, &res)
		cancel()
		if err == nil && res.Success {
			return
		}
		s.logf("window/showDocument %s: success=%v err=%v", path, res.Success, err)
	}
	s.showMessage(protocol.MessageTypeInfo, "zot: "+clipAnswer(answer)+"\n\nThe whole answer: "+path)
}

// showProposal writes the unified diff of a proposed change to a file
// under $ZOT_HOME/transcripts and opens it with window/showDocument, for a
// client without zot/reviewEdit that announced showDocument; it returns
// the file's path, "" when nothing was shown.
func (s *Server) showProposal(ctx context.Context, path, oldText, newText string) string {
	s.mu.Lock()
	canShow, zotHome := s.plain.showDocument, s.cfg.Home
	s.mu.Unlock()
	if !canShow {
		return ""
	}
	if zotHome == "" {
		zotHome = home.Dir()
	}
	dir := filepath.Join(zotHome, transcriptsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.logf("showing the proposal: %v", err)
		return ""
	}
	shown := s.ws.display(path)
	out := filepath.Join(dir, fmt.Sprintf("%s-%s.diff", time.Now().UTC().Format("20060102-150405.000"), filepath.Base(path)))
	text := "--- " + shown + "\n+++ " + shown + " (zot's proposal)\n" + tools.UnifiedDiff(oldText, newText, 3)
	if err := atomicfile.Write(out, []byte(text), 0o600); err != nil {
		s.logf("showing the proposal: %v", err)
		return ""
	}
	var res struct {
		Success bool `json:"success"`
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := s.call(sctx, "window/showDocument", map[string]any{"uri": ospath.ToURI(out), "takeFocus": true}, &res)
	cancel()
	if err != nil || !res.Success {
		s.logf("window/showDocument %s: success=%v err=%v", out, res.Success, err)
	}
	return out
}

// clipAnswer is the beginning of a long answer.
func clipAnswer(s string) string {
	r := []rune(s)
	if len(r) <= shortAnswerChars {
		return s
	}
	return strings.TrimSpace(string(r[:shortAnswerChars])) + "…"
}

func (s *Server) shownPaths(paths []string) string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.ws.Root(), p)
		}
		d := s.ws.display(p)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return strings.Join(out, ", ")
}

// writeTranscript writes the run as markdown and returns its path.
func (s *Server) writeTranscript(runID string, a *ActionArgs, prompt, answer string, o *actionOutcome) (string, error) {
	s.mu.Lock()
	zotHome := s.cfg.Home
	s.mu.Unlock()
	if zotHome == "" {
		zotHome = home.Dir()
	}
	dir := filepath.Join(zotHome, transcriptsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	now := time.Now().UTC()
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.md", now.Format("20060102-150405"), runID))
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", a.Title)
	fmt.Fprintf(&b, "%s, line %d · %s\n\n", s.ws.display(uriPath(a.URI)), a.Range.Start.Line+1, now.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "## Request\n\n%s\n\n", quoteMarkdown(prompt))
	fmt.Fprintf(&b, "## Answer\n\n%s\n", answer)
	if len(o.tools) > 0 {
		b.WriteString("\n## Tools\n\n")
		for _, t := range o.tools {
			fmt.Fprintf(&b, "- %s\n", t)
		}
	}
	if len(o.errs) > 0 {
		fmt.Fprintf(&b, "\n## Errors\n\n- %s\n", strings.Join(o.errs, "\n- "))
	}
	return path, atomicfile.Write(path, []byte(b.String()), 0o600)
}

// quoteMarkdown makes text a block quote.
func quoteMarkdown(text string) string {
	return "> " + strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n> ")
}

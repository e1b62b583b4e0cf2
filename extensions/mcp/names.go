package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// maxToolName is the providers' limit on a tool name ([A-Za-z0-9_-]{1,64}).
const maxToolName = 64

// ToolName is Claude Code's name for a server's tool, mcp__<server>__<tool>,
// with every character the providers refuse replaced by '_'. A name
// longer than 64 keeps its start and ends in a hash of the whole, so two
// long names that share a prefix stay apart.
func ToolName(server, tool string) string {
	full := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(full) <= maxToolName {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	return full[:maxToolName-len(suffix)] + suffix
}

// PromptName is a server's prompt as a slash command (without the '/').
func PromptName(server, prompt string) string { return ToolName(server, prompt) }

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// uniqueNames resolves collisions (two servers or tools that sanitize to
// the same name) deterministically: the first in order keeps the name,
// later ones get _2, _3 … (shortened to fit). order must be stable: the
// host lists servers by name and each server's tools by name.
func uniqueNames(names []string) []string {
	out := make([]string, len(names))
	taken := map[string]bool{}
	for i, n := range names {
		cand := n
		for k := 2; taken[cand]; k++ {
			suf := fmt.Sprintf("_%d", k)
			base := n
			if len(base)+len(suf) > maxToolName {
				base = base[:maxToolName-len(suf)]
			}
			cand = base + suf
		}
		taken[cand] = true
		out[i] = cand
	}
	return out
}

package agent

import "strings"

// PermissionMode decides what the agent may do without asking the user;
// every front (zot lsp, zot acp) offers the same three.
type PermissionMode string

const (
	// ModeAuto: edits and commands run without asking.
	ModeAuto PermissionMode = "auto"
	// ModeAsk: edits go to review and each command needs approval.
	ModeAsk PermissionMode = "ask"
	// ModeReadonly: write, edit and bash are refused.
	ModeReadonly PermissionMode = "readonly"
)

// ParsePermissionMode reads a mode name (any case, surrounding space
// ignored); ok is false for anything but auto, ask and readonly.
func ParsePermissionMode(s string) (m PermissionMode, ok bool) {
	switch m := PermissionMode(strings.ToLower(strings.TrimSpace(s))); m {
	case ModeAuto, ModeAsk, ModeReadonly:
		return m, true
	}
	return "", false
}

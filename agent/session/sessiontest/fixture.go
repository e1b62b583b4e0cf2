package sessiontest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PNG is a 1×1 PNG, base64: the fixture's image.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// ZotID is the id of the session ZotFixture writes.
const ZotID = "6f1c2b9e-3d4a-4c5b-9e8f-0a1b2c3d4e5f"

// The fixture's words, so a test can look for each in what the model got.
const (
	ZotPrompt     = "what is in the picture, and what do the notes say?"
	ZotToolCallID = "toolu_zot_01"
	ZotToolResult = "the notes say: kiwi-42"
	ZotAnswer     = "A red dot; the notes say kiwi-42."
	ZotReasoning  = "I should read notes.txt first."
)

// zotLines is a terminal session as zot writes it (issue 21's lines): an
// image, reasoning, a tool call, its result in a tool message, usage with
// cumulative totals, and a line type we do not know.
var zotLines = []string{
	`{"type":"meta","meta":{"id":"` + ZotID + `","cwd":"CWD","model":"claude-sonnet-4-5","provider":"anthropic","started":"2026-04-19T11:30:00Z","version":"0.9.3"}}`,
	`{"type":"message","message":{"role":"user","content":[{"text":"` + ZotPrompt + `"},{"mime_type":"image/png","data":"` + PNG + `"}],"time":"2026-04-19T11:30:01Z"}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"reasoning_id":"rs_zot_1","summary":"` + ZotReasoning + `","encrypted_content":"gAAAAB-opaque"},{"text":"Let me read the notes."},{"id":"` + ZotToolCallID + `","name":"read","arguments":{"path":"notes.txt"}}],"time":"2026-04-19T11:30:04Z"}}`,
	`{"type":"usage","usage":{"input_tokens":1200,"output_tokens":40,"cache_read_tokens":0,"cache_write_tokens":1000,"cost_usd":0.0081},"cumulative":{"input_tokens":1200,"output_tokens":40,"cache_read_tokens":0,"cache_write_tokens":1000,"cost_usd":0.0081}}`,
	`{"type":"message","message":{"role":"tool","content":[{"call_id":"` + ZotToolCallID + `","content":[{"text":"` + ZotToolResult + `"}],"is_error":false}],"time":"2026-04-19T11:30:05Z"}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"text":"` + ZotAnswer + `"}],"time":"2026-04-19T11:30:07Z"}}`,
	`{"type":"usage","usage":{"input_tokens":1300,"output_tokens":20,"cache_read_tokens":1000,"cache_write_tokens":0,"cost_usd":0.005},"cumulative":{"input_tokens":2500,"output_tokens":60,"cache_read_tokens":1000,"cache_write_tokens":1000,"cost_usd":0.0131}}`,
	`{"type":"zot_checkpoint","ref":"abc"}`,
}

// ZotDir is zot's session directory for cwd, computed here as zot does
// (independently of package session): the first 16 hex digits of
// sha256(absolute cwd).
func ZotDir(home, cwd string) string {
	sum := sha256.Sum256([]byte(cwd))
	return filepath.Join(home, "sessions", hex.EncodeToString(sum[:])[:16])
}

// WriteZotFixture writes the fixture session for the workspace cwd (an
// absolute path) where zot would, and returns its path.
func WriteZotFixture(t testing.TB, home, cwd string) string {
	t.Helper()
	dir := ZotDir(home, cwd)
	path := filepath.Join(dir, "20260419-113000-6f1c2b9e.jsonl")
	text := strings.ReplaceAll(strings.Join(zotLines, "\n")+"\n", "CWD", cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// LegacyID is the id of the session WriteLegacyFixture writes.
const LegacyID = "a1b2c3d4e5f6"

// WriteLegacyFixture writes a session in our earlier layout and format
// (sessions/--slug--/<time>_<id>.jsonl, {"kind": …} lines) for cwd, with
// the prompt "legacy question" and the answer "legacy answer".
func WriteLegacyFixture(t testing.TB, home, cwd string) string {
	t.Helper()
	slug := strings.Trim(strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(cwd), "-")
	dir := filepath.Join(home, "sessions", "--"+slug+"--")
	path := filepath.Join(dir, "20260101T100000Z_"+LegacyID+".jsonl")
	lines := []string{
		`{"kind":"session","id":"` + LegacyID + `","cwd":"` + cwd + `","created":"2026-01-01T10:00:00Z","provider":"anthropic","model":"claude-sonnet-4-5"}`,
		`{"kind":"message","created":"2026-01-01T10:00:01Z","message":{"role":"user","content":[{"type":"text","text":"legacy question"}],"time":"2026-01-01T10:00:01Z"}}`,
		`{"kind":"message","created":"0001-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"text","text":"legacy answer"}],"time":"2026-01-01T10:00:02Z"}}`,
		`{"kind":"usage","created":"0001-01-01T00:00:00Z","usage":{"input":3,"output":4,"cache_read":0,"cache_write":0,"cost_usd":0.01}}`,
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

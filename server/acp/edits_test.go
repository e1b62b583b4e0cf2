//go:build unix

package acp_test

import (
	"os"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
)

const calcText = "line1\nline2\nline3\nline4\n"

// buffer is the client's unsaved text of path.
func (c *client) buffer(path string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buffers[path]
}

// typeInto replaces the client's buffer of path, as the user typing.
func (c *client) typeInto(path, text string) {
	c.mu.Lock()
	c.buffers[path] = text
	c.mu.Unlock()
}

// tail is the end of a model request: the last tool result.
func tail(s string) string { return s[max(0, len(s)-600):] }

func (c *client) writeRequests() []sdk.WriteTextFileRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.WriteTextFileRequest(nil), c.writes...)
}

// refusedForTyping is the refusal the model gets when the user typed on
// the lines of its change (line 3 of calc.py) since it read the file.
const refusedForTyping = "calc.py changed in the editor while you were working: the user is editing line 3 in the editor, which overlaps your change to line 3. No change was made; read the file again and redo the edit"

// The model reads calc.py (one prompt), the user types in the buffer, the
// model changes the file (the next prompt): the change is judged against
// the read, so the user's typing is kept, or the change refused when it
// is on the same line. Two prompts: the typing happens while zot waits
// for the user, no timing involved.
func TestChangeJudgedAgainstLastRead(t *testing.T) {
	editLine3 := llmtest.ToolReply("edit", map[string]any{"path": "calc.py", "edits": []map[string]any{{"oldText": "line3", "newText": "line3 MODEL"}}})
	writeLine3 := llmtest.ToolReply("write", map[string]any{"path": "calc.py", "content": "line1\nline2\nline3 MODEL\nline4\n"})
	cases := []struct {
		name   string
		change llmtest.Reply
		typed  string // the buffer after the user typed
		want   string // the buffer at the end; typed when refused
		clear  bool   // /clear between the read and the change
	}{
		{"edit of the typed line", editLine3, "line1\nline2\nline3 TYPED\nline4\n", "", false},
		{"edit of another line", editLine3, "line1 TYPED\nline2\nline3\nline4\n", "line1 TYPED\nline2\nline3 MODEL\nline4\n", false},
		{"write over the typed line", writeLine3, "line1\nline2\nline3 TYPED\nline4\n", "", false},
		{"write beside the typing", writeLine3, "line0 TYPED\nline1\nline2\nline3\nline4\n", "line0 TYPED\nline1\nline2\nline3 MODEL\nline4\n", false},
		// The model forgot its read, but the change it makes without
		// reading again is still kept off the typing.
		{"write after /clear", writeLine3, "line0 TYPED\nline1\nline2\nline3\nline4\n", "line0 TYPED\nline1\nline2\nline3 MODEL\nline4\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, llmtest.ToolReply("read", map[string]any{"path": "calc.py"}), llmtest.TextReply("read it"),
				tc.change, llmtest.TextReply("done"))
			path := e.write("calc.py", calcText)
			p := e.start()
			c, _ := e.connect(p, allCaps)
			c.typeInto(path, calcText)
			s := c.newSession(e.root)
			c.setMode(s.SessionId, "auto")
			c.mustPrompt(s.SessionId, "read calc.py")
			c.typeInto(path, tc.typed)
			if tc.clear {
				c.mustPrompt(s.SessionId, "/clear")
			}
			c.mustPrompt(s.SessionId, "now change line 3")

			result := lastRequest(e)
			writes := c.writeRequests()
			if tc.want == "" {
				if !strings.Contains(result, refusedForTyping) {
					t.Errorf("the model was not told the change was refused: …%s", tail(result))
				}
				if len(writes) != 0 {
					t.Errorf("fs/write_text_file = %s, want none", jsonOf(writes))
				}
				if got := c.buffer(path); got != tc.typed {
					t.Errorf("buffer = %q, want the user's %q", got, tc.typed)
				}
				return
			}
			if strings.Contains(result, "changed in the editor") {
				t.Errorf("a change beside the typing was refused: …%s", tail(result))
			}
			if len(writes) != 1 || writes[0].Content != tc.want {
				t.Fatalf("fs/write_text_file = %s, want one with %q", jsonOf(writes), tc.want)
			}
			if got := c.buffer(path); got != tc.want {
				t.Errorf("buffer = %q, want %q", got, tc.want)
			}
		})
	}
}

// In ask mode the user may type while the change waits for their answer:
// the buffer is read again before writing, the typing on other lines is
// kept, on the change's lines the change is refused.
func TestTypingDuringReviewIsKept(t *testing.T) {
	cases := []struct {
		name  string
		typed string
		want  string // "" when refused
	}{
		{"another line", "line1 TYPED\nline2\nline3\nline4\n", "line1 TYPED\nline2\nline3 MODEL\nline4\n"},
		{"the changed line", "line1\nline2\nline3 TYPED\nline4\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, llmtest.ToolReply("edit", map[string]any{"path": "calc.py", "edits": []map[string]any{{"oldText": "line3", "newText": "line3 MODEL"}}}),
				llmtest.TextReply("done"))
			path := e.write("calc.py", calcText)
			p := e.start()
			c, _ := e.connect(p, allCaps)
			c.typeInto(path, calcText)
			c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
				c.typeInto(path, tc.typed) // while the diff is shown
				return sdk.NewRequestPermissionOutcomeSelected("allow_once")
			}
			s := c.newSession(e.root) // ask
			c.mustPrompt(s.SessionId, "change line 3")

			result := lastRequest(e)
			writes := c.writeRequests()
			if tc.want == "" {
				if !strings.Contains(result, refusedForTyping) {
					t.Errorf("the model was not told the change was refused: …%s", tail(result))
				}
				if len(writes) != 0 || c.buffer(path) != tc.typed {
					t.Errorf("fs/write_text_file = %s, buffer %q: the typing was overwritten", jsonOf(writes), c.buffer(path))
				}
				return
			}
			if len(writes) != 1 || writes[0].Content != tc.want {
				t.Fatalf("fs/write_text_file = %s, want one with %q", jsonOf(writes), tc.want)
			}
		})
	}
}

// A client that serves reads (fs/read_text_file: the unsaved buffer) but
// not writes gets zot's change in the file on disk: replayed onto the
// file as saved, so the user's unsaved typing never reaches the disk; a
// change of unsaved lines is refused.
func TestReadOnlyClientKeepsUnsavedTypingOffDisk(t *testing.T) {
	cases := []struct {
		name     string
		unsaved  string
		wantDisk string // calcText when refused
	}{
		{"typing on another line", "line1 TYPED\nline2\nline3\nline4\n", "line1\nline2\nline3 MODEL\nline4\n"},
		{"typing on the changed line", "line1\nline2\nline3 TYPED\nline4\n", calcText},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, llmtest.ToolReply("edit", map[string]any{"path": "calc.py", "edits": []map[string]any{{"oldText": "line3", "newText": "line3 MODEL"}}}),
				llmtest.TextReply("done"))
			path := e.write("calc.py", calcText)
			p := e.start()
			c, _ := e.connect(p, sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true}})
			c.typeInto(path, tc.unsaved)
			s := c.newSession(e.root)
			c.setMode(s.SessionId, "auto")
			c.mustPrompt(s.SessionId, "change line 3")

			if b, _ := os.ReadFile(path); string(b) != tc.wantDisk {
				t.Errorf("disk = %q, want %q", b, tc.wantDisk)
			}
			result := lastRequest(e)
			refused := strings.Contains(result, "calc.py has unsaved changes in the editor on the lines you are changing")
			if refused != (tc.wantDisk == calcText) {
				t.Errorf("refused = %v; the model was told: …%s", refused, tail(result))
			}
		})
	}
}

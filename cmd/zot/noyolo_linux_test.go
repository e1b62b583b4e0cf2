package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
)

// openPTY returns a pseudo-terminal's controlling side and its terminal.
func openPTY(t *testing.T) (control, term *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		testenv.Skip(t, "no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(control.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(control.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close(); control.Close() })
	return control, term
}

// On a terminal zot -p --no-yolo asks before every tool call, showing the
// whole call: yes runs it, no refuses it and the model hears so.
func TestNoYoloPrintAsksOnTerminal(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "t1", Name: "write", Args: []byte(`{"path":"yes.txt","content":"allowed"}`)},
		}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "t2", Name: "write", Args: []byte(`{"path":"no.txt","content":"denied"}`)},
		}},
		llmtest.TextReply("done"),
	)
	control, term := openPTY(t)
	// The terminal buffers the answers until zot reads them, one a question.
	control.WriteString("y\nn\n")
	cmd := e.command(e.args("--no-session", "--no-yolo", "-p", "write two files")...)
	var so, se bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout %s\nstderr %s", err, so.String(), se.String())
	}
	if got := e.read("yes.txt"); got != "allowed" {
		t.Fatalf("the allowed write: %q", got)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "no.txt")); !os.IsNotExist(err) {
		t.Fatalf("the denied write ran: %v", err)
	}
	if strings.Count(se.String(), "zot wants to run write") != 2 || !strings.Contains(se.String(), `{"path":"no.txt","content":"denied"}`) {
		t.Fatalf("the questions did not show the whole calls:\n%s", se.String())
	}
	res := toolResults(t, e, 2)
	if len(res) != 2 || !strings.Contains(res[1], "the user denied this write call") || strings.Contains(res[0], "denied") {
		t.Fatalf("tool results: %v", res)
	}
}

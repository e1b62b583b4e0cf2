// Command zot-client sends one prompt over `zot rpc` from Go, with the
// standard library alone (in-process Go programs use package agent
// instead: docs/rpc.md).
//
//	go run ./examples/rpc/go "what does main.go do?"
//
// It starts `zot rpc` (the `zot` on PATH), sends the prompt, prints the
// answer's text on stdout as it streams and the tool activity on stderr,
// and exits when the run's `done` arrives: 0, or 1 when the run reported
// an error. With ZOTCORE_RPC_TOKEN set it says hello with the token first.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// event is the part of a zot rpc line this client reads.
type event struct {
	Type    string          `json:"type"`
	Command string          `json:"command"` // response
	Success bool            `json:"success"` // response
	Error   string          `json:"error"`   // response
	Delta   string          `json:"delta"`   // text_delta
	ID      string          `json:"id"`      // tool_call, tool_result, and a response (this client sends string ids)
	Name    string          `json:"name"`    // tool_call
	Args    json.RawMessage `json:"args"`    // tool_call
	IsError bool            `json:"is_error"`
	Message string          `json:"message"` // error
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: zot-client PROMPT")
		return 2
	}
	zot := exec.Command("zot", "rpc")
	zot.Stderr = os.Stderr
	in, err := zot.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out, err := zot.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := zot.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	send := func(command map[string]any) {
		b, _ := json.Marshal(command)
		in.Write(append(b, '\n'))
	}
	if token := os.Getenv("ZOTCORE_RPC_TOKEN"); token != "" {
		send(map[string]any{"id": "0", "type": "hello", "token": token})
	}
	send(map[string]any{"id": "1", "type": "prompt", "message": strings.Join(args, " ")})

	status, failed, done := 1, false, false
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 0, 64<<10), 64<<20) // an event may carry a whole file
	for !done && lines.Scan() {
		if len(strings.TrimSpace(lines.Text())) == 0 {
			continue
		}
		var ev event
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			fmt.Fprintf(os.Stderr, "[error] not JSON from zot rpc: %v\n", err)
			failed = true
			break
		}
		switch ev.Type {
		case "response":
			if !ev.Success {
				fmt.Fprintf(os.Stderr, "[error] %s: %s\n", ev.Command, ev.Error)
				failed = true
				done = ev.Command == "hello" || ev.Command == "prompt" // no run will follow
			}
		case "text_delta":
			fmt.Print(ev.Delta)
		case "tool_call":
			args := ev.Args
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			fmt.Fprintf(os.Stderr, "\n[tool] %s %s\n", ev.Name, args)
		case "tool_result":
			if ev.IsError {
				fmt.Fprintf(os.Stderr, "[tool error] %s\n", ev.ID)
			}
		case "error":
			fmt.Fprintf(os.Stderr, "\n[error] %s\n", ev.Message)
			failed = true
		case "done":
			fmt.Println()
			done = true
			if !failed {
				status = 0
			}
		}
	}
	if !done && !failed {
		fmt.Fprintln(os.Stderr, "[error] zot rpc exited before the run was done")
	}
	in.Close() // end of input: zot exits
	zot.Wait()
	return status
}

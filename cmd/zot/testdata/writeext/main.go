// Command writeext is a test extension whose tool "put" writes a file:
// {"path": absolute path, "text": its new text}. Checkpoint tests use it
// for a change made by an extension rather than by zot's tools.
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"sync"
)

var mu sync.Mutex

func emit(v any) {
	b, _ := json.Marshal(v)
	mu.Lock()
	os.Stdout.Write(append(b, '\n'))
	mu.Unlock()
}

func main() {
	emit(map[string]any{"type": "hello", "name": "writeext", "version": "0.1.0", "capabilities": []string{"tools"}})
	emit(map[string]any{"type": "register_tool", "name": "put", "description": "write a file",
		"schema": json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"]}`)})
	emit(map[string]any{"type": "ready"})
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		var f struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Args struct {
				Path string `json:"path"`
				Text string `json:"text"`
			} `json:"args"`
		}
		if len(line) > 0 && json.Unmarshal(line, &f) == nil && f.Type == "tool_call" {
			text, isErr := "wrote "+f.Args.Path, false
			if err := os.WriteFile(f.Args.Path, []byte(f.Args.Text), 0o644); err != nil {
				text, isErr = err.Error(), true
			}
			emit(map[string]any{"type": "tool_result", "id": f.ID, "is_error": isErr, "content": []map[string]any{{"type": "text", "text": text}}})
		}
		if err != nil {
			return
		}
	}
}

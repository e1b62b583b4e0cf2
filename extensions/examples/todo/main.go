// Command todo is a zot extension written with the Go SDK: a todo list
// the model edits through the "todo" tool and the user through the
// /todos panel. The list lives in data_dir/todos.json.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/zot-editors/zot/extensions/sdk"
	"github.com/zot-editors/zot/extensions/wire"
)

const (
	panelID     = "todos-main"
	panelTitle  = "Todos"
	panelFooter = "↑/↓ move · x/enter toggle · a add · d delete · esc/q close"
)

var toolSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["add", "list", "complete"],
               "description": "add an item, list all items, or complete one"},
    "text":   {"type": "string", "minLength": 1, "description": "the new item's text (add)"},
    "id":     {"type": "integer", "minimum": 1, "description": "the item's id, as shown by list (complete)"}
  },
  "required": ["action"],
  "additionalProperties": false
}`)

// todos is the extension's state: the list, and the panel's when open.
type todos struct {
	e *sdk.Extension

	mu     sync.Mutex
	path   string // todos.json, resolved after hello_ack
	list   list
	open   bool
	cursor int
}

func main() {
	e := sdk.New("todo", "1.0.0")
	t := &todos{e: e}
	e.Tool("todo", "Manage the user's todo list: add an item, list items (with ids), or complete an item by id.",
		toolSchema, t.tool)
	e.Command("todos", "open the todo list panel (/todos [text] adds text first)", t.command)
	e.OnPanelKey(t.key)
	e.OnPanelClose(func(id string) {
		if id == panelID {
			t.mu.Lock()
			t.open = false
			t.mu.Unlock()
		}
	})
	if err := e.Run(); err != nil {
		e.Logf("run: %v", err)
		os.Exit(1)
	}
}

// loadLocked reads todos.json on first use (data_dir is only known once
// Run has the hello_ack).
func (t *todos) loadLocked() error {
	if t.path != "" {
		return nil
	}
	h := t.e.Hello()
	dir := h.DataDir
	if dir == "" {
		dir = h.ExtensionDir
	}
	if dir == "" {
		dir = "."
	}
	l, err := load(filepath.Join(dir, "todos.json"))
	if err != nil {
		return err
	}
	t.path, t.list = filepath.Join(dir, "todos.json"), l
	return nil
}

func (t *todos) saveLocked() error {
	if err := save(t.path, t.list); err != nil {
		t.e.Logf("save %s: %v", t.path, err)
		return fmt.Errorf("saving todos: %w", err)
	}
	return nil
}

func (t *todos) addLocked(text string) Item {
	it := Item{ID: t.list.NextID, Text: text}
	t.list.NextID++
	t.list.Items = append(t.list.Items, it)
	return it
}

// toolArgs is the tool's input, checked against toolSchema by hand.
type toolArgs struct {
	Action string  `json:"action"`
	Text   *string `json:"text"`
	ID     *int    `json:"id"`
}

func parseToolArgs(raw json.RawMessage) (toolArgs, error) {
	var a toolArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf("invalid arguments: %v", err)
	}
	switch a.Action {
	case "add":
		if a.Text == nil || strings.TrimSpace(*a.Text) == "" {
			return a, errors.New(`invalid arguments: "add" needs a non-empty "text"`)
		}
	case "complete":
		if a.ID == nil || *a.ID < 1 {
			return a, errors.New(`invalid arguments: "complete" needs an "id" ≥ 1 (see "list")`)
		}
	case "list":
	case "":
		return a, errors.New(`invalid arguments: "action" is required (add, list or complete)`)
	default:
		return a, fmt.Errorf(`invalid arguments: unknown action %q (want add, list or complete)`, a.Action)
	}
	return a, nil
}

func (t *todos) tool(raw json.RawMessage) sdk.ToolResult {
	a, err := parseToolArgs(raw)
	if err != nil {
		return sdk.ErrorResult(err.Error())
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.loadLocked(); err != nil {
		return sdk.ErrorResult(err.Error())
	}
	var msg string
	switch a.Action {
	case "list":
		return sdk.TextResult(t.formatLocked())
	case "add":
		it := t.addLocked(strings.TrimSpace(*a.Text))
		msg = fmt.Sprintf("added #%d: %s", it.ID, it.Text)
	case "complete":
		i := t.indexLocked(*a.ID)
		if i < 0 {
			return sdk.ErrorResult(fmt.Sprintf("no todo #%d; list shows the ids", *a.ID))
		}
		t.list.Items[i].Done = true
		msg = fmt.Sprintf("completed #%d: %s", *a.ID, t.list.Items[i].Text)
	}
	if err := t.saveLocked(); err != nil {
		return sdk.ErrorResult(err.Error())
	}
	t.renderLocked() // keep an open panel in step with the model's edits
	return sdk.TextResult(msg)
}

func (t *todos) indexLocked(id int) int {
	for i, it := range t.list.Items {
		if it.ID == id {
			return i
		}
	}
	return -1
}

func (t *todos) formatLocked() string {
	if len(t.list.Items) == 0 {
		return "no todos"
	}
	var b strings.Builder
	for _, it := range t.list.Items {
		box := "[ ]"
		if it.Done {
			box = "[x]"
		}
		fmt.Fprintf(&b, "#%d %s %s\n", it.ID, box, it.Text)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (t *todos) command(args string) sdk.Response {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.loadLocked(); err != nil {
		return sdk.Error(err.Error())
	}
	if args != "" {
		t.addLocked(args)
		t.cursor = len(t.list.Items) - 1
		if err := t.saveLocked(); err != nil {
			return sdk.Error(err.Error())
		}
	}
	t.open = true
	return sdk.OpenPanel(t.viewLocked())
}

func (t *todos) viewLocked() sdk.PanelView {
	t.cursor = max(0, min(t.cursor, len(t.list.Items)-1))
	lines := make([]string, 0, len(t.list.Items))
	for i, it := range t.list.Items {
		marker, box := "  ", "□"
		if i == t.cursor {
			marker = "› "
		}
		if it.Done {
			box = "✓"
		}
		lines = append(lines, marker+box+" "+it.Text)
	}
	if len(lines) == 0 {
		lines = append(lines, "  (no todos: press a to add one)")
	}
	return sdk.PanelView{ID: panelID, Title: panelTitle, Lines: lines, Footer: panelFooter}
}

func (t *todos) renderLocked() {
	if !t.open {
		return
	}
	v := t.viewLocked()
	if err := t.e.RenderPanel(v.ID, v.Title, v.Lines, v.Footer); err != nil {
		t.e.Logf("render: %v", err)
	}
}

// key handles one key in the panel, then redraws it (or closes it).
func (t *todos) key(id, key, text string) {
	if id != panelID {
		return
	}
	if key == wire.KeyRune {
		key = "rune:" + text
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.loadLocked(); err != nil {
		_ = t.e.Notify(wire.LevelError, err.Error())
		return
	}
	t.open = true
	n := len(t.list.Items)
	changed := false
	switch key {
	case wire.KeyUp, "rune:k":
		t.cursor--
	case wire.KeyDown, "rune:j":
		t.cursor++
	case wire.KeyHome, wire.KeyPageUp:
		t.cursor = 0
	case wire.KeyEnd, wire.KeyPageDown:
		t.cursor = n - 1
	case wire.KeyEnter, "rune:x", "rune: ":
		if t.cursor >= 0 && t.cursor < n {
			t.list.Items[t.cursor].Done = !t.list.Items[t.cursor].Done
			changed = true
		}
	case "rune:a":
		t.addLocked(fmt.Sprintf("new item %d", t.list.NextID))
		t.cursor = len(t.list.Items) - 1
		changed = true
	case wire.KeyDelete, "rune:d":
		if t.cursor >= 0 && t.cursor < n {
			t.list.Items = append(t.list.Items[:t.cursor], t.list.Items[t.cursor+1:]...)
			changed = true
		}
	case wire.KeyEsc, "rune:q":
		t.open = false
		if err := t.e.ClosePanel(panelID); err != nil {
			t.e.Logf("close panel: %v", err)
		}
		return
	}
	if changed {
		if err := t.saveLocked(); err != nil {
			_ = t.e.Notify(wire.LevelError, err.Error())
		}
	}
	t.renderLocked()
}

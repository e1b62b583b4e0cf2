package sep

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RenderLines turns a SEP render block (set_widget's widget) into the
// plain lines zot's widgets show: the block's text when it has one, else
// a rendering of its kind (markdown, keyvalue, table, diff, progress,
// stack, widget).
func RenderLines(raw json.RawMessage) []string {
	var b struct {
		Kind     string            `json:"kind"`
		Text     string            `json:"text"`
		Title    string            `json:"title"`
		Label    string            `json:"label"`
		Value    json.RawMessage   `json:"value"`
		Rows     json.RawMessage   `json:"rows"`
		Columns  []string          `json:"columns"`
		Patch    string            `json:"patch"`
		Children []json.RawMessage `json:"children"`
		Body     json.RawMessage   `json:"body"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return nil
	}
	if b.Text != "" {
		return strings.Split(b.Text, "\n")
	}
	var out []string
	switch b.Kind {
	case "diff":
		return strings.Split(strings.TrimRight(b.Patch, "\n"), "\n")
	case "progress":
		var v float64
		_ = json.Unmarshal(b.Value, &v)
		return []string{strings.TrimSpace(fmt.Sprintf("%s %.0f%%", b.Label, v*100))}
	case "keyvalue":
		if b.Title != "" {
			out = append(out, b.Title)
		}
		var rows []struct{ Key, Value string }
		_ = json.Unmarshal(b.Rows, &rows)
		for _, r := range rows {
			out = append(out, r.Key+": "+r.Value)
		}
	case "table":
		if len(b.Columns) > 0 {
			out = append(out, strings.Join(b.Columns, " | "))
		}
		var rows [][]string
		_ = json.Unmarshal(b.Rows, &rows)
		for _, r := range rows {
			out = append(out, strings.Join(r, " | "))
		}
	case "stack":
		for _, c := range b.Children {
			out = append(out, RenderLines(c)...)
		}
	case "widget":
		return RenderLines(b.Body)
	}
	return out
}

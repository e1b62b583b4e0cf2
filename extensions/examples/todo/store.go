package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Item is one todo.
type Item struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
	Done bool   `json:"done"`
}

// list is what todos.json holds.
type list struct {
	NextID int    `json:"next_id"`
	Items  []Item `json:"items"`
}

// load reads path; a missing file is an empty list.
func load(path string) (list, error) {
	l := list{NextID: 1}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return list{NextID: 1}, fmt.Errorf("%s: %w", path, err)
	}
	for _, it := range l.Items {
		l.NextID = max(l.NextID, it.ID+1)
	}
	return l, nil
}

// save writes l to path atomically: a temp file in the same directory,
// synced, then renamed over the old one, so a crash leaves either the
// old list or the new one, never half of one.
func save(path string, l list) error {
	if l.Items == nil {
		l.Items = []Item{}
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".todos-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

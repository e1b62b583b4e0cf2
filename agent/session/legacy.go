package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Our earlier layout: sessions/--<cwd with separators as dashes>--/
// <time>_<id>.jsonl, one {"kind": …} object a line. Still listed and read;
// resuming one migrates it to zot's format (Migrate).

// LegacyDir is a workspace's session directory in our earlier layout.
func LegacyDir(home, cwd string) string {
	slug := strings.Trim(strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(absClean(cwd)), "-")
	if slug == "" {
		slug = "root"
	}
	return filepath.Join(home, "sessions", "--"+slug+"--")
}

// MigratedSuffix is appended to a legacy file's name once it has been
// migrated: kept as a backup, no longer listed.
const MigratedSuffix = ".migrated"

func isLegacyLine(line []byte) bool {
	var h struct {
		Kind string `json:"kind"`
		Type string `json:"type"`
	}
	return json.Unmarshal(line, &h) == nil && h.Kind != "" && h.Type == ""
}

func (l *Loaded) applyLegacy(e Entry) {
	switch e.Kind {
	case KindHeader:
		if e.ID != "" {
			l.Info.ID = e.ID
		}
		l.Info.Cwd, l.Info.Created, l.Provider, l.Model = e.Cwd, e.Created, e.Provider, e.Model
	case KindMessage:
		if e.Message != nil {
			l.addMessage(*e.Message, false)
		}
	case KindUsage:
		if e.Usage != nil {
			l.Usage = l.Usage.Add(*e.Usage)
		}
	case KindCompact:
		l.Messages = nil
		for _, m := range e.Messages {
			l.addMessage(m, false)
		}
	}
}

// ListWorkspace lists a workspace's sessions in both layouts, newest
// first. A session migrated but whose backup is still listed (a crash
// between the two renames) appears once, in zot's layout.
func ListWorkspace(home, cwd string) ([]Info, error) {
	infos, err := List(Dir(home, cwd))
	if err != nil {
		return nil, err
	}
	old, err := List(LegacyDir(home, cwd))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, in := range infos {
		seen[in.ID] = true
	}
	for _, in := range old {
		if !seen[in.ID] {
			infos = append(infos, in)
		}
	}
	sortNewestFirst(infos)
	return infos, nil
}

// FindWorkspace resolves "latest" or an id (or a unique id prefix) among
// a workspace's sessions in both layouts.
func FindWorkspace(home, cwd, which string) (string, error) {
	infos, err := ListWorkspace(home, cwd)
	if err != nil {
		return "", err
	}
	return pick(infos, which, Dir(home, cwd))
}

// Migrate rewrites a session loaded from a legacy file in zot's format, as
// a new file in dir with the same id, start time and transcript, and
// returns a writer appending to it. The legacy file is renamed with
// MigratedSuffix, kept as a backup (it also holds what compactions
// dropped). ErrLocked (wrapped) when another process writes the legacy
// file. meta supplies what the legacy header lacks (the version).
func Migrate(l *Loaded, dir string, meta Meta) (*Writer, error) {
	if !l.Legacy {
		return nil, errors.New("session: only a legacy session is migrated")
	}
	old, err := os.OpenFile(l.Info.Path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer old.Close()
	if err := lockFile(old); err != nil {
		return nil, fmt.Errorf("session %s: %w", l.Info.ID, err)
	}
	meta.ID, meta.Cwd, meta.Started = l.Info.ID, l.Info.Cwd, l.Info.Created
	if l.Provider != "" {
		meta.Provider = l.Provider
	}
	if l.Model != "" {
		meta.Model = l.Model
	}
	if l.titled {
		meta.Title = l.Info.Title
	}
	w, err := CreateMeta(dir, meta)
	if err != nil {
		return nil, err
	}
	if err := w.AppendTranscript(l.Messages, l.Usage); err != nil {
		w.Close()
		os.Remove(w.Path())
		return nil, err
	}
	// Should the rename fail, both files stay readable and ListWorkspace
	// shows the session once (the migrated copy).
	os.Rename(l.Info.Path, l.Info.Path+MigratedSuffix)
	return w, nil
}

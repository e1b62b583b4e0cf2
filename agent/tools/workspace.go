package tools

import "context"

// Workspace decides where reads come from and where writes go. Paths are
// absolute and cleaned. Implementations must be safe for concurrent use.
type Workspace interface {
	// Root is the directory relative paths resolve against.
	Root() string
	// ReadFile returns the current text of path: for the LSP server, the
	// editor's unsaved buffer when the document is open.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces (or creates) path with data.
	WriteFile(ctx context.Context, path string, data []byte) error
	// EditFile replaces path's content, which the tool read as oldData,
	// with newData. An editor-backed workspace turns this into a minimal
	// edit on the buffer, and refuses it with an error the model can act on
	// if the buffer moved on since oldData was read.
	EditFile(ctx context.Context, path string, oldData, newData []byte) error
	// Sync makes the disk agree with what the workspace shows before a
	// process (bash) reads files from disk.
	Sync(ctx context.Context) error
}

// OverlayLister is implemented by a Workspace whose ReadFile differs from
// the disk only for a known set of files (an editor's open buffers). The
// search tools read every other file straight from disk into reused
// buffers, and only these through ReadFile. A Workspace without it has
// every file read through ReadFile.
type OverlayLister interface {
	// OverlaidPaths returns the absolute, cleaned paths whose ReadFile text
	// may differ from the disk's.
	OverlaidPaths() []string
}

// ReadNoter is implemented by a Workspace that judges a later write or
// edit of a file against what the agent last read of it (an editor's
// buffers, where the user keeps typing while the agent works). The read
// tool tells it what the agent was shown.
type ReadNoter interface {
	// NoteRead records that the agent was shown path as data (the text
	// ReadFile returned, whole, even when only some lines were shown).
	NoteRead(path string, data []byte)
}

// SyncNotice is the error Sync returns when the command can run but the
// disk does not hold everything read shows (the agent's edits to a file
// whose unsaved user changes overlap them). Text tells the model which
// files and why; bash runs the command and adds it to the result.
type SyncNotice struct{ Text string }

func (n *SyncNotice) Error() string { return n.Text }

package tools

// .gitignore matching, written here rather than imported. go-git's
// plumbing/format/gitignore is the well-kept option, but it lives in the
// go-git/v5 module, whose go.mod brings a few dozen requirements (ssh,
// crypto, billy, gcfg, …) into ours for one small package. The small
// stand-alone modules (sabhiram/go-gitignore, denormal/go-gitignore,
// monochromegane/go-gitignore) have been unmaintained for years and mostly
// match a single file, leaving nested .gitignore precedence to the caller.
// The rules of gitignore(5) that matter here are few, so they are
// implemented and table-tested in this package:
//
//   - blank lines and lines starting with # are skipped; \# and \! escape;
//     trailing spaces are dropped unless escaped with a backslash;
//   - a leading ! re-includes what an earlier pattern excluded;
//   - a trailing / matches directories only;
//   - a pattern with a / at its start or middle is anchored to the
//     directory holding the .gitignore; one without matches a name at any
//     depth below it;
//   - `**/x` matches x at any depth, `x/**` everything inside x, `a/**/b`
//     zero or more directories between a and b;
//   - the last matching line of a file wins, and a deeper .gitignore wins
//     over a shallower one; .git/info/exclude ranks below the root file;
//   - nothing inside an excluded directory can be re-included (the walker
//     never enters it), as in git.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zot-editors/zot/internal/ctxwait"
)

type ignoreRule struct {
	negate  bool
	dirOnly bool
	// baseSeg is set for a slash-less pattern without **: it matches the
	// last path element only (the fast, common case such as "*.log").
	baseSeg string
	g       glob
}

// ignoreFile holds the rules of one .gitignore; dir is its directory
// relative to the walk base ("" for the base itself), slash-separated.
type ignoreFile struct {
	dir   string
	rules []ignoreRule
}

// parseGitignore parses the text of a .gitignore found in dir.
func parseGitignore(dir string, data []byte) *ignoreFile {
	f := &ignoreFile{dir: dir}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		// Trailing spaces go unless the last one is escaped.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		var r ignoreRule
		if line[0] == '!' {
			r.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		if !anchored && !strings.Contains(line, "**") {
			seg := strings.ReplaceAll(line, "[!", "[^")
			if _, err := path.Match(seg, ""); err != nil {
				continue // git ignores malformed patterns too
			}
			r.baseSeg = seg
		} else {
			if !anchored {
				line = "**/" + line
			}
			g, err := compileGlob(line)
			if err != nil || len(g.segs) == 0 {
				continue
			}
			r.g = g
		}
		f.rules = append(f.rules, r)
	}
	return f
}

// match reports whether a rule of f decides about rel (relative to the
// walk base), and if so whether it ignores it.
func (f *ignoreFile) match(rel string, isDir bool) (decided, ignored bool) {
	if f.dir != "" {
		if !strings.HasPrefix(rel, f.dir+"/") {
			return false, false
		}
		rel = rel[len(f.dir)+1:]
	}
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	var segs []string
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := &f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.baseSeg != "" {
			ok = matchSeg(r.baseSeg, base)
		} else {
			if segs == nil {
				segs = strings.Split(rel, "/")
			}
			ok = matchSegs(r.g.segs, segs)
		}
		if ok {
			return true, !r.negate
		}
	}
	return false, false
}

// ignoreStack is the .gitignore files that apply to a directory, outermost
// first. It is never modified in place, so sub-walks can share it.
type ignoreStack []*ignoreFile

func (s ignoreStack) push(f *ignoreFile) ignoreStack {
	if f == nil || len(f.rules) == 0 {
		return s
	}
	out := make(ignoreStack, len(s), len(s)+1)
	copy(out, s)
	return append(out, f)
}

// ignored reports whether rel (relative to the walk base) is ignored.
func (s ignoreStack) ignored(rel string, isDir bool) bool {
	for i := len(s) - 1; i >= 0; i-- {
		if decided, ign := s[i].match(rel, isDir); decided {
			return ign
		}
	}
	return false
}

// ignoreBase is the directory .gitignore paths are taken relative to for
// a walk starting at dir: the workspace root when dir lies inside it,
// else dir itself.
func ignoreBase(ws Workspace, dir string) string {
	root := ws.Root()
	if dir == root || strings.HasPrefix(dir, root+string(filepath.Separator)) {
		return root
	}
	return dir
}

// loadIgnoreStack collects the ignore files that apply inside dir:
// .git/info/exclude and every .gitignore from base down to dir itself.
// Files are read through the workspace so unsaved edits count.
func loadIgnoreStack(ctx context.Context, ws Workspace, base, dir string) ignoreStack {
	var st ignoreStack
	if data, err := ws.ReadFile(ctx, filepath.Join(base, ".git", "info", "exclude")); err == nil {
		st = st.push(parseGitignore("", data))
	}
	rel, err := filepath.Rel(base, dir)
	if err != nil {
		return st
	}
	cur := ""
	st = st.push(readGitignore(ctx, ws, base, cur))
	if rel == "." {
		return st
	}
	for part := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if cur == "" {
			cur = part
		} else {
			cur += "/" + part
		}
		st = st.push(readGitignore(ctx, ws, base, cur))
	}
	return st
}

func readGitignore(ctx context.Context, ws Workspace, base, rel string) *ignoreFile {
	data, err := ws.ReadFile(ctx, filepath.Join(base, filepath.FromSlash(rel), ".gitignore"))
	if err != nil {
		return nil
	}
	return parseGitignore(rel, data)
}

// walkEntry is one file or directory a walk visits.
type walkEntry struct {
	abs    string
	rel    string // relative to the walk base, slash-separated
	sub    string // relative to the walk's start, slash-separated
	shown  string // as tools show it: relative to the workspace root if inside it
	isDir  bool   // a directory, or a symlink to one (not entered)
	isLink bool
	d      fs.DirEntry
}

// searchable reports whether the entry may hold text to search: a regular
// file or a symlink (a device or FIFO could block a read).
func (e walkEntry) searchable() bool {
	t := e.d.Type()
	return t.IsRegular() || t&fs.ModeSymlink != 0
}

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// walkTree visits every entry below start (not start itself) in lexical
// order, skipping .git and whatever the .gitignore files exclude; ignored
// directories are not entered, nor are symlinked ones. fn may return
// fs.SkipDir for a directory or errStopWalk to end the walk. Paths are
// listed from disk; contents are for the caller to read through ws. fn is
// called from one goroutine, in order. With listAhead, directories are
// listed ahead of it on the other cores (see readAhead): for a walk that
// does little else (find; grep's cores are busy reading files, and the
// extra lister made it slower).
func walkTree(ctx context.Context, ws Workspace, start string, listAhead bool, fn func(walkEntry) error) error {
	base := ignoreBase(ws, start)
	st := loadIgnoreStack(ctx, ws, base, start)
	relStart, _ := filepath.Rel(base, start)
	relStart = filepath.ToSlash(relStart)
	if relStart == "." {
		relStart = ""
	}
	w := &walker{ctx: ctx, ws: ws, base: base, fn: fn, subFrom: 0, shownIsRel: base == ws.Root(), list: listDir}
	if relStart != "" {
		w.subFrom = len(relStart) + 1
	}
	if n := runtime.GOMAXPROCS(0) - 1; listAhead && n > 0 {
		w.ahead = startReadAhead(n, w.list)
		defer w.ahead.stop(ctx)
	}
	err := w.dir(start, relStart, st, true, nil)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

// walker is one walk's fixed state.
type walker struct {
	ctx        context.Context
	ws         Workspace
	base       string
	fn         func(walkEntry) error
	subFrom    int  // rel[subFrom:] is the path relative to the start
	shownIsRel bool // base is the workspace root, so rel is what tools show
	ahead      *readAhead
	list       func(string) ([]os.DirEntry, error) // listDir, read once
}

// dir visits dir's entries; l, if not nil, is its listing read ahead.
func (w *walker) dir(dir, rel string, st ignoreStack, top bool, l *listing) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	var entries []os.DirEntry
	var err error
	if l != nil {
		entries, err = l.get()
	} else {
		entries, err = w.list(dir)
	}
	if err != nil {
		if top {
			return err
		}
		return nil // unreadable subdirectory: skip it quietly
	}
	if !top {
		for _, e := range entries {
			if e.Name() == ".gitignore" && !e.IsDir() {
				st = st.push(readGitignore(w.ctx, w.ws, w.base, rel))
				break
			}
		}
	}
	prefix := dir + string(filepath.Separator)
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		prefix = dir
	}
	// The entries to visit first, so that the directories among them are
	// being listed while fn sees the ones before.
	visit := make([]walkEntry, 0, len(entries))
	var listings []*listing
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		we := walkEntry{abs: prefix + name, isDir: e.IsDir(), d: e}
		if rel == "" {
			we.rel = name
		} else {
			we.rel = rel + "/" + name
		}
		if e.Type()&fs.ModeSymlink != 0 {
			we.isLink = true
			if fi, err := os.Stat(we.abs); err == nil && fi.IsDir() {
				we.isDir = true
			}
		}
		if st.ignored(we.rel, we.isDir) {
			continue
		}
		we.sub = we.rel[w.subFrom:]
		if w.shownIsRel {
			we.shown = we.rel
		} else {
			we.shown = displayPath(w.ws.Root(), we.abs)
		}
		if we.isDir && !we.isLink && w.ahead != nil {
			if listings == nil {
				listings = make([]*listing, len(entries))
			}
			listings[len(visit)] = w.ahead.list(we.abs)
		}
		visit = append(visit, we)
	}
	for i, we := range visit {
		err := w.fn(we)
		if err == fs.SkipDir {
			continue
		}
		if err != nil {
			return err
		}
		if we.isDir && !we.isLink {
			var l *listing
			if listings != nil {
				l = listings[i]
			}
			if err := w.dir(we.abs, we.rel, st, false, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// readAhead lists directories on other goroutines ahead of a walk, which
// on its own spends most of its time in getdents: a walk's directories are
// queued as it meets them, in the order it will enter them, and a listing
// no worker has begun when the walk gets to it is read by the walk itself
// (it never waits behind the queue). A full queue drops the request.
type readAhead struct {
	queue   chan *listing
	read    func(string) ([]os.DirEntry, error)
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// listing is one directory's entries, read by whoever claims it first.
type listing struct {
	dir     string
	read    func(string) ([]os.DirEntry, error)
	claimed atomic.Bool
	done    chan struct{}
	entries []os.DirEntry
	err     error
}

// listersRunning counts the listers that have not finished, of every
// walk: after a walk returns (not cancelled), none of its are left. Tests
// read it; the goroutine count cannot tell a lister that has finished
// from one that has not yet exited.
var listersRunning atomic.Int64

func startReadAhead(workers int, read func(string) ([]os.DirEntry, error)) *readAhead {
	r := &readAhead{queue: make(chan *listing, 1024), read: read}
	for range workers {
		r.wg.Add(1)
		listersRunning.Add(1)
		go func() {
			defer r.wg.Done()
			defer listersRunning.Add(-1)
			for l := range r.queue {
				if !r.stopped.Load() {
					l.claim()
				}
			}
		}()
	}
	return r
}

// list queues dir's listing.
func (r *readAhead) list(dir string) *listing {
	l := &listing{dir: dir, read: r.read, done: make(chan struct{})}
	select {
	case r.queue <- l:
	default:
	}
	return l
}

// stop ends the listers once they have dropped what the walk left queued
// (a walk that stopped early) and returns when they are gone — or when ctx
// is: a lister stuck in a directory the walk never needed (a hung network
// mount) must not keep a cancelled tool call from returning; it exits once
// its read does.
func (r *readAhead) stop(ctx context.Context) {
	r.stopped.Store(true)
	close(r.queue)
	ctxwait.Wait(ctx, r.wg.Wait) //nolint:errcheck // a cancelled walk reports ctx itself
}

// listDir lists a directory for a walk (a variable for tests).
var listDir = os.ReadDir

// claim reads the listing unless someone else has begun to.
func (l *listing) claim() {
	if l.claimed.CompareAndSwap(false, true) {
		l.entries, l.err = l.read(l.dir)
		close(l.done)
	}
}

// get returns the listing, reading it now if no worker has begun.
func (l *listing) get() ([]os.DirEntry, error) {
	l.claim()
	<-l.done
	return l.entries, l.err
}

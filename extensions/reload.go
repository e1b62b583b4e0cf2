package extensions

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watcher turns file changes into reloads. It watches the two extension
// roots (and their parents and the workspace, so a root created later is
// noticed), every
// directory inside them, every --ext directory and the directory of each
// code file. Only changes to a manifest or a code file (the exec, script
// args) count; an extension writing its own state files does not reload
// it. Events are debounced; the reconciliation that follows reloads only
// the extensions whose fingerprint changed.
type watcher struct {
	h    *Host
	fw   *fsnotify.Watcher
	done chan struct{}

	mu      sync.Mutex
	watched map[string]bool
	timer   *time.Timer
	closed  bool
}

func newWatcher(h *Host) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{h: h, fw: fw, done: make(chan struct{}), watched: map[string]bool{}}
	go w.loop()
	return w, nil
}

func (w *watcher) close() {
	w.mu.Lock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	w.fw.Close()
	<-w.done
}

// roots are the directories whose children are extensions.
func (w *watcher) roots() []string {
	var r []string
	if w.h.o.Cwd != "" {
		r = append(r, ProjectRoot(w.h.o.Cwd), SEPProjectRoot(w.h.o.Cwd))
	}
	if w.h.o.Home != "" {
		r = append(r, GlobalRoot(w.h.o.Home))
	}
	if g := SEPGlobalRoot(); g != "" {
		r = append(r, g)
	}
	if w.h.o.Cwd != "" {
		r = append(r, PiProjectRoot(w.h.o.Cwd))
	}
	if g := PiGlobalRoot(); g != "" {
		r = append(r, g)
	}
	return r
}

// sync brings the watch list up to date with the candidates a discovery
// just found (a change made meanwhile is caught by the watch on the root).
func (w *watcher) sync(cands []Candidate) {
	want := map[string]bool{}
	if w.h.o.Cwd != "" {
		want[w.h.o.Cwd] = true // so a new .zot/ is noticed
	}
	for _, root := range w.roots() {
		want[filepath.Dir(root)] = true
		want[root] = true
		if entries, err := os.ReadDir(root); err == nil {
			for _, e := range entries {
				want[filepath.Join(root, e.Name())] = true
			}
		}
	}
	for _, c := range cands {
		want[c.Dir] = true
		if c.Err == nil {
			for _, f := range c.Manifest.codeFiles(c.Dir) {
				want[filepath.Dir(f)] = true
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	for d := range w.watched {
		if !want[d] {
			w.fw.Remove(d)
			delete(w.watched, d)
		}
	}
	for d := range want {
		if w.watched[d] {
			continue
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		if err := w.fw.Add(d); err == nil {
			w.watched[d] = true
		}
	}
}

func (w *watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if w.relevant(ev.Name) {
				w.schedule()
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.h.logf("extensions: watcher: %v", err)
			w.schedule() // events may have been lost: reconcile
		}
	}
}

// relevant reports whether a change at path can change what runs: a
// manifest, a code file, an extension directory or a root appearing or
// vanishing. Anything else (an extension's own data files) is ignored.
func (w *watcher) relevant(path string) bool {
	path = filepath.Clean(path)
	if IsManifestName(filepath.Base(path)) {
		return true
	}
	for _, root := range w.roots() {
		if path == root || filepath.Dir(path) == root || path == filepath.Dir(root) {
			return true
		}
	}
	// zot's own state beside the global root ($ZOT_HOME/guards.json,
	// written as each guard registers): never an extension's code, and
	// with 20 pi extensions asking each of them cost ~30 ms of CPU per
	// start (every module's imports parsed for every write).
	if home := w.h.o.Home; home != "" && filepath.Dir(path) == filepath.Clean(home) && !w.isExtPath(path) {
		return false
	}
	w.h.mu.Lock()
	slots := slices.Clone(w.h.slots)
	w.h.mu.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		c := s.cand
		s.mu.Unlock()
		if path == c.Dir {
			return true
		}
		if c.Err == nil && c.Manifest.Pi != nil && piImportable(path) {
			// A pi module's imports may lie anywhere (../lib/x.ts).
			if slices.Contains(c.Manifest.Pi.Entries, path) || slices.Contains(c.Manifest.codeFiles(c.Dir), path) {
				return true
			}
		}
		if c.Err == nil && within(c.Dir, path) {
			if slices.Contains(c.Manifest.codeFiles(c.Dir), path) {
				return true
			}
			// A removed or renamed code file no longer stats as a code
			// file; compare against the declared names instead.
			if p, err := c.Manifest.ExecPath(c.Dir); err == nil && filepath.Clean(p) == path {
				return true
			}
			for _, a := range c.Manifest.Args {
				if a != "" && filepath.Join(c.Dir, a) == path {
					return true
				}
			}
		}
	}
	return w.isExtPath(path)
}

// isExtPath reports whether path is one the user named (--ext, the
// editor's extension setting).
func (w *watcher) isExtPath(path string) bool {
	for _, p := range append(slices.Clone(w.h.o.ExtPaths), w.h.o.EditorExtPaths...) {
		if abs, err := filepath.Abs(p); err == nil && abs == path {
			return true
		}
	}
	return false
}

// schedule (re)starts the debounce timer.
func (w *watcher) schedule() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = time.AfterFunc(w.h.o.Debounce, func() {
		w.h.goBG(func() { w.h.rediscover(w.h.ctx, false, true) })
	})
}

package extensions

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/extensions/wire"
)

// panelKeys are the key names panel_key may carry.
var panelKeys = []string{
	wire.KeyUp, wire.KeyDown, wire.KeyLeft, wire.KeyRight, wire.KeyEnter, wire.KeyEsc, wire.KeyTab,
	wire.KeyPageUp, wire.KeyPageDown, wire.KeyHome, wire.KeyEnd, wire.KeyBackspace, wire.KeyDelete, wire.KeyRune,
	wire.KeyCtrlC,
}

// panelOpened records that p owns a panel and shows it. Panel ids are the
// extension's; if another extension already owns the id, that panel is
// closed first (the newest owner wins).
func (h *Host) panelOpened(p *proc, v wire.PanelView) {
	if v.Lines == nil {
		v.Lines = []string{}
	}
	h.panelMu.Lock()
	prev := h.panels[v.ID]
	h.panels[v.ID] = p
	h.panelMu.Unlock()
	if prev != nil && prev != p {
		prev.mu.Lock()
		delete(prev.panels, v.ID)
		prev.mu.Unlock()
		prev.send(wire.Frame{Type: wire.TypePanelClose, PanelID: v.ID}, false)
		prev.ui.closePanel(v.ID)
	}
	p.mu.Lock()
	p.panels[v.ID] = true
	p.mu.Unlock()
	p.ui.open(v)
}

// panelRender forwards a panel_render for a panel the extension owns.
func (h *Host) panelRender(p *proc, f wire.Frame) {
	h.panelMu.Lock()
	owner := h.panels[f.PanelID]
	h.panelMu.Unlock()
	if owner != p {
		p.logBad("skipped panel_render for panel %q it has not opened", f.PanelID)
		return
	}
	if f.Lines == nil {
		f.Lines = []string{}
	}
	p.ui.render(f)
}

// panelClosedByExt handles the extension's panel_close.
func (h *Host) panelClosedByExt(p *proc, id string) {
	h.panelMu.Lock()
	if h.panels[id] != p {
		h.panelMu.Unlock()
		p.logBad("skipped panel_close for panel %q it has not opened", id)
		return
	}
	delete(h.panels, id)
	h.panelMu.Unlock()
	p.mu.Lock()
	delete(p.panels, id)
	p.mu.Unlock()
	p.ui.closePanel(id)
}

// closePanelsOf closes every panel of a dead process.
func (h *Host) closePanelsOf(p *proc) {
	h.panelMu.Lock()
	var ids []string
	for id, owner := range h.panels {
		if owner == p {
			ids = append(ids, id)
			delete(h.panels, id)
		}
	}
	h.panelMu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		p.ui.closePanel(id)
	}
}

// PanelKey forwards a key to the extension owning the panel. key is one of
// zot's key names; for "rune", text is the character typed. esc and
// ctrl+c close the panel instead, as in zot's terminal UI: the extension
// gets panel_close and the UI closes the panel (zot/panel/close).
func (h *Host) PanelKey(panelID, key, text string) error {
	if !slices.Contains(panelKeys, key) {
		return fmt.Errorf("unknown panel key %q", key)
	}
	h.panelMu.Lock()
	p := h.panels[panelID]
	if p != nil && (key == wire.KeyEsc || key == wire.KeyCtrlC) {
		delete(h.panels, panelID)
	}
	h.panelMu.Unlock()
	if p == nil {
		return fmt.Errorf("no open panel %q", panelID)
	}
	if key == wire.KeyEsc || key == wire.KeyCtrlC {
		p.mu.Lock()
		delete(p.panels, panelID)
		p.mu.Unlock()
		p.send(wire.Frame{Type: wire.TypePanelClose, PanelID: panelID}, false)
		p.ui.closePanel(panelID)
		return nil
	}
	f := wire.Frame{Type: wire.TypePanelKey, PanelID: panelID, Key: key}
	if key == wire.KeyRune {
		if text == "" {
			return fmt.Errorf("key rune needs its text")
		}
		f.Text = text
	}
	p.send(f, false)
	return nil
}

// PanelClosed tells the owning extension the user closed the panel.
func (h *Host) PanelClosed(panelID string) error {
	h.panelMu.Lock()
	p := h.panels[panelID]
	delete(h.panels, panelID)
	h.panelMu.Unlock()
	if p == nil {
		return fmt.Errorf("no open panel %q", panelID)
	}
	p.mu.Lock()
	delete(p.panels, panelID)
	p.mu.Unlock()
	p.send(wire.Frame{Type: wire.TypePanelClose, PanelID: panelID}, false)
	return nil
}

// uiQueue delivers one extension's notifications and panel frames to the
// UI on its own goroutine, in order, so neither a slow UI nor a flooding
// extension stalls the reader or anyone else. Notifications are rate
// limited (burst 50, then 20/s; excess dropped and logged); consecutive
// renders of one panel coalesce to the newest.
type uiQueue struct {
	h      *Host
	p      *proc
	mu     sync.Mutex
	items  []uiItem
	closed bool
	signal chan struct{}

	tokens  float64
	last    time.Time
	dropped int64

	lastView time.Time
	shown    map[string]bool // status/widget keys currently shown ("s:"/"w:" + key)
}

type uiItem struct {
	kind  int
	level string
	msg   string
	view  wire.PanelView
	frame wire.Frame
	id    string
	// admitted, when set, runs once a notify passed the flood limit,
	// before it is queued (the log gets a cut text whole before the
	// front shows the cut one).
	admitted func()
}

const (
	uiNotify = iota
	uiOpen
	uiRender
	uiClose
	uiStatus // id: key, msg: text ("" clears)
	uiWidget // id: key, view.Lines (nil clears)
)

// viewInterval bounds how often one extension's status and widget
// updates reach the front: a flood coalesces per key, last value wins.
const viewInterval = 50 * time.Millisecond

const (
	notifyBurst = 50
	notifyRate  = 20 // per second
	uiQueueMax  = 1024
)

func newUIQueue(h *Host, p *proc) *uiQueue {
	return &uiQueue{h: h, p: p, signal: make(chan struct{}, 1), tokens: notifyBurst, last: time.Now()}
}

// push queues it unless the queue is closed or it is a notify over the
// flood limit.
func (q *uiQueue) push(it uiItem) {
	q.mu.Lock()
	if q.closed && it.kind != uiClose {
		q.mu.Unlock()
		return
	}
	switch it.kind {
	case uiNotify:
		now := time.Now()
		q.tokens = min(notifyBurst, q.tokens+now.Sub(q.last).Seconds()*notifyRate)
		q.last = now
		if q.tokens < 1 || len(q.items) >= uiQueueMax {
			q.dropped++
			n := q.dropped
			q.mu.Unlock()
			if n <= 5 || n%1000 == 0 {
				q.p.log.printf("notify flood: dropped a notification (%d dropped so far)", n)
			}
			return
		}
		q.tokens--
		if it.admitted != nil {
			q.mu.Unlock()
			it.admitted()
			it.admitted = nil
			q.mu.Lock()
			if q.closed {
				q.mu.Unlock()
				return
			}
		}
	case uiStatus, uiWidget:
		// Last value wins: replace a queued update of the same key.
		for i := len(q.items) - 1; i >= 0; i-- {
			if q.items[i].kind == it.kind && q.items[i].id == it.id {
				q.items[i] = it
				q.mu.Unlock()
				return
			}
		}
	case uiRender:
		// Coalesce with a queued render of the same panel (nothing of
		// that panel behind it, so order is kept).
		for i := len(q.items) - 1; i >= 0; i-- {
			x := q.items[i]
			if x.kind == uiNotify {
				continue
			}
			if x.kind == uiRender && x.frame.PanelID == it.frame.PanelID {
				q.items[i] = it
				q.mu.Unlock()
				return
			}
			if x.frame.PanelID == it.frame.PanelID || x.view.ID == it.frame.PanelID || x.id == it.frame.PanelID {
				break
			}
		}
	}
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *uiQueue) notify(level, msg string) {
	switch level {
	case wire.LevelInfo, wire.LevelSuccess, wire.LevelWarn, wire.LevelError:
	default:
		level = wire.LevelInfo
	}
	// Cut before it is queued: the queue holds only what the front gets.
	it := uiItem{kind: uiNotify, level: level, msg: msg}
	if shown, cut := clipText(msg, MaxNotifyBytes, q.p.name); cut {
		it.msg = shown
		it.admitted = func() { q.p.logWhole("notify", msg) }
	}
	q.push(it)
}

func (q *uiQueue) open(v wire.PanelView) { q.push(uiItem{kind: uiOpen, view: v}) }
func (q *uiQueue) render(f wire.Frame)   { q.push(uiItem{kind: uiRender, frame: f}) }
func (q *uiQueue) closePanel(id string)  { q.push(uiItem{kind: uiClose, id: id}) }

// close ends the queue once what is queued has been delivered; the
// status items and widgets the extension showed are cleared.
func (q *uiQueue) close() {
	q.mu.Lock()
	for i := 0; i < len(q.items); i++ { // pending updates are moot
		if k := q.items[i].kind; k == uiStatus || k == uiWidget {
			q.items = append(q.items[:i], q.items[i+1:]...)
			i--
		}
	}
	for k := range q.shown {
		if strings.HasPrefix(k, "s:") {
			q.items = append(q.items, uiItem{kind: uiStatus, id: k[2:]})
		} else {
			q.items = append(q.items, uiItem{kind: uiWidget, id: k[2:]})
		}
	}
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *uiQueue) run() {
	ui, ext := q.h.o.UI, q.p.name
	for range q.signal {
		for {
			q.mu.Lock()
			if len(q.items) == 0 {
				closed := q.closed
				q.mu.Unlock()
				if closed {
					return
				}
				break
			}
			it := q.items[0]
			if (it.kind == uiStatus || it.kind == uiWidget) && !q.closed {
				if wait := viewInterval - time.Since(q.lastView); wait > 0 {
					// Rate limit: newer values of this key replace it meanwhile.
					q.mu.Unlock()
					time.Sleep(wait)
					continue
				}
				q.lastView = time.Now()
			}
			q.items = q.items[1:]
			switch it.kind {
			case uiStatus, uiWidget:
				if q.shown == nil {
					q.shown = map[string]bool{}
				}
				k := "s:" + it.id
				if it.kind == uiWidget {
					k = "w:" + it.id
				}
				if it.msg == "" && it.view.Lines == nil {
					delete(q.shown, k)
				} else {
					q.shown[k] = true
				}
			}
			q.mu.Unlock()
			switch it.kind {
			case uiStatus:
				if a, ok := ui.(Asker); ok {
					a.SetStatus(ext, it.id, it.msg)
				}
			case uiWidget:
				if a, ok := ui.(Asker); ok {
					a.SetWidget(ext, it.id, it.view.Lines)
				}
			case uiNotify:
				ui.Notify(ext, it.level, it.msg)
			case uiOpen:
				ui.PanelOpen(ext, it.view)
			case uiRender:
				ui.PanelRender(ext, it.frame)
			case uiClose:
				ui.PanelClose(ext, it.id)
			}
		}
	}
}

package server

import (
	"context"
	"encoding/json"
)

// Panel key names (zot's, as panel_key sends them to extensions).
var panelKeys = map[string]bool{
	"up": true, "down": true, "left": true, "right": true, "enter": true, "esc": true, "tab": true,
	"pageup": true, "pagedown": true, "home": true, "end": true, "backspace": true, "delete": true, "rune": true,
}

func (s *Server) openPanel(p Panel) {
	if p.Lines == nil {
		p.Lines = []string{}
	}
	s.mu.Lock()
	s.panels[p.PanelID] = p.Extension
	s.mu.Unlock()
	s.notify("zot/panel/open", p)
}

func (s *Server) renderPanel(p Panel) {
	if p.Lines == nil {
		p.Lines = []string{}
	}
	s.mu.Lock()
	if ext, ok := s.panels[p.PanelID]; ok && p.Extension == "" {
		p.Extension = ext
	}
	s.mu.Unlock()
	s.notify("zot/panel/render", p)
}

// PanelCloseParams is zot/panel/close (s→c) and zot/panel/closed (c→s).
type PanelCloseParams struct {
	PanelID   string `json:"panelId"`
	Extension string `json:"extension,omitempty"`
}

func (s *Server) closePanel(extension, panelID string) {
	s.mu.Lock()
	if extension == "" {
		extension = s.panels[panelID]
	}
	delete(s.panels, panelID)
	s.mu.Unlock()
	s.notify("zot/panel/close", PanelCloseParams{PanelID: panelID, Extension: extension})
}

// PanelKeyParams is zot/panel/key.
type PanelKeyParams struct {
	PanelID string `json:"panelId"`
	Key     string `json:"key"`
	Text    string `json:"text,omitempty"`
}

// zotPanelKey forwards a key to the panel's extension. It is a
// notification: problems are logged (and answered when sent as a request).
func (s *Server) zotPanelKey(ctx context.Context, raw json.RawMessage) (any, error) {
	const method = "zot/panel/key"
	var p PanelKeyParams
	if err := decodeParams(method, raw, &p); err != nil {
		return nil, err
	}
	if p.PanelID == "" {
		return nil, fieldError(method, "panelId", "is required")
	}
	if !panelKeys[p.Key] {
		return nil, fieldError(method, "key", "must be one of up, down, left, right, enter, esc, tab, pageup, pagedown, home, end, backspace, delete, rune; not %q", p.Key)
	}
	if p.Key == "rune" && p.Text == "" {
		return nil, fieldError(method, "text", "is required with key \"rune\": the typed character")
	}
	host := s.currentHost()
	if host == nil {
		return nil, rpcError(CodeRequestFailed, "no extension host is running")
	}
	return nil, host.PanelKey(p.PanelID, p.Key, p.Text)
}

// zotPanelClosed tells the extension the user closed its panel.
func (s *Server) zotPanelClosed(ctx context.Context, raw json.RawMessage) (any, error) {
	const method = "zot/panel/closed"
	var p PanelCloseParams
	if err := decodeParams(method, raw, &p); err != nil {
		return nil, err
	}
	if p.PanelID == "" {
		return nil, fieldError(method, "panelId", "is required")
	}
	s.mu.Lock()
	delete(s.panels, p.PanelID)
	s.mu.Unlock()
	if host := s.currentHost(); host != nil {
		return nil, host.PanelClosed(p.PanelID)
	}
	return nil, nil
}

package server

import "context"

// Panel key names (zot's, as panel_key sends them to extensions).
var panelKeys = map[string]bool{
	"up": true, "down": true, "left": true, "right": true, "enter": true, "esc": true, "tab": true,
	"pageup": true, "pagedown": true, "home": true, "end": true, "backspace": true, "delete": true, "rune": true,
	"ctrl+c": true, // with esc: closes the panel (the extension gets panel_close)
}

func (s *Server) openPanel(p Panel) {
	if p.Lines == nil {
		p.Lines = []string{}
	}
	s.mu.Lock()
	s.panels[p.PanelID] = p.Extension
	s.mu.Unlock()
	notifyPanelOpen.send(s, p)
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
	notifyPanelRender.send(s, p)
}

func (s *Server) closePanel(extension, panelID string) {
	s.mu.Lock()
	if extension == "" {
		extension = s.panels[panelID]
	}
	delete(s.panels, panelID)
	s.mu.Unlock()
	notifyPanelClose.send(s, PanelCloseParams{PanelID: panelID, Extension: extension})
}

// zotPanelKey forwards a key to the panel's extension. It is a
// notification: problems are logged (and answered when sent as a request).
func (s *Server) zotPanelKey(ctx context.Context, p *PanelKeyParams) error {
	host := s.currentHost()
	if host == nil {
		return rpcError(CodeRequestFailed, "no extension host is running")
	}
	return host.PanelKey(p.PanelID, p.Key, p.Text)
}

func (p *PanelKeyParams) validate(method string) error {
	if p.PanelID == "" {
		return fieldError(method, "panelId", "is required")
	}
	if !panelKeys[p.Key] {
		return fieldError(method, "key", "must be one of up, down, left, right, enter, esc, tab, pageup, pagedown, home, end, backspace, delete, rune, ctrl+c; not %q", p.Key)
	}
	if p.Key == "rune" && p.Text == "" {
		return fieldError(method, "text", "is required with key \"rune\": the typed character")
	}
	return nil
}

// zotPanelClosed tells the extension the user closed its panel.
func (s *Server) zotPanelClosed(ctx context.Context, p *PanelCloseParams) error {
	s.mu.Lock()
	delete(s.panels, p.PanelID)
	s.mu.Unlock()
	if host := s.currentHost(); host != nil {
		return host.PanelClosed(p.PanelID)
	}
	return nil
}

func (p *PanelCloseParams) validate(method string) error {
	if p.PanelID == "" {
		return fieldError(method, "panelId", "is required")
	}
	return nil
}

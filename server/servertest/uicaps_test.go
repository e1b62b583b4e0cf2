package servertest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/server"
	"github.com/zot-editors/zot/server/servertest"
)

// hugeText is lspext's: n bytes, "<tag>-begin ", x's, " <tag>-end".
func hugeText(tag string, n int) string {
	head, tail := tag+"-begin ", " "+tag+"-end"
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// Texts an extension sends over the host's caps (issue 36) reach the
// editor cut, ending with the truncation mark — a 10 MB notify, a 100 KiB
// status, a widget of 200 lines of 2 KiB, a confirm with a 4 KiB title and
// a 100 KiB message — and are in the extension's log whole.
func TestExtensionUITextsAreCapped(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	dir := e.installExt(filepath.Join(e.home, "dev", "lspext"), "lspext")
	cfg := e.config("--ext", dir)
	cfg.ZotUI = true
	ed := servertest.Start(t, cfg)
	asked := make(chan map[string]any, 1)
	ed.UI = func(p map[string]any) map[string]any {
		asked <- p
		return map[string]any{"value": true}
	}
	ed.Initialize(nil)
	waitExt(ed, "lspext", "loaded")

	var r commandResult
	ed.MustCall("zot/command", map[string]any{"name": "huge"}, &r)
	if r.Display != "confirmed: true <nil>" {
		t.Fatalf("huge: %+v", r)
	}
	mark := "… (truncated; the whole text is in `zot ext logs lspext`)"
	cut := func(what, got, tag string, limit int) {
		t.Helper()
		if len(got) > limit || !strings.HasPrefix(got, tag+"-begin xxx") || !strings.HasSuffix(got, mark) {
			head := got
			if len(head) > 200 {
				head = head[:100] + "…" + head[len(head)-100:]
			}
			t.Fatalf("%s: %d bytes (cap %d): %q", what, len(got), limit, head)
		}
	}

	n := ed.WaitNote("zot/notify", func(p json.RawMessage) bool { return strings.Contains(string(p), "notify-begin") })
	if len(n.Params) > extensions.MaxNotifyBytes+200 {
		t.Fatalf("zot/notify params are %d bytes", len(n.Params))
	}
	var np server.NotifyParams
	json.Unmarshal(n.Params, &np)
	cut("notify", np.Message, "notify", extensions.MaxNotifyBytes)

	var status string
	ed.Wait("the status", func() bool {
		for _, m := range ed.Notes("zot/ui/status") {
			var p server.UIStatusParams
			json.Unmarshal(m.Params, &p)
			if p.Key == "big" && p.Text != nil {
				status = *p.Text
				return true
			}
		}
		return false
	})
	cut("status", status, "status", extensions.MaxLabelBytes)

	var widget []string
	ed.Wait("the widget", func() bool {
		for _, m := range ed.Notes("zot/ui/widget") {
			var p server.UIWidgetParams
			json.Unmarshal(m.Params, &p)
			if p.Key == "big" {
				widget = p.Lines
				return true
			}
		}
		return false
	})
	if len(widget) != extensions.MaxWidgetLines {
		t.Fatalf("widget: %d lines", len(widget))
	}
	for i, l := range widget[:len(widget)-1] {
		cut(fmt.Sprintf("widget line %d", i), l, fmt.Sprintf("line%d", i), extensions.MaxLabelBytes)
	}
	if last := widget[len(widget)-1]; last != "… (truncated: 137 more lines; the whole widget is in `zot ext logs lspext`)" {
		t.Fatalf("widget's last line: %q", last)
	}

	p := <-asked
	title, _ := p["title"].(string)
	message, _ := p["message"].(string)
	cut("dialog title", title, "title", extensions.MaxLabelBytes)
	cut("dialog message", message, "message", extensions.MaxDialogTextBytes)

	// The log was written before the front was given the cut text.
	log, err := os.ReadFile(filepath.Join(e.home, "logs", "ext-lspext.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(log), "\n")
	has := func(what, whole string) {
		t.Helper()
		for _, l := range lines {
			if l == whole {
				return
			}
		}
		t.Fatalf("the log lacks the whole %s (%d bytes)", what, len(whole))
	}
	has("notify", hugeText("notify", 10<<20))
	has("status", hugeText("status", 100<<10))
	has("widget's last line", hugeText("line199", 2<<10))
	has("dialog title", hugeText("title", 4<<10))
	has("dialog message", hugeText("message", 100<<10))
}

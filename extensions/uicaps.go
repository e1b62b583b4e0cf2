package extensions

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// What an extension's UI frames may carry to the front (docs/extensions.md,
// "What the user is shown"). A text over its cap reaches the editor cut,
// ending with a truncation mark, and whole in the extension's log: a 10 MB
// notify is not a 10 MB editor notification. Frames over wire.MaxActionBytes
// (set_status, set_widget, ui_request) are still refused as before.
const (
	// MaxNotifyBytes bounds a notify message: a toast or a chat note.
	MaxNotifyBytes = 16 << 10
	// MaxDialogTextBytes bounds a ui_request's message.
	MaxDialogTextBytes = 16 << 10
	// MaxLabelBytes bounds one-line texts: a status, a dialog's title and
	// placeholder, one widget line.
	MaxLabelBytes = 1 << 10
	// MaxWidgetLines bounds a widget (lines above the chat input).
	MaxWidgetLines = 64
	// wholeTextLogBudget bounds what one extension process writes whole
	// to its log for texts that were cut: a flood of large notifications
	// must not fill the disk.
	wholeTextLogBudget = 64 << 20
)

// truncatedMark ends a cut text; the extension's name says where the rest is.
func truncatedMark(ext string) string {
	return "… (truncated; the whole text is in `zot ext logs " + ext + "`)"
}

// clipText returns s when it fits in limit bytes, else its beginning (cut
// at a rune boundary) and the truncation mark, limit bytes at most in all.
func clipText(s string, limit int, ext string) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	mark := truncatedMark(ext)
	n := max(0, limit-len(mark)-1)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	sep := " "
	if strings.Contains(s[:n], "\n") {
		sep = "\n" // a text of several lines gets the mark on its own line
	}
	return s[:n] + sep + mark, true
}

// clipWidget caps a widget's lines: at most MaxWidgetLines, each at most
// MaxLabelBytes.
func clipWidget(lines []string, ext string) ([]string, bool) {
	cut := false
	if len(lines) > MaxWidgetLines {
		more := len(lines) - (MaxWidgetLines - 1)
		lines = append(lines[:MaxWidgetLines-1:MaxWidgetLines-1],
			fmt.Sprintf("… (truncated: %d more lines; the whole widget is in `zot ext logs %s`)", more, ext))
		cut = true
	}
	for i, l := range lines {
		if c, ok := clipText(l, MaxLabelBytes, ext); ok {
			if !cut {
				lines = append([]string(nil), lines...) // not the frame's own slice
			}
			lines[i], cut = c, true
		}
	}
	return lines, cut
}

// logWhole writes a text that reached the front cut to the extension's
// log, whole, within the process's budget.
func (p *proc) logWhole(what, text string) {
	if p.wholeLogged.Add(int64(len(text))) > wholeTextLogBudget {
		p.log.printf("%s of %d bytes was cut for the front; not logged whole (%d MiB of cut texts were logged already)",
			what, len(text), wholeTextLogBudget>>20)
		return
	}
	p.log.printf("%s of %d bytes was cut for the front; the whole text:\n%s", what, len(text), text)
}

package agent

import (
	"testing"

	"github.com/zot-editors/zot/agent/message"
)

// A model call reads the transcript without copying it: the view it gets
// stays as it was while messages are appended, because its capacity ends
// at its length (an append cannot write into it).
func TestTranscriptViewIsNotWrittenByAppends(t *testing.T) {
	r := &Runtime{messages: make([]message.Message, 0, 8)}
	r.appendMessage(message.Message{Role: message.RoleUser, Content: []message.Content{message.Text("one")}})
	view := r.transcript()
	r.appendMessage(message.Message{Role: message.RoleAssistant, Content: []message.Content{message.Text("two")}})
	view = append(view, message.Message{Role: message.RoleUser, Content: []message.Content{message.Text("a hook's")}})
	if got := r.transcript(); len(got) != 2 || message.TextOf(got[1].Content) != "two" {
		t.Fatalf("an append to a view wrote into the transcript: %+v", got)
	}
	if len(view) != 2 || message.TextOf(view[1].Content) != "a hook's" {
		t.Fatalf("view = %+v", view)
	}
}

package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// zot's teardown closes the chat channel: its listener, every socket and
// their goroutines (no chat can send a prompt to a zot that is ending).
func TestChatChannelClosedByTeardown(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	s := newTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.ctx = ctx
	go s.runs.loop(ctx)
	res, err := s.zotChatChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer dcancel()
	c, _, err := websocket.Dial(dctx, fmt.Sprintf("ws://127.0.0.1:%d%s?token=%s", res.Port, res.Path, res.Token), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	s.teardown()
	if _, _, err := c.Read(dctx); err == nil || dctx.Err() != nil {
		t.Fatalf("the socket after teardown: %v (%v)", err, dctx.Err())
	}
	c.CloseNow()
	dcancel()
	cancel()
	goleak.VerifyNone(t, ignore)
}

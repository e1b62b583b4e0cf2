package server

// The chat channel (issue 37): a WebSocket on loopback that a chat view
// can reach without its editor in between. In code-server a webview's
// message to the extension host crosses the webview's host frame, the
// workbench and code-server's WebSocket, and every answer crosses them
// back: 12 ms a round trip at the median on the project's machine, against
// 2 through `vscode.env.asExternalUri`'s proxy to a loopback socket
// (docs/decisions.md, "The chat's own channel"). So the chat sends its
// prompts here and reads the runs' events here; everything else stays on
// LSP, and the LSP client still gets every zot/event (the editor's status,
// reviews, approvals and buffers are driven by them as before).
//
// Opened only when the client asks (zot/chat/channel), bound to 127.0.0.1,
// and only for the bearer of the 256-bit token zot's answer carries.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
	"github.com/segmentio/encoding/json"
	"go.lsp.dev/jsonrpc2"
)

const (
	// chatChannelPath is the channel's URL path on its port: the root,
	// which every proxy keeps (code-server 4.100's asExternalUri keeps only
	// the port, 4.139's the path too).
	chatChannelPath = "/"
	// chatChannelQueue is how many messages wait for a slow reader before
	// zot closes its socket (the chat then falls back to LSP).
	chatChannelQueue = 1 << 16
	// chatChannelReadLimit bounds one message from the chat: a prompt
	// with its attachments.
	chatChannelReadLimit = 64 << 20
	// chatChannelBatch bounds how many waiting messages go in one frame.
	chatChannelBatch = 256
)

// chatChannelMethods are the requests the channel carries: the chat's hot
// path. The rest of the protocol is LSP's.
var chatChannelMethods = map[string]bool{MethodPrompt: true, MethodAbort: true}

// chatChannel is the listener and its connected chats.
type chatChannel struct {
	s     *Server
	token string
	ln    net.Listener
	srv   *http.Server

	mu     sync.Mutex
	subs   map[*chatSub]struct{}
	closed bool
	n      atomic.Int32 // len(subs), read without the lock on every event
	wg     sync.WaitGroup
}

// chatSub is one connected chat: its socket and what waits to be written.
type chatSub struct {
	c      *websocket.Conn
	out    chan []byte
	ctx    context.Context // ends when the chat is dropped
	cancel context.CancelFunc
	once   sync.Once
}

// close drops the chat at once (no closing handshake: the chat falls back
// to LSP whatever the reason, and zot never waits for it).
func (c *chatSub) close() {
	c.once.Do(func() {
		c.cancel()
		_ = c.c.CloseNow()
	})
}

// zotChatChannel opens the channel (once; later calls get the same).
func (s *Server) zotChatChannel(_ context.Context) (ChatChannelResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.chat.Load()
	if ch == nil {
		if s.ctx.Err() != nil {
			return ChatChannelResult{}, errors.New("zot lsp is shutting down")
		}
		var err error
		if ch, err = openChatChannel(s); err != nil {
			return ChatChannelResult{}, err
		}
		s.chat.Store(ch)
	}
	return ChatChannelResult{Port: ch.ln.Addr().(*net.TCPAddr).Port, Path: chatChannelPath, Token: ch.token}, nil
}

func openChatChannel(s *Server) (*chatChannel, error) {
	var tok [32]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.New("the chat channel cannot listen on 127.0.0.1: " + err.Error())
	}
	ch := &chatChannel{s: s, token: hex.EncodeToString(tok[:]), ln: ln, subs: map[*chatSub]struct{}{}}
	ch.srv = &http.Server{Handler: ch, ErrorLog: s.log}
	ch.wg.Add(1)
	go func() {
		defer ch.wg.Done()
		_ = ch.srv.Serve(ln)
	}()
	return ch, nil
}

// ServeHTTP accepts a chat: the token first, then the Origin, then the
// WebSocket handshake.
func (ch *chatChannel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A proxy may join its prefix and the path with a double slash.
	if path.Clean("/"+r.URL.Path) != chatChannelPath {
		ch.refuse(w, r, http.StatusNotFound, "zot: the chat channel is at "+chatChannelPath)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("token")), []byte(ch.token)) != 1 {
		ch.refuse(w, r, http.StatusUnauthorized, "zot: the chat channel needs the token from zot/chat/channel's answer (?token=)")
		return
	}
	if !chatOriginAllowed(r) {
		ch.refuse(w, r, http.StatusForbidden, "zot: the chat channel does not accept pages from "+r.Header.Get("Origin"))
		return
	}
	// The origin is checked above (coder/websocket's check would refuse
	// VS Code's vscode-webview:// pages); messages are small JSON on
	// loopback: no compression, whose CPU is what the channel saves.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept has answered
	}
	c.SetReadLimit(chatChannelReadLimit)
	sub := &chatSub{c: c, out: make(chan []byte, chatChannelQueue)}
	sub.ctx, sub.cancel = context.WithCancel(ch.s.ctx)
	ch.mu.Lock()
	if ch.closed {
		ch.mu.Unlock()
		sub.close()
		return
	}
	ch.subs[sub] = struct{}{}
	ch.n.Store(int32(len(ch.subs)))
	ch.wg.Add(2) // this handler and the writer: close waits for both
	ch.mu.Unlock()
	defer ch.wg.Done()
	go func() {
		defer ch.wg.Done()
		ch.write(sub)
	}()
	ch.read(sub) // on the handler's goroutine, until the socket ends
	ch.drop(sub)
}

// refuse answers an HTTP error and logs it (the path, never the query:
// it holds the token).
func (ch *chatChannel) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	ch.s.logf("chat channel: refused %s (Host %s, Origin %q): %d %s", r.URL.Path, r.Host, r.Header.Get("Origin"), status, why)
	http.Error(w, why, status)
}

// chatOriginAllowed: a browser page says where it comes from; only a
// page of the address it connected through (code-server's proxy keeps
// the Host) or VS Code's webview scheme may drive zot. A client that is
// not a browser sends no Origin: the token alone decides.
func chatOriginAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	return u.Scheme == "vscode-webview" || (u.Host != "" && strings.EqualFold(u.Host, r.Host))
}

func (ch *chatChannel) drop(sub *chatSub) {
	ch.mu.Lock()
	delete(ch.subs, sub)
	ch.n.Store(int32(len(ch.subs)))
	ch.mu.Unlock()
	sub.close()
}

// read serves the chat's requests through the same handler chain as
// LSP's (in order with what zot has read there); the answers go back on
// the socket.
func (ch *chatChannel) read(sub *chatSub) {
	ctx := sub.ctx
	for {
		typ, data, err := sub.c.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			_ = sub.c.Close(websocket.StatusUnsupportedData, "zot: the chat channel speaks JSON-RPC in text messages")
			return
		}
		msg, err := jsonrpc2.DecodeMessage(data)
		if err != nil {
			ch.send(sub, chatErrorResponse(nil, jsonrpc2.NewError(jsonrpc2.ParseError, "zot: not a JSON-RPC message: "+err.Error())))
			continue
		}
		call, ok := msg.(*jsonrpc2.Call)
		if !ok {
			continue // notifications and answers: the channel has no use for them
		}
		id := call.ID()
		if !chatChannelMethods[call.Method()] {
			ch.send(sub, chatErrorResponse(&id, errMethodNotFound(call.Method()+" (the chat channel carries zot/prompt and zot/abort; use LSP for the rest)")))
			continue
		}
		_ = ch.s.rpc(ctx, func(_ context.Context, result any, err error) error {
			resp, rerr := jsonrpc2.NewResponse(id, result, err)
			if rerr != nil {
				return rerr
			}
			b, rerr := json.Marshal(resp)
			if rerr != nil {
				return rerr
			}
			ch.send(sub, b)
			return nil
		}, call)
	}
}

func chatErrorResponse(id *jsonrpc2.ID, err error) []byte {
	var rid jsonrpc2.ID
	if id != nil {
		rid = *id
	}
	resp, _ := jsonrpc2.NewResponse(rid, nil, err)
	b, _ := json.Marshal(resp)
	return b
}

// send queues one message for sub; a chat that does not keep up is
// closed (it falls back to LSP) instead of holding zot's runs.
func (ch *chatChannel) send(sub *chatSub, b []byte) {
	select {
	case sub.out <- b:
	case <-sub.ctx.Done():
	default:
		ch.s.logf("chat channel: a chat fell %d messages behind the stream; dropped (it goes on over LSP)", chatChannelQueue)
		sub.close()
	}
}

func (ch *chatChannel) write(sub *chatSub) {
	for {
		select {
		case b := <-sub.out:
			// What else waits goes in the same frame, as a JSON-RPC batch:
			// each frame is a task in the chat's renderer. Nothing waits
			// for company: an answer's first delta, alone, goes at once.
			if n := min(len(sub.out), chatChannelBatch-1); n > 0 {
				batch := append([]byte{'['}, b...)
				for range n {
					batch = append(append(batch, ','), <-sub.out...)
				}
				b = append(batch, ']')
			}
			if err := sub.c.Write(sub.ctx, websocket.MessageText, b); err != nil {
				sub.close()
				return
			}
		case <-sub.ctx.Done():
			return
		}
	}
}

// connected: a chat is there to send to.
func (ch *chatChannel) connected() bool { return ch != nil && ch.n.Load() > 0 }

// broadcast sends a zot/event notification (its JSON-RPC body) to every
// connected chat; body is copied, the caller may reuse it.
func (ch *chatChannel) broadcast(body []byte) {
	if !ch.connected() {
		return
	}
	b := append([]byte(nil), body...)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for sub := range ch.subs {
		ch.send(sub, b)
	}
}

// close ends the listener and every chat, and waits for their goroutines.
func (ch *chatChannel) close() {
	if ch == nil {
		return
	}
	ch.mu.Lock()
	ch.closed = true
	subs := make([]*chatSub, 0, len(ch.subs))
	for sub := range ch.subs {
		subs = append(subs, sub)
	}
	ch.mu.Unlock()
	_ = ch.srv.Close()
	for _, sub := range subs {
		sub.close()
	}
	ch.wg.Wait()
}

package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/segmentio/encoding/json"
	"go.lsp.dev/jsonrpc2"
)

// conn is zot lsp's JSON-RPC connection, in place of jsonrpc2.NewConn
// (docs/decisions.md). It implements jsonrpc2.Conn, so
// protocol.ClientDispatcher and the handler chain are unchanged, and fixes
// what v0.10.0's conn gets wrong on hostile input:
//
//   - An answer whose id is not pending (a duplicate, a late answer to a
//     call zot stopped waiting for, an id zot never sent) is logged and
//     dropped. jsonrpc2's read loop sends it into the call's one-slot
//     channel and, on the third copy, blocks forever: no message is read
//     again and the end of input is never seen.
//   - A pending call is removed from the table by the read loop as it is
//     answered, so each call's channel gets at most one send and that send
//     never blocks.
//
// Requests and notifications go to the handler on the read goroutine; the
// handler chain queues them (ordered.go) and never blocks the loop for
// long, so answers to zot's own requests are always read.
type conn struct {
	stream *frameStream
	logf   func(string, ...any)

	seq     atomic.Int32
	mu      sync.Mutex
	pending map[jsonrpc2.ID]chan *jsonrpc2.Response

	done    chan struct{}
	errOnce sync.Once
	err     error
}

var _ jsonrpc2.Conn = (*conn)(nil)

func newConn(stream *frameStream, logf func(string, ...any)) *conn {
	return &conn{stream: stream, logf: logf, pending: map[jsonrpc2.ID]chan *jsonrpc2.Response{}, done: make(chan struct{})}
}

// Call sends a request and waits for its answer or ctx.
func (c *conn) Call(ctx context.Context, method string, params, result any) (jsonrpc2.ID, error) {
	id := jsonrpc2.NewNumberID(c.seq.Add(1))
	body, err := encodeRequest(&id, method, params)
	if err != nil {
		return id, fmt.Errorf("marshaling %s params: %w", method, err)
	}
	ch := make(chan *jsonrpc2.Response, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if _, err := c.stream.out.writeOwned(body); err != nil {
		return id, fmt.Errorf("write to stream: %w", err)
	}
	select {
	case resp := <-ch:
		if err := resp.Err(); err != nil {
			return id, err
		}
		if result == nil || len(resp.Result()) == 0 {
			return id, nil
		}
		if err := json.Unmarshal(resp.Result(), result); err != nil {
			return id, fmt.Errorf("unmarshaling the answer to %s: %w", method, err)
		}
		return id, nil
	case <-ctx.Done():
		return id, ctx.Err()
	case <-c.done:
		return id, errors.New("the connection closed before " + method + " was answered")
	}
}

// Notify sends a notification.
func (c *conn) Notify(ctx context.Context, method string, params any) error {
	body, err := encodeRequest(nil, method, params)
	if err != nil {
		return fmt.Errorf("marshaling %s params: %w", method, err)
	}
	_, err = c.stream.out.writeOwned(body)
	return err
}

// Go starts the read loop.
func (c *conn) Go(ctx context.Context, handler jsonrpc2.Handler) { go c.run(ctx, handler) }

func (c *conn) run(ctx context.Context, handler jsonrpc2.Handler) {
	defer close(c.done)
	for {
		msg, _, err := c.stream.Read(ctx)
		if err != nil {
			c.fail(err)
			return
		}
		switch msg := msg.(type) {
		case jsonrpc2.Request:
			if err := handler(ctx, c.replier(msg), msg); err != nil {
				c.logf("%s: %v", msg.Method(), err)
			}
		case *jsonrpc2.Response:
			c.deliver(msg)
		}
	}
}

// deliver hands an answer to the call waiting for it, or drops it.
func (c *conn) deliver(resp *jsonrpc2.Response) {
	c.mu.Lock()
	ch, ok := c.pending[resp.ID()]
	delete(c.pending, resp.ID())
	c.mu.Unlock()
	if !ok {
		c.logf("dropping an answer to id %v: no request with that id is waiting (a duplicate, late or unknown answer)", resp.ID())
		return
	}
	ch <- resp // one slot, one send: never blocks
}

func (c *conn) replier(req jsonrpc2.Request) jsonrpc2.Replier {
	return func(ctx context.Context, result any, err error) error {
		call, ok := req.(*jsonrpc2.Call)
		if !ok {
			return nil
		}
		body, merr := encodeResponse(call.ID(), result, wireError(req.Method(), err))
		if merr != nil {
			body, _ = encodeResponse(call.ID(), nil, rpcError(jsonrpc2.InternalError, "internal error: cannot encode the answer to %s: %v (please report it)", req.Method(), merr))
		}
		_, werr := c.stream.out.writeOwned(body)
		return werr
	}
}

// encodeRequest encodes a call (id set) or a notification in one pass
// into one buffer. jsonrpc2 encodes params, then the message around them
// again: for a large message, four copies on the way out.
func encodeRequest(id *jsonrpc2.ID, method string, params any) ([]byte, error) {
	b := append(make([]byte, 0, 256), `{"jsonrpc":"2.0",`...)
	var err error
	if id != nil {
		b = append(b, `"id":`...)
		if b, err = appendID(b, *id); err != nil {
			return nil, err
		}
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b, _ = json.Append(b, method, 0)
	if params != nil {
		b = append(b, `,"params":`...)
		if b, err = json.Append(b, params, json.EscapeHTML|json.SortMapKeys); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendID(b []byte, id jsonrpc2.ID) ([]byte, error) {
	raw, err := id.MarshalJSON()
	return append(b, raw...), err
}

// encodeResponse encodes an answer in one pass into one buffer.
func encodeResponse(id jsonrpc2.ID, result any, rerr error) ([]byte, error) {
	b := append(make([]byte, 0, 256), `{"jsonrpc":"2.0","id":`...)
	b, err := appendID(b, id)
	if err != nil {
		return nil, err
	}
	if rerr != nil {
		we, ok := rerr.(*jsonrpc2.Error)
		if !ok {
			we = &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: rerr.Error()}
		}
		b = append(b, `,"error":`...)
		b, err = json.Append(b, we, json.EscapeHTML)
	} else {
		b = append(b, `,"result":`...)
		b, err = json.Append(b, result, json.EscapeHTML|json.SortMapKeys)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// wireError gives every error answer a JSON-RPC code; a plain error would
// go out as code 0. go.lsp.dev/protocol's handler reports params it cannot
// decode as "JSON-RPC parse error: <cause>" (a plain error); the body was
// JSON, so that is InvalidParams.
func wireError(method string, err error) error {
	if err == nil {
		return nil
	}
	if we, ok := err.(*jsonrpc2.Error); ok && we.Code != 0 {
		return err
	}
	msg := err.Error()
	if cause, ok := strings.CutPrefix(msg, jsonrpc2.ErrParse.Message+": "); ok {
		return rpcError(jsonrpc2.InvalidParams, "%s: invalid params: %s", method, cause)
	}
	var we *jsonrpc2.Error
	if errors.As(err, &we) && we.Code != 0 {
		return &jsonrpc2.Error{Code: we.Code, Message: msg}
	}
	return rpcError(jsonrpc2.InternalError, "%s: %s", method, msg)
}

// Close closes the input, ending the read loop.
func (c *conn) Close() error { return c.stream.Close() }

// Done is closed when the read loop has ended.
func (c *conn) Done() <-chan struct{} { return c.done }

// Err is why the read loop ended.
func (c *conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func (c *conn) fail(err error) {
	c.errOnce.Do(func() { c.err = err })
	c.stream.Close()
}

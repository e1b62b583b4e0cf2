package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// canceller is zot's own $/cancelRequest middleware. jsonrpc2.CancelHandler
// keys requests by an int32 id but $/cancelRequest's params decode their
// id as float64, so numeric ids never match; here both numeric and string
// ids do. It sits before the ordered queue so a cancel is seen at once,
// not after the request it cancels.
type canceller struct {
	mu       sync.Mutex
	inflight map[string]context.CancelFunc
}

func newCanceller() *canceller {
	return &canceller{inflight: map[string]context.CancelFunc{}}
}

// idKey is the canonical key of a request id: #N for numbers, "s" quoted
// for strings, so 1 and "1" stay distinct as JSON-RPC wants.
func idKey(id jsonrpc2.ID) string { return fmt.Sprintf("%q", id) }

// rawIDKey is idKey for an id as it appears in $/cancelRequest params.
func rawIDKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false
		}
		return fmt.Sprintf("%q", jsonrpc2.NewStringID(s)), true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return "", false
	}
	return fmt.Sprintf("%q", jsonrpc2.NewNumberID(int32(f))), true
}

func (c *canceller) middleware(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if req.Method() == protocol.MethodCancelRequest {
			var p struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(req.Params(), &p); err == nil {
				if key, ok := rawIDKey(p.ID); ok {
					c.cancel(key)
				}
			}
			return reply(ctx, nil, nil)
		}
		call, ok := req.(*jsonrpc2.Call)
		if !ok {
			return next(ctx, reply, req)
		}
		key := idKey(call.ID())
		ctx, cancel := context.WithCancel(ctx)
		c.mu.Lock()
		c.inflight[key] = cancel
		c.mu.Unlock()
		inner := reply
		reply = func(ctx context.Context, result any, err error) error {
			c.mu.Lock()
			delete(c.inflight, key)
			c.mu.Unlock()
			rerr := inner(ctx, result, err)
			cancel()
			return rerr
		}
		return next(ctx, reply, req)
	}
}

func (c *canceller) cancel(key string) bool {
	c.mu.Lock()
	f, ok := c.inflight[key]
	c.mu.Unlock()
	if ok {
		f()
	}
	return ok
}

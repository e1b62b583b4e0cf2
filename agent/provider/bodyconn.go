package provider

import (
	"context"
	"io"
	"net"
	"net/http"
)

// net/http copies a request body with a known length through an
// io.LimitedReader and a 32 KiB buffer: a request as large as the
// transcript was copied once more in user space and written in 32 KiB
// pieces. The default client's connections hand a body of ours to the
// socket in one write, straight from the buffer it was built in. TLS
// connections wrap this one and encrypt from their own buffers, so only
// plain HTTP (a model server on this machine or the network) gains.

// defaultTransport is http.DefaultTransport (proxies from the environment,
// HTTP/2, timeouts) with connections that write our bodies whole.
// (nil, net/http's own, if a program replaced it with another kind.)
func defaultTransport() http.RoundTripper {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return bodyTransport(t)
	}
	return nil
}

// bodyTransport is a clone of t whose connections write our bodies whole.
func bodyTransport(t *http.Transport) *http.Transport {
	t = t.Clone()
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &bodyConn{Conn: c}, nil
	}
	return t
}

// bodyConn is a connection that writes a request body of ours in one
// write (see bodyReader.writeTo).
type bodyConn struct {
	net.Conn
}

// ReadFrom is what net/http's body copy calls with the request body
// (io.Copy prefers the destination's ReadFrom when the source, a
// LimitedReader, has no WriteTo).
func (c *bodyConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if br, ok := lr.R.(*bodyReader); ok {
			n, err := br.writeTo(c.Conn, lr.N)
			lr.N -= n
			return n, err
		}
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r) // the connection's own (splice, sendfile)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

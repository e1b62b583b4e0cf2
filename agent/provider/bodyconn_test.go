package provider

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// writeLog is a connection that records the size of each write.
type writeLog struct {
	net.Conn
	mu     sync.Mutex
	writes []int
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, len(p))
	w.mu.Unlock()
	return w.Conn.Write(p)
}

func (w *writeLog) largest() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.writes) == 0 {
		return 0
	}
	return slices.Max(w.writes)
}

// A request body of ours goes to the socket in one write from the buffer
// it was built in (net/http alone writes it in 32 KiB pieces through a copy
// buffer), byte for byte and with its Content-Length; any other body still
// goes through.
func TestBodyWrittenWhole(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || r.ContentLength != int64(len(b)) {
			t.Errorf("body: %d bytes, Content-Length %d, %v", len(b), r.ContentLength, err)
		}
		got = b
	}))
	defer srv.Close()
	var conns []*writeLog
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		l := &writeLog{Conn: c}
		conns = append(conns, l)
		return l, nil
	}
	tr := bodyTransport(base)
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}

	data := []byte(strings.Repeat(`{"role":"user","content":"0123456789"},`, 30_000)) // ~1.2 MB
	postBody(t, hc, srv.URL, data)
	if !bytes.Equal(got, data) {
		t.Fatalf("the server got %d bytes, want the %d sent", len(got), len(data))
	}
	if len(conns) != 1 || conns[0].largest() < len(data)-8<<10 {
		t.Fatalf("largest write %d bytes, want the body's %d in one", conns[0].largest(), len(data))
	}

	// Someone else's body (not a bodyReader): net/http's own copy.
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(data[:100_000]))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !bytes.Equal(got, data[:100_000]) {
		t.Fatalf("the server got %d bytes, want 100000", len(got))
	}
}

// Over TLS (HTTP/1.1 and HTTP/2) the connection under TLS is ours too:
// bodies arrive whole.
func TestBodyOverTLS(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		var got []byte
		var proto string
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ = io.ReadAll(r.Body)
			proto = r.Proto
		}))
		srv.EnableHTTP2 = h2
		srv.StartTLS()
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		tr := bodyTransport(base)
		hc := &http.Client{Transport: tr}
		data := bytes.Repeat([]byte("0123456789abcdef"), 50_000)
		postBody(t, hc, srv.URL, data)
		tr.CloseIdleConnections()
		srv.Close()
		if !bytes.Equal(got, data) {
			t.Fatalf("HTTP/2 %v: the server got %d bytes, want %d", h2, len(got), len(data))
		}
		if want := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[h2]; proto != want {
			t.Fatalf("protocol %s, want %s", proto, want)
		}
	}
}

// postBody posts data as zot posts a request body: a shared body built in
// an encode cache's buffer.
func postBody(t *testing.T, hc *http.Client, url string, data []byte) {
	t.Helper()
	var c encodeCache
	body := c.share(append(c.takeBuffer(), data...))
	defer body.done()
	resp, err := post(context.Background(), hc, "test", url, http.Header{}, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

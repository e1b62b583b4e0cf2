// Package mcptest finds the real MCP servers the tests drive (pinned in
// test/mcp/package.json, installed by `npm ci` there) and builds the fake
// one (extensions/mcp/testdata/fakemcp).
package mcptest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/internal/testenv"
)

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Bin returns the path of an npm-installed server's entry point in
// test/mcp/node_modules/.bin (mcp-server-everything,
// mcp-server-filesystem), skipping the test (failing under
// ZOT_REQUIRE_ALL=1) when node or the install is missing.
func Bin(t testing.TB, name string) string {
	t.Helper()
	testenv.NeedCommand(t, "node", "the MCP tests' npm servers")
	p := filepath.Join(Root(), "test", "mcp", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		testenv.Skip(t, "%s is not installed: run `npm ci` in test/mcp", name)
	}
	return p
}

var (
	fakeOnce sync.Once
	fakePath string
	fakeErr  error
)

// Fake builds extensions/mcp/testdata/fakemcp once per test binary.
func Fake(t testing.TB) string {
	t.Helper()
	fakeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zot-fakemcp-")
		if err != nil {
			fakeErr = err
			return
		}
		fakePath = filepath.Join(dir, "fakemcp")
		if runtime.GOOS == "windows" {
			fakePath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", fakePath, "./extensions/mcp/testdata/fakemcp")
		cmd.Dir = Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			fakeErr = fmt.Errorf("go build fakemcp: %v\n%s", err, out)
		}
	})
	if fakeErr != nil {
		t.Fatal(fakeErr)
	}
	return fakePath
}

// EverythingHTTP starts server-everything's streamable HTTP transport on
// a free loopback port and returns its URL; the test's cleanup stops it.
func EverythingHTTP(t testing.TB) string {
	t.Helper()
	return everything(t, "streamableHttp", "listening on port", "/mcp")
}

// EverythingSSE starts server-everything's legacy HTTP+SSE transport (the
// one old servers still speak) the same way and returns its SSE endpoint.
func EverythingSSE(t testing.TB) string {
	t.Helper()
	return everything(t, "sse", "running on port", "/sse")
}

// everything runs server-everything in mode on a free loopback port until
// its stderr says ready, and returns the URL of path on it.
func everything(t testing.TB, mode, ready, path string) string {
	t.Helper()
	bin := Bin(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	up := make(chan struct{})
	var seen strings.Builder
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			mu.Lock()
			seen.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), ready) {
				once.Do(func() { close(up) })
			}
		}
	}()
	select {
	case <-up:
	case <-time.After(60 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("server-everything (%s) did not start within 60s:\n%s", mode, seen.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
}

// Package ospath maps file: URIs to paths and back, and decides whether a
// path lies inside a directory, by the rules of a given operating system.
// The OS is a parameter (path/filepath only knows the one it was built
// for), so the Windows rules — drive letters, backslashes, UNC shares,
// case-insensitive names — are unit-tested on Linux too. The functions
// without a goos parameter apply the host's rules.
package ospath

import (
	"fmt"
	"net/url"
	"path"
	"runtime"
	"strings"
	"unicode/utf8"
)

// FromURI is the host's path of a file: URI.
func FromURI(u string) (string, error) { return FromURIOn(runtime.GOOS, u) }

// ToURI is the file: URI of one of the host's absolute paths.
func ToURI(p string) string { return ToURIOn(runtime.GOOS, p) }

// Within reports whether p is dir or lies below it, on the host. Both
// paths must be absolute and clean (filepath.Clean).
func Within(dir, p string) bool { return WithinOn(runtime.GOOS, dir, p) }

// CaseInsensitive reports whether goos's default file systems treat
// names that differ only in case as the same file (NTFS, APFS, HFS+).
func CaseInsensitive(goos string) bool {
	return goos == "windows" || goos == "darwin" || goos == "ios"
}

// FromURIOn is the path a file: URI names on goos. On Windows the URIs
// editors send are accepted in every spelling seen in the wild —
// file:///c%3A/Users/x (VS Code), file:///C:/Users/x (Neovim, gopls),
// file://server/share/x (a UNC share) — and the drive letter comes back in
// upper case, as Windows itself writes it.
func FromURIOn(goos, u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("not a valid URI: %q: %v", u, err)
	}
	if !strings.EqualFold(pu.Scheme, "file") {
		return "", fmt.Errorf("not a file: URI: %q", u)
	}
	p := pu.Path
	if pu.Opaque != "" { // file:c:/x, file:x
		return "", fmt.Errorf("a file: URI needs an absolute path (file:///…): %q", u)
	}
	host := pu.Host
	if strings.EqualFold(host, "localhost") {
		host = ""
	}
	if goos != "windows" {
		if host != "" {
			return "", fmt.Errorf("file: URI %q names a remote host (%s), which has no local path", u, host)
		}
		if !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("a file: URI needs an absolute path (file:///…): %q", u)
		}
		return path.Clean(p), nil
	}
	if isDrive(host) { // file://c:/x, a common misspelling
		p, host = "/"+host+p, ""
	}
	if host != "" {
		return `\\` + host + strings.ReplaceAll(path.Clean("/"+p), "/", `\`), nil
	}
	if len(p) >= 3 && p[0] == '/' && isDrive(p[1:3]) && (len(p) == 3 || p[3] == '/') {
		drive := strings.ToUpper(p[1:3])
		rest := path.Clean("/" + p[3:])
		return drive + strings.ReplaceAll(rest, "/", `\`), nil
	}
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("a file: URI needs an absolute path (file:///…): %q", u)
	}
	return strings.ReplaceAll(path.Clean(p), "/", `\`), nil
}

// ToURIOn is the file: URI of an absolute path on goos. Windows paths
// become file:///C:/Users/x (the form gopls and Neovim write; VS Code reads
// it as the same document as its own file:///c%3A/Users/x) and UNC paths
// file://server/share/x.
func ToURIOn(goos, p string) string {
	u := url.URL{Scheme: "file"}
	if goos != "windows" {
		u.Path = path.Clean(p)
		return u.String()
	}
	s := strings.ReplaceAll(p, `\`, "/")
	switch {
	case strings.HasPrefix(s, "//"):
		host, rest, _ := strings.Cut(s[2:], "/")
		u.Host = host
		u.Path = path.Clean("/" + rest)
	case len(s) >= 2 && isDrive(s[:2]):
		u.Path = "/" + strings.ToUpper(s[:1]) + ":" + path.Clean("/"+s[2:])
	default:
		u.Path = path.Clean("/" + s)
	}
	return u.String()
}

// WithinOn reports whether p is dir or lies below it, comparing names the
// way goos's file system does: case-insensitively on Windows and macOS,
// and with either slash on Windows. Both paths must be clean.
func WithinOn(goos, dir, p string) bool {
	sep := "/"
	if goos == "windows" {
		sep = `\`
		dir = strings.ReplaceAll(dir, "/", sep)
		p = strings.ReplaceAll(p, "/", sep)
	}
	if !hasPrefixFold(goos, p, dir) {
		return false
	}
	rest := p[len(dir):]
	return rest == "" || strings.HasSuffix(dir, sep) || strings.HasPrefix(rest, sep)
}

// hasPrefixFold is strings.HasPrefix, case-insensitive where goos's file
// system is. A prefix that ends inside a multi-byte rune never matches.
func hasPrefixFold(goos, s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	if !CaseInsensitive(goos) {
		return s[:len(prefix)] == prefix
	}
	if len(s) > len(prefix) && !utf8.RuneStart(s[len(prefix)]) {
		return false
	}
	return strings.EqualFold(s[:len(prefix)], prefix)
}

func isDrive(s string) bool {
	if len(s) != 2 || s[1] != ':' {
		return false
	}
	c := s[0] | 0x20
	return c >= 'a' && c <= 'z'
}

package extensions

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// pi extensions (pi's ExtensionAPI modules: a .ts/.js file whose default
// export is function (pi), a directory with index.ts/index.js, or a
// package whose package.json has a "pi" key) run in zot's Node runtime,
// extensions/pi/runtime, which speaks zot's v1 wire with the issue-12
// additions: by default one Node process for all of them (pihost.go),
// else ($ZOT_PI_PROCESS=each) one per pi module or package. To the rest of
// the host each is an ordinary extension (trust, reload, restarts, guards).

// PiModule describes a pi extension found where an extension directory
// was expected.
type PiModule struct {
	// Entries are the module files the runtime loads, absolute.
	Entries []string `json:"entries"`
	// Kind is file, dir or package.
	Kind string `json:"kind"`
}

// EnvPiRuntime names the directory of zot's pi runtime (host.js and its
// node_modules) when it is not next to the zot binary.
const EnvPiRuntime = "ZOT_PI_RUNTIME"

// EnvPiFlags carries the values of pi extensions' flags (--pi-flag
// name=value) to the runtime, as a JSON object.
const EnvPiFlags = "ZOT_PI_FLAGS"

// PiProjectRoot is pi's project-local extension directory.
func PiProjectRoot(cwd string) string { return filepath.Join(cwd, ".pi", "extensions") }

// EnvPiHome overrides the home under which pi's global extension
// directory (~/.pi/agent/extensions) is looked for (tests).
const EnvPiHome = "ZOT_PI_HOME"

// PiGlobalRoot is pi's per-user extension directory; "" without a home.
func PiGlobalRoot() string {
	home := os.Getenv(EnvPiHome)
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return ""
		}
	}
	return filepath.Join(home, ".pi", "agent", "extensions")
}

var piExts = []string{".ts", ".js", ".mts", ".mjs", ".cts", ".cjs"}

func isPiFile(p string) bool {
	ext := filepath.Ext(p)
	for _, e := range piExts {
		if ext == e {
			return !strings.HasSuffix(p, ".d.ts")
		}
	}
	return false
}

// detectPi reports whether path (a file or directory, absolute) is a pi
// extension, and which files it loads. A directory with a zot or SEP
// manifest is never one.
func detectPi(path string) (*PiModule, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil
	}
	if !st.IsDir() {
		if isPiFile(path) {
			return &PiModule{Entries: []string{path}, Kind: "file"}, nil
		}
		return nil, nil
	}
	if _, err := manifestPath(path); err == nil {
		return nil, nil
	}
	if raw, err := os.ReadFile(filepath.Join(path, "package.json")); err == nil {
		var pkg struct {
			Pi *struct {
				Extensions []string `json:"extensions"`
			} `json:"pi"`
		}
		if err := json.Unmarshal(raw, &pkg); err != nil {
			return nil, fmt.Errorf("%s: package.json: %v", path, err)
		}
		if pkg.Pi != nil && len(pkg.Pi.Extensions) > 0 {
			m := &PiModule{Kind: "package"}
			for _, e := range pkg.Pi.Extensions {
				p := filepath.Join(path, filepath.FromSlash(e))
				if !within(path, p) {
					return nil, fmt.Errorf("%s: package.json \"pi\".extensions names %q, outside the package", path, e)
				}
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					sub, err := detectPi(p)
					if err != nil {
						return nil, err
					}
					if sub == nil {
						// pi's rule for a folder: its .ts/.js files and
						// each subfolder's index.ts/index.js.
						sub = &PiModule{Entries: piFolderEntries(p)}
					}
					if len(sub.Entries) == 0 {
						return nil, fmt.Errorf("%s: package.json \"pi\".extensions names %q, a directory without .ts/.js modules", path, e)
					}
					m.Entries = append(m.Entries, sub.Entries...)
					continue
				}
				if !isPiFile(p) {
					return nil, fmt.Errorf("%s: package.json \"pi\".extensions names %q, which is not a .ts or .js file", path, e)
				}
				if _, err := os.Stat(p); err != nil {
					return nil, fmt.Errorf("%s: package.json \"pi\".extensions names %q, which does not exist", path, e)
				}
				m.Entries = append(m.Entries, p)
			}
			return m, nil
		}
	}
	for _, idx := range []string{"index.ts", "index.js"} {
		p := filepath.Join(path, idx)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return &PiModule{Entries: []string{p}, Kind: "dir"}, nil
		}
	}
	return nil, nil
}

// piFolderEntries lists a folder's pi modules as pi's package loader
// does: each .ts/.js file, and each subfolder's index.ts (else index.js);
// dot entries and node_modules are skipped. Sorted by name.
func piFolderEntries(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			for _, idx := range []string{"index.ts", "index.js"} {
				if _, err := os.Stat(filepath.Join(p, idx)); err == nil {
					out = append(out, filepath.Join(p, idx))
					break
				}
			}
			continue
		}
		if ext := filepath.Ext(e.Name()); (ext == ".ts" || ext == ".js") && !strings.HasSuffix(e.Name(), ".d.ts") {
			out = append(out, p)
		}
	}
	return out
}

var piNameJunk = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// piName is the extension name of a pi module: a package's name (its
// scope dropped), else the directory's name, else the file's stem.
func piName(path string, m *PiModule) string {
	var n string
	switch m.Kind {
	case "file":
		n = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	case "package":
		var pkg struct {
			Name string `json:"name"`
		}
		if raw, err := os.ReadFile(filepath.Join(path, "package.json")); err == nil && json.Unmarshal(raw, &pkg) == nil && pkg.Name != "" {
			n = pkg.Name[strings.LastIndex(pkg.Name, "/")+1:]
		}
		if n == "" {
			n = filepath.Base(path)
		}
	default:
		n = filepath.Base(path)
	}
	n = strings.TrimLeft(piNameJunk.ReplaceAllString(n, "-"), "._-")
	if len(n) > 64 {
		n = n[:64]
	}
	if n == "" {
		n = "pi"
	}
	return n
}

// readPiCandidate builds the candidate of a pi module at path. Its Dir
// is the module's directory, or for a single file the file itself: two
// files in one extensions directory are two extensions, each trusted,
// guarded and reloaded on its own (piWorkDir is where it runs). The
// manifest is synthesized: exec node, args the entries, so the trust hash
// and hot reload see them as code files.
func readPiCandidate(path, source string, m *PiModule) Candidate {
	c := Candidate{Dir: filepath.Clean(path), Source: source, Name: piName(path, m)}
	man := Manifest{Name: c.Name, Exec: "node", Language: "pi", Version: "pi", Pi: m}
	for _, e := range m.Entries {
		rel := e
		if m.Kind != "file" {
			if r, err := filepath.Rel(path, e); err == nil {
				rel = filepath.ToSlash(r)
			}
		}
		man.Args = append(man.Args, rel)
	}
	man.Description = "pi extension (" + m.Kind + ")"
	raw, _ := json.Marshal(struct {
		Name    string   `json:"name"`
		Pi      string   `json:"pi"`
		Entries []string `json:"entries"`
	}{c.Name, m.Kind, man.Args})
	c.Manifest, c.Raw = man, raw
	return c
}

// piRuntimeDir finds zot's pi runtime: $ZOT_PI_RUNTIME, else beside the
// zot binary (pi-runtime/, ../lib/zot/pi-runtime/, or the source tree's
// extensions/pi/runtime for a bin/zot built in it).
func piRuntimeDir() (string, error) {
	if d := os.Getenv(EnvPiRuntime); d != "" {
		return d, checkPiRuntime(d)
	}
	var tried []string
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		base := filepath.Dir(exe)
		for _, d := range []string{
			filepath.Join(base, "pi-runtime"),
			filepath.Join(base, "..", "lib", "zot", "pi-runtime"),
			filepath.Join(base, "..", "extensions", "pi", "runtime"),
		} {
			d = filepath.Clean(d)
			tried = append(tried, d)
			if _, err := os.Stat(filepath.Join(d, "host.js")); err == nil {
				return d, checkPiRuntime(d)
			}
		}
	}
	return "", fmt.Errorf("zot's pi runtime is not installed (looked in %s; set $%s to its directory)", strings.Join(tried, ", "), EnvPiRuntime)
}

func checkPiRuntime(d string) error {
	if _, err := os.Stat(filepath.Join(d, "host.js")); err != nil {
		return fmt.Errorf("$%s=%s has no host.js (it should name zot's extensions/pi/runtime)", EnvPiRuntime, d)
	}
	if _, err := os.Stat(filepath.Join(d, "node_modules", "sucrase")); err != nil {
		return fmt.Errorf("zot's pi runtime in %s has no node_modules: run `npm ci` there (make pi-runtime)", d)
	}
	return nil
}

// PiMinNode is the oldest Node the runtime supports.
const PiMinNode = 20

var nodeCheck struct {
	sync.Mutex
	path    string
	version string // `node --version`'s
	err     error
	done    bool
}

// piNodeVersion is the version piNode found ("v20.20.2"), or "".
func piNodeVersion() string {
	nodeCheck.Lock()
	defer nodeCheck.Unlock()
	return nodeCheck.version
}

// piNode finds node on $PATH and checks its version (once per zot).
func piNode() (string, error) {
	nodeCheck.Lock()
	defer nodeCheck.Unlock()
	if nodeCheck.done {
		return nodeCheck.path, nodeCheck.err
	}
	nodeCheck.done = true
	p, err := exec.LookPath("node")
	if err != nil {
		nodeCheck.err = fmt.Errorf("pi extensions need Node.js %d or newer, and node is not on $PATH: install Node.js %d+ (https://nodejs.org)", PiMinNode, PiMinNode)
		return "", nodeCheck.err
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		nodeCheck.err = fmt.Errorf("pi extensions need Node.js %d or newer; `%s --version` failed: %v", PiMinNode, p, err)
		return "", nodeCheck.err
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if major < PiMinNode {
		nodeCheck.err = fmt.Errorf("pi extensions need Node.js %d or newer; %s is %s: install Node.js %d+", PiMinNode, p, strings.TrimSpace(string(out)), PiMinNode)
		return "", nodeCheck.err
	}
	nodeCheck.path, nodeCheck.version = p, strings.TrimSpace(string(out))
	return p, nil
}

// piCommand is the program and arguments that start a pi extension: node,
// the runtime's host.js, the extension's name and its entries.
func (m Manifest) piCommand() (string, []string, error) {
	node, err := piNode()
	if err != nil {
		return "", nil, err
	}
	rt, err := piRuntimeDir()
	if err != nil {
		return "", nil, err
	}
	args := []string{filepath.Join(rt, "host.js"), m.Name}
	args = append(args, m.Pi.Entries...)
	return node, args, nil
}

// workDir is where an extension's process runs: its directory, or for a
// single-file pi module the directory holding the file.
func (c Candidate) workDir() string {
	if c.Manifest.Pi != nil && c.Manifest.Pi.Kind == "file" {
		return filepath.Dir(c.Dir)
	}
	return c.Dir
}

// The files a pi module loads, found statically: its relative imports
// (followed), and for each bare import that resolves to a node_modules
// package (not one the runtime provides), that package's files and its
// own dependencies'. The trust hash covers them all, so a change to any
// asks again; the relative ones are also code files (a save reloads).

var (
	piImportRE = regexp.MustCompile(`(?m)(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"'\n]+)["']`)
	// piProvided are the imports zot's runtime resolves itself (its
	// loader's aliases): a package's own copy is never loaded.
	piProvided    = []string{"@mariozechner/pi-coding-agent", "@mariozechner/pi-ai", "@mariozechner/pi-tui", "@mariozechner/pi-agent-core", "@sinclair/typebox", "zod"}
	piResolveExts = []string{"", ".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".json"}
)

// piDeps returns the module files reached through relative imports from
// entries (entries included), and the node_modules package directories
// their bare imports resolve to.
func piDeps(entries []string) (files, packages []string) {
	seenFile := map[string]bool{}
	seenPkg := map[string]bool{}
	var visit func(f string)
	var visitPkg func(dir string)
	bare := func(from, spec string) {
		if strings.HasPrefix(spec, "node:") {
			return
		}
		name := spec
		parts := strings.Split(spec, "/")
		if strings.HasPrefix(spec, "@") && len(parts) >= 2 {
			name = parts[0] + "/" + parts[1]
		} else {
			name = parts[0]
		}
		for _, p := range piProvided {
			if name == p {
				return
			}
		}
		for d := from; ; d = filepath.Dir(d) {
			cand := filepath.Join(d, "node_modules", filepath.FromSlash(name))
			if st, err := os.Stat(cand); err == nil && st.IsDir() {
				visitPkg(cand)
				return
			}
			if filepath.Dir(d) == d {
				return // a Node builtin (fs, path) or not installed
			}
		}
	}
	visit = func(f string) {
		if seenFile[f] {
			return
		}
		seenFile[f] = true
		files = append(files, f)
		b, err := os.ReadFile(f)
		if err != nil || len(b) > 8<<20 {
			return
		}
		for _, m := range piImportRE.FindAllSubmatch(b, -1) {
			spec := string(m[1])
			if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || spec == "." || spec == ".." {
				if r := piResolveRel(filepath.Dir(f), spec); r != "" {
					visit(r)
				}
				continue
			}
			bare(filepath.Dir(f), spec)
		}
	}
	visitPkg = func(dir string) {
		if seenPkg[dir] {
			return
		}
		seenPkg[dir] = true
		packages = append(packages, dir)
		var pkg struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil && json.Unmarshal(b, &pkg) == nil {
			for name := range pkg.Dependencies {
				bare(dir, name)
			}
		}
	}
	for _, e := range entries {
		visit(e)
	}
	return files, packages
}

// piImportable reports whether path could be a file a pi module imports
// (a known extension, or none): the watcher's other writes (zot's own
// temporary files beside guards.json) do not cost a scan of every pi
// module's imports.
func piImportable(path string) bool {
	ext := filepath.Ext(path)
	return ext == "" || slices.Contains(piResolveExts, ext)
}

// piResolveRel resolves a relative import as Node and the runtime's loader do: the path,
// the path with a known extension (a .js import of a .ts file included),
// or its index file.
func piResolveRel(dir, spec string) string {
	p := filepath.Join(dir, filepath.FromSlash(spec))
	isFile := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	for _, x := range piResolveExts {
		if isFile(p + x) {
			return p + x
		}
	}
	if ext := filepath.Ext(p); ext == ".js" || ext == ".mjs" || ext == ".cjs" {
		base := strings.TrimSuffix(p, ext)
		for _, x := range []string{".ts", ".tsx", ".mts", ".cts"} {
			if isFile(base + x) {
				return base + x
			}
		}
	}
	for _, x := range piResolveExts[1:] {
		if isFile(filepath.Join(p, "index"+x)) {
			return filepath.Join(p, "index"+x)
		}
	}
	return ""
}

// piTrustFiles is what a pi module's trust hash covers besides its
// directory: every file it imports, wherever it lies, and every file of
// each node_modules package it loads (TrustSkipDirs are not skipped there:
// a package's own node_modules is code it runs).
func (m Manifest) piTrustFiles() []string {
	files, pkgs := piDeps(m.Pi.Entries)
	out := append([]string{}, files...)
	for _, dir := range pkgs {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// piCodeFiles are the files whose change reloads a pi module: its entries
// and what they import relatively (not node_modules: reinstalling a
// package is not a save).
func (m Manifest) piCodeFiles() []string {
	files, _ := piDeps(m.Pi.Entries)
	return files
}

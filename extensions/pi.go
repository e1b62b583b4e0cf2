package extensions

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// pi extensions (pi's ExtensionAPI modules: a .ts/.js file whose default
// export is function (pi), a directory with index.ts/index.js, or a
// package whose package.json has a "pi" key) run in zot's Node runtime,
// extensions/pi/runtime: one Node process per pi module or package, which
// speaks zot's v1 wire with the issue-12 additions. To the rest of the
// host it is an ordinary extension (trust, reload, restarts, guards).

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
	if _, err := os.Stat(filepath.Join(d, "node_modules", "jiti")); err != nil {
		return fmt.Errorf("zot's pi runtime in %s has no node_modules: run `npm ci` there (make pi-runtime)", d)
	}
	return nil
}

// PiMinNode is the oldest Node the runtime supports.
const PiMinNode = 20

var nodeCheck struct {
	sync.Mutex
	path string
	err  error
	done bool
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
	nodeCheck.path = p
	return p, nil
}

// piCommand is the program and arguments that start a pi extension: node,
// the runtime's host.js, the extension's name and its entries.
func (m Manifest) piCommand(dir string) (string, []string, error) {
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

package extensions

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Sources of an extension, in precedence order.
const (
	SourceExplicit = "ext"     // --ext/-e PATH
	SourceProject  = "project" // <cwd>/.zot/extensions/<name>
	SourceGlobal   = "global"  // $ZOT_HOME/extensions/<name>
	// SourceWorkspace is an extension path an editor passed in
	// (initializationOptions.ext, zot.extensions) that lies inside the
	// workspace: a repository can put it there, so it needs trust like a
	// project extension.
	SourceWorkspace = "workspace"
)

// Candidate is one extension directory found by discovery.
type Candidate struct {
	Name     string // the manifest's name; the directory name if unreadable
	Dir      string // absolute
	Source   string
	Manifest Manifest
	Raw      []byte // manifest bytes
	Err      error  // unreadable or invalid manifest
	// ShadowedBy is the directory of the same-named candidate that wins.
	ShadowedBy string
}

// ProjectRoot is where project-local extensions live for a workspace.
func ProjectRoot(cwd string) string { return filepath.Join(cwd, ".zot", "extensions") }

// SEPProjectRoot is SEP's project-local extension directory
// (<repo>/.smooth/extensions/<name>/), scanned after zot's own.
func SEPProjectRoot(cwd string) string { return filepath.Join(cwd, ".smooth", "extensions") }

// EnvSEPHome overrides the user's home for SEP's global extension
// directory (tests; a shared machine).
const EnvSEPHome = "ZOT_SEP_HOME"

// SEPGlobalRoot is SEP's per-user extension directory
// (~/.smooth/extensions/<name>/), scanned after zot's own; "" if there is
// no home directory.
func SEPGlobalRoot() string {
	home := os.Getenv(EnvSEPHome)
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return ""
		}
	}
	return filepath.Join(home, ".smooth", "extensions")
}

// GlobalRoot is where installed extensions live.
func GlobalRoot(home string) string { return filepath.Join(home, "extensions") }

// Discover lists extension directories in load order: the --ext paths in
// the order given, then project-local ones, then global ones (each sorted
// by directory name). A name taken by an earlier candidate shadows later
// ones (ShadowedBy set). Candidates with a broken manifest are listed with
// Err and take no name.
func Discover(cwd, home string, extPaths []string) []Candidate {
	return DiscoverAll(cwd, home, extPaths, nil)
}

// DiscoverAll is Discover with the extension paths an editor passed in
// (editorExtPaths, after extPaths): those inside the workspace have
// SourceWorkspace and need trust; the others are SourceExplicit.
func DiscoverAll(cwd, home string, extPaths, editorExtPaths []string) []Candidate {
	var out []Candidate
	ws := ""
	if cwd != "" {
		ws = workspaceKey(cwd)
	}
	for i, p := range append(slices.Clone(extPaths), editorExtPaths...) {
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		if st, err := os.Stat(abs); err == nil && !st.IsDir() && IsManifestName(filepath.Base(abs)) {
			abs = filepath.Dir(abs)
		}
		source := SourceExplicit
		if i >= len(extPaths) && ws != "" && within(ws, workspaceKey(abs)) {
			source = SourceWorkspace
		}
		if pm, err := detectPi(abs); pm != nil || err != nil {
			if err != nil {
				out = append(out, Candidate{Dir: abs, Source: source, Name: filepath.Base(abs), Err: err})
				continue
			}
			out = append(out, readPiCandidate(abs, source, pm))
			continue
		}
		out = append(out, readCandidate(abs, source))
	}
	if cwd != "" {
		out = append(out, scanRoot(ProjectRoot(cwd), SourceProject)...)
		out = append(out, scanRoot(SEPProjectRoot(cwd), SourceProject)...)
		out = append(out, scanPiRoot(PiProjectRoot(cwd), SourceProject)...)
	}
	if home != "" {
		out = append(out, scanRoot(GlobalRoot(home), SourceGlobal)...)
	}
	if r := SEPGlobalRoot(); r != "" {
		out = append(out, scanRoot(r, SourceGlobal)...)
	}
	if r := PiGlobalRoot(); r != "" {
		out = append(out, scanPiRoot(r, SourceGlobal)...)
	}
	winner := map[string]string{}
	for i := range out {
		c := &out[i]
		if c.Err != nil {
			continue
		}
		if w, ok := winner[c.Name]; ok {
			c.ShadowedBy = w
			continue
		}
		winner[c.Name] = c.Dir
	}
	return out
}

func scanRoot(root, source string) []Candidate {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var names []string
	pi := map[string]Candidate{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // our own install staging dirs, editor droppings
		}
		p := filepath.Join(root, e.Name())
		if _, err := manifestPath(p); err != nil {
			// Not zot's or SEP's: a pi extension (a .ts/.js file, a
			// directory with index.ts, a "pi" package) is one too.
			pm, perr := detectPi(p)
			switch {
			case perr != nil:
				pi[e.Name()] = Candidate{Dir: p, Source: source, Name: e.Name(), Err: perr}
			case pm != nil:
				pi[e.Name()] = readPiCandidate(p, source, pm)
			default:
				continue // not an extension (yet)
			}
		} else if st, err := os.Stat(p); err != nil || !st.IsDir() { // follows symlinked directories
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	out := make([]Candidate, 0, len(names))
	for _, n := range names {
		if c, ok := pi[n]; ok {
			out = append(out, c)
			continue
		}
		out = append(out, readCandidate(filepath.Join(root, n), source))
	}
	return out
}

func readCandidate(dir, source string) Candidate {
	c := Candidate{Dir: filepath.Clean(dir), Source: source, Name: filepath.Base(dir)}
	m, raw, err := ReadManifest(dir)
	c.Manifest, c.Raw, c.Err = m, raw, err
	if err == nil {
		c.Name = m.Name
	}
	return c
}

// scanPiRoot lists pi's extension directory as pi does: each *.ts / *.js
// file, and each subdirectory with index.ts/index.js or a package.json
// with a "pi" key (one level, sorted by name).
func scanPiRoot(root, source string) []Candidate {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []Candidate
	for _, e := range entries { // ReadDir sorts by name
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(root, e.Name())
		pm, err := detectPi(p)
		if err != nil {
			out = append(out, Candidate{Dir: p, Source: source, Name: e.Name(), Err: err})
			continue
		}
		if pm != nil {
			out = append(out, readPiCandidate(p, source, pm))
		}
	}
	return out
}

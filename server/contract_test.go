package server

import (
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/agent/skills"
)

// The zot/* contract is written down four times: docs/protocol.md (for
// people), server/protocol.go + methods.go (the server), lsp_ext.ts (VS
// Code) and protocol.lua (Neovim). These tests fail on any difference, and
// on a change to the document without a new protocol revision.

const (
	docPath = "../docs/protocol.md"
	tsPath  = "../editors/vscode/src/lsp_ext.ts"
	luaPath = "../editors/nvim/lua/zot/protocol.lua"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kindOf names a method's kind as the method index does.
func kindOf(notification bool) string {
	if notification {
		return "notification"
	}
	return "request"
}

// goMethods is the server's table: method → "dir kind".
func goMethods() map[string]string {
	out := map[string]string{}
	for _, h := range zotMethods {
		out[h.Method] = h.Dir + " " + kindOf(h.Notification)
	}
	for _, m := range serverMethods {
		out[m.Method] = m.Dir + " " + kindOf(m.Notification)
	}
	return out
}

// docMethods reads the zot/* rows of docs/protocol.md's method index.
func docMethods(doc string) (map[string]string, error) {
	i := strings.Index(doc, "\n## Method index\n")
	if i < 0 {
		return nil, errorString("docs/protocol.md has no \"## Method index\" section")
	}
	section := doc[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	out := map[string]string{}
	row := regexp.MustCompile(`^\|\s*(.+?)\s*\|\s*(c→s|s→c)\s*\|\s*(request|notification)\s*\|$`)
	name := regexp.MustCompile("`(zot/[^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		m := row.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			if _, dup := out[n[1]]; dup {
				return nil, errorString("docs/protocol.md lists " + n[1] + " twice in the method index")
			}
			out[n[1]] = m[2] + " " + m[3]
		}
	}
	return out, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// tsMethods reads lsp_ext.ts's message types: method → kind (TypeScript
// has no direction).
func tsMethods(src string) map[string]string {
	out := map[string]string{}
	re := regexp.MustCompile(`(?s)new lc\.(RequestType0?|NotificationType0?)<.*?>\(\s*"(zot/[^"]+)"`)
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		out[m[2]] = kindOf(strings.HasPrefix(m[1], "Notification"))
	}
	return out
}

// luaMethods reads protocol.lua's four method tables.
func luaMethods(src string) map[string]string {
	sections := map[string]string{
		"request":             clientToServer + " request",
		"notification":        clientToServer + " notification",
		"server_request":      serverToClient + " request",
		"server_notification": serverToClient + " notification",
	}
	out := map[string]string{}
	for table, what := range sections {
		m := regexp.MustCompile(`(?ms)^M\.` + table + ` = \{\n(.*?)^\}`).FindStringSubmatch(src)
		if m == nil {
			continue
		}
		for _, e := range regexp.MustCompile(`(?m)^\s+\w+ = '([^']+)',`).FindAllStringSubmatch(m[1], -1) {
			out[e[1]] = what
		}
	}
	return out
}

// diffMethods lists what differs between the Go table and another side.
func diffMethods(want, got map[string]string, compare func(want, got string) bool) []string {
	var out []string
	for m, w := range want {
		g, ok := got[m]
		switch {
		case !ok:
			out = append(out, m+" is missing (the server has it: "+w+")")
		case !compare(w, g):
			out = append(out, m+" is "+g+"; the server has "+w)
		}
	}
	for m, g := range got {
		if _, ok := want[m]; !ok {
			out = append(out, m+" ("+g+") is not in the server's table")
		}
	}
	sort.Strings(out)
	return out
}

func TestContractMethodsAgree(t *testing.T) {
	want := goMethods()
	if len(want) < 27 {
		t.Fatalf("the Go table has only %d methods: %v", len(want), want)
	}
	same := func(w, g string) bool { return w == g }
	doc, err := docMethods(readFile(t, docPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffMethods(want, doc, same) {
		t.Errorf("docs/protocol.md method index: %s", d)
	}
	kindOnly := func(w, g string) bool { return strings.HasSuffix(w, " "+g) }
	for _, d := range diffMethods(want, tsMethods(readFile(t, tsPath)), kindOnly) {
		t.Errorf("lsp_ext.ts: %s", d)
	}
	for _, d := range diffMethods(want, luaMethods(readFile(t, luaPath)), same) {
		t.Errorf("protocol.lua: %s", d)
	}
}

// TestContractNoMethodLiterals: outside protocol.go the server names zot/*
// methods only through the constants.
func TestContractNoMethodLiterals(t *testing.T) {
	names := goMethods()
	fset := token.NewFileSet()
	files, _ := os.ReadDir(".")
	for _, f := range files {
		n := f.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || n == "protocol.go" {
			continue
		}
		file, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(x ast.Node) bool {
			if lit, ok := x.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					if _, isMethod := names[s]; isMethod {
						t.Errorf("%s: the method %q spelled out; use its constant from protocol.go", fset.Position(lit.Pos()), s)
					}
				}
			}
			return true
		})
	}
}

// wireTypes are the named params and results of the contract, by the
// name lsp_ext.ts and protocol.lua give them.
var wireTypes = map[string]reflect.Type{
	"PromptParams":            reflect.TypeOf(PromptParams{}),
	"ImageParam":              reflect.TypeOf(ImageParam{}),
	"PromptContext":           reflect.TypeOf(PromptContext{}),
	"Attachment":              reflect.TypeOf(Attachment{}),
	"AttachedDiagnostic":      reflect.TypeOf(AttachedDiagnostic{}),
	"ResendParams":            reflect.TypeOf(ResendParams{}),
	"ApplyCodeParams":         reflect.TypeOf(ApplyCodeParams{}),
	"ApplyCodeResult":         reflect.TypeOf(ApplyCodeResult{}),
	"MCPResourcesResult":      reflect.TypeOf(MCPResourcesResult{}),
	"MCPResource":             reflect.TypeOf(MCPResource{}),
	"RunStarted":              reflect.TypeOf(RunStarted{}),
	"AbortParams":             reflect.TypeOf(AbortParams{}),
	"UserBashParams":          reflect.TypeOf(UserBashParams{}),
	"AbortResult":             reflect.TypeOf(AbortResult{}),
	"StateResult":             reflect.TypeOf(StateResult{}),
	"MessagesResult":          reflect.TypeOf(MessagesResult{}),
	"ClearResult":             reflect.TypeOf(ClearResult{}),
	"ModelsResult":            reflect.TypeOf(ModelsResult{}),
	"SetModelParams":          reflect.TypeOf(SetModelParams{}),
	"SetModelResult":          reflect.TypeOf(SetModelResult{}),
	"SetReasoningParams":      reflect.TypeOf(SetReasoningParams{}),
	"SetReasoningResult":      reflect.TypeOf(SetReasoningResult{}),
	"SetPermissionModeParams": reflect.TypeOf(SetPermissionModeParams{}),
	"SetPermissionModeResult": reflect.TypeOf(SetPermissionModeResult{}),
	"PingResult":              reflect.TypeOf(PingResult{}),
	"CommandsResult":          reflect.TypeOf(CommandsResult{}),
	"CommandInfo":             reflect.TypeOf(CommandInfo{}),
	"Shortcut":                reflect.TypeOf(Shortcut{}),
	"CommandParams":           reflect.TypeOf(CommandParams{}),
	"CommandResult":           reflect.TypeOf(CommandResult{}),
	"CommandCompleteParams":   reflect.TypeOf(CommandCompleteParams{}),
	"CommandCompleteResult":   reflect.TypeOf(CommandCompleteResult{}),
	"CommandCompletion":       reflect.TypeOf(CommandCompletion{}),
	"SkillsResult":            reflect.TypeOf(SkillsResult{}),
	"SkillInfo":               reflect.TypeOf(skills.Skill{}),
	"SessionsResult":          reflect.TypeOf(SessionsResult{}),
	"SessionInfo":             reflect.TypeOf(session.Info{}),
	"ResumeParams":            reflect.TypeOf(ResumeParams{}),
	"SessionResult":           reflect.TypeOf(SessionResult{}),
	"ExtensionStatus":         reflect.TypeOf(ExtensionStatus{}),
	"ExtensionsResult":        reflect.TypeOf(ExtensionsResult{}),
	"MCPServerStatus":         reflect.TypeOf(MCPServerStatus{}),
	"MCPResult":               reflect.TypeOf(MCPResult{}),
	"MCPRestartParams":        reflect.TypeOf(MCPRestartParams{}),
	"Panel":                   reflect.TypeOf(Panel{}),
	"PanelCloseParams":        reflect.TypeOf(PanelCloseParams{}),
	"PanelKeyParams":          reflect.TypeOf(PanelKeyParams{}),
	"NotifyParams":            reflect.TypeOf(NotifyParams{}),
	"ReviewEditParams":        reflect.TypeOf(ReviewEditParams{}),
	"ReviewEditResult":        reflect.TypeOf(ReviewEditResult{}),
	"SaveParams":              reflect.TypeOf(SaveParams{}),
	"SaveResult":              reflect.TypeOf(SaveResult{}),
	"SaveFailed":              reflect.TypeOf(SaveFailed{}),
	"RebasedDoc":              reflect.TypeOf(RebasedDoc{}),
	"UIRequestParams":         reflect.TypeOf(UIRequestParams{}),
	"UIRequestResult":         reflect.TypeOf(UIRequestResult{}),
	"UIStatusParams":          reflect.TypeOf(UIStatusParams{}),
	"UIWidgetParams":          reflect.TypeOf(UIWidgetParams{}),
	"InputSetParams":          reflect.TypeOf(InputSetParams{}),
	"InputGetParams":          reflect.TypeOf(InputGetParams{}),
	"InputGetResult":          reflect.TypeOf(InputGetResult{}),
	"ServerInfo":              reflect.TypeOf(ZotInfo{}), // experimental.zot in initialize's result
	"CheckpointsResult":       reflect.TypeOf(CheckpointsResult{}),
	"CheckpointInfo":          reflect.TypeOf(CheckpointInfo{}),
	"CheckpointRestoreParams": reflect.TypeOf(CheckpointRestoreParams{}),
	"CheckpointRestoreResult": reflect.TypeOf(CheckpointRestoreResult{}),
	"CheckpointFileChange":    reflect.TypeOf(CheckpointFileChange{}),
	"CheckpointDiffParams":    reflect.TypeOf(CheckpointDiffParams{}),
	"CheckpointDiffResult":    reflect.TypeOf(CheckpointDiffResult{}),
	"CheckpointFileDiff":      reflect.TypeOf(CheckpointFileDiff{}),
	"SessionForkParams":       reflect.TypeOf(SessionForkParams{}),
	"SessionForkResult":       reflect.TypeOf(SessionForkResult{}),
	"SessionChangedParams":    reflect.TypeOf(SessionChangedParams{}),
}

// goOnlyFields are accepted by the server but not advertised to clients.
var goOnlyFields = map[string]bool{
	"ImageParam.mime_type": true, // zot rpc's spelling of mimeType
}

// jsonFields is a struct's JSON field names, embedded structs flattened.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// tsFields reads the fields of each `export interface Name { … }`.
func tsFields(src string) map[string][]string {
	out := map[string][]string{}
	re := regexp.MustCompile(`(?ms)^export interface (\w+) \{\n(.*?)^\}`)
	field := regexp.MustCompile(`(?m)^    (\w+)\??:`)
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		out[m[1]] = []string{}
		for _, f := range field.FindAllStringSubmatch(m[2], -1) {
			out[m[1]] = append(out[m[1]], f[1])
		}
	}
	return out
}

// luaFields reads the fields of each `---@class zot.Name`.
func luaFields(src string) map[string][]string {
	out := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(src, "\n") {
		if c, ok := strings.CutPrefix(line, "---@class zot."); ok {
			cur = strings.Fields(c)[0]
			out[cur] = []string{}
			continue
		}
		if f, ok := strings.CutPrefix(line, "---@field "); ok && cur != "" {
			out[cur] = append(out[cur], strings.TrimSuffix(strings.Fields(f)[0], "?"))
			continue
		}
		cur = ""
	}
	return out
}

func diffFields(typ string, want, got []string) []string {
	in := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, f := range list {
			m[f] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var out []string
	for f := range w {
		if !g[f] && !goOnlyFields[typ+"."+f] {
			out = append(out, "lacks "+f)
		}
	}
	for f := range g {
		if !w[f] {
			out = append(out, "has "+f+", which the server does not")
		}
	}
	sort.Strings(out)
	return out
}

func TestContractFieldsAgree(t *testing.T) {
	ts, lua := tsFields(readFile(t, tsPath)), luaFields(readFile(t, luaPath))
	for name, typ := range wireTypes {
		want := jsonFields(typ)
		for side, fields := range map[string]map[string][]string{"lsp_ext.ts": ts, "protocol.lua": lua} {
			got, ok := fields[name]
			if !ok {
				t.Errorf("%s declares no type %s (server: %v)", side, name, want)
				continue
			}
			for _, d := range diffFields(name, want, got) {
				t.Errorf("%s: %s %s", side, name, d)
			}
		}
	}
}

// TestContractTypesListed: every struct of protocol.go is compared above.
func TestContractTypesListed(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "protocol.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, typ := range wireTypes {
		known[typ.Name()] = true
	}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			if _, isStruct := ts.Type.(*ast.StructType); isStruct && ts.Name.IsExported() && !known[ts.Name.Name] {
				t.Errorf("protocol.go: %s is not in wireTypes (contract_test.go), so no test compares it with lsp_ext.ts and protocol.lua", ts.Name.Name)
			}
		}
	}
}

func TestContractVersionsAgree(t *testing.T) {
	doc := readFile(t, docPath)
	m := regexp.MustCompile(`Protocol version: \*\*(\d+)\*\*`).FindStringSubmatch(doc)
	if m == nil || m[1] != strconv.Itoa(ProtocolVersion) {
		t.Errorf("docs/protocol.md: protocol version %v, server %d", m, ProtocolVersion)
	}
	m = regexp.MustCompile(`(?m)^export const PROTOCOL_VERSION = (\d+);`).FindStringSubmatch(readFile(t, tsPath))
	if m == nil || m[1] != strconv.Itoa(ProtocolVersion) {
		t.Errorf("lsp_ext.ts: PROTOCOL_VERSION %v, server %d", m, ProtocolVersion)
	}
	m = regexp.MustCompile(`(?m)^M\.version = (\d+)$`).FindStringSubmatch(readFile(t, luaPath))
	if m == nil || m[1] != strconv.Itoa(ProtocolVersion) {
		t.Errorf("protocol.lua: M.version %v, server %d", m, ProtocolVersion)
	}
}

// TestContractClientRevisions: each client states the protocol revision
// it needs (the version handshake, docs/protocol.md "initialize"), and no
// client needs a revision this server does not implement — else every
// client would refuse the zot it ships with.
func TestContractClientRevisions(t *testing.T) {
	for _, c := range []struct{ file, re string }{
		{tsPath, `(?m)^export const PROTOCOL_REVISION = (\d+);`},
		{luaPath, `(?m)^M\.revision = (\d+)$`},
	} {
		m := regexp.MustCompile(c.re).FindStringSubmatch(readFile(t, c.file))
		if m == nil {
			t.Errorf("%s states no protocol revision (%s)", c.file, c.re)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > ProtocolRevision {
			t.Errorf("%s needs protocol revision %d; the server implements %d (ProtocolRevision, server/protocol.go): "+
				"a client may need only what the server has", c.file, n, ProtocolRevision)
		}
	}
}

// changelogHeading starts the last section of docs/protocol.md; the
// digest covers everything before it.
const changelogHeading = "\n## Changelog\n"

// docDigest is the first 12 hex digits of the SHA-256 of the document
// before its changelog.
func docDigest(doc string) string {
	if i := strings.Index(doc, changelogHeading); i >= 0 {
		doc = doc[:i]
	}
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])[:12]
}

// TestContractRevisionNoted: each change to docs/protocol.md comes with a
// protocol revision: the header's revision and ProtocolRevision agree,
// the changelog has one line per revision, and the newest line carries the
// digest of the document as it is now.
func TestContractRevisionNoted(t *testing.T) {
	doc := readFile(t, docPath)
	m := regexp.MustCompile(`revision \*\*(\d+)\*\*`).FindStringSubmatch(doc)
	if m == nil || m[1] != strconv.Itoa(ProtocolRevision) {
		t.Fatalf("docs/protocol.md: revision %v in the header, ProtocolRevision is %d (server/protocol.go)", m, ProtocolRevision)
	}
	i := strings.Index(doc, changelogHeading)
	if i < 0 {
		t.Fatal("docs/protocol.md has no \"## Changelog\" section (its last)")
	}
	lines := regexp.MustCompile("(?m)^- r(\\d+) `([0-9a-f]{12})` .+$").FindAllStringSubmatch(doc[i:], -1)
	for n, l := range lines {
		if l[1] != strconv.Itoa(n+1) {
			t.Fatalf("docs/protocol.md changelog: line %d is revision %s; one line per revision, r1 first", n+1, l[1])
		}
	}
	if len(lines) != ProtocolRevision {
		t.Fatalf("docs/protocol.md changelog has %d revisions, ProtocolRevision is %d", len(lines), ProtocolRevision)
	}
	if got, want := lines[len(lines)-1][2], docDigest(doc); got != want {
		t.Fatalf("docs/protocol.md changed since revision %d (digest %s, now %s): add a changelog line \"- r%d `%s` what changed\", "+
			"and set the header's revision and ProtocolRevision (server/protocol.go) to %d",
			ProtocolRevision, got, want, ProtocolRevision+1, want, ProtocolRevision+1)
	}
}

// TestContractClientsUseTheirDeclarations: the Neovim modules name methods
// only through zot.protocol (and only names it declares), and the VS Code
// sources only through lsp_ext.ts.
func TestContractClientsUseTheirDeclarations(t *testing.T) {
	lua := readFile(t, luaPath)
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?ms)^M\.(\w+) = \{\n(.*?)^\}`).FindAllStringSubmatch(lua, -1) {
		for _, e := range regexp.MustCompile(`(?m)^\s+(\w+) = `).FindAllStringSubmatch(m[2], -1) {
			declared[m[1]+"."+e[1]] = true
		}
	}
	if len(declared) < 30 {
		t.Fatalf("protocol.lua declares only %d names", len(declared))
	}
	methodLiteral := regexp.MustCompile(`['"](zot|workspace|window|textDocument|\$)/[\w/$]+['"]`)
	use := regexp.MustCompile(`\bP\.(\w+)\.(\w+)`)
	dir := "../editors/nvim/lua/zot"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "protocol.lua" || !strings.HasSuffix(e.Name(), ".lua") {
			continue
		}
		for i, line := range strings.Split(readFile(t, dir+"/"+e.Name()), "\n") {
			code, _, _ := strings.Cut(line, "--")
			if m := methodLiteral.FindString(code); m != "" {
				t.Errorf("%s:%d: the method %s spelled out; use zot.protocol", e.Name(), i+1, m)
			}
			for _, u := range use.FindAllStringSubmatch(code, -1) {
				if !declared[u[1]+"."+u[2]] {
					t.Errorf("%s:%d: P.%s.%s is not declared in protocol.lua", e.Name(), i+1, u[1], u[2])
				}
			}
		}
	}
	tsDir := "../editors/vscode/src"
	tsLiteral := regexp.MustCompile("[\"'`]zot/[\\w/]+[\"'`]")
	err = filepathWalk(tsDir, func(path string) {
		if strings.HasSuffix(path, "/lsp_ext.ts") || !strings.HasSuffix(path, ".ts") {
			return
		}
		for i, line := range strings.Split(readFile(t, path), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if m := tsLiteral.FindString(code); m != "" {
				t.Errorf("%s:%d: the method %s spelled out; use lsp_ext.ts", path, i+1, m)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func filepathWalk(root string, f func(path string)) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			f(path)
		}
		return nil
	})
}

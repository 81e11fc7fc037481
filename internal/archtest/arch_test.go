package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
)

// module is the module path; the table names the module's packages
// relative to it ("store", "cmd/skillgate").
const module = "github.com/skillgate/skillgate"

// A rule is one "never" of ARCHITECTURE.md or of a package's doc comment,
// about the non-test code of pkg (tests may import what they like).
//
// Names in never and only are the module's packages, relative ("skill"), or
// external modules' ("github.com/aws/..."); a name ending in "/..." stands
// for the package and every package below it.
type rule struct {
	pkg string // module-relative; "cmd/..." for every command
	// never: packages pkg depends on in no way, directly or not.
	never []string
	// noProject: pkg imports no package of the module.
	noProject bool
	// only: when not nil, the only packages pkg imports directly besides
	// the standard library.
	only []string
	// std: when not nil, the only packages of the standard library pkg
	// imports.
	std []string
	// pure: pkg does no I/O: it imports none of ioPackages.
	pure bool
	// importers: when not nil, the only packages whose code (not their
	// tests) may import pkg; testKits stands for the test kits.
	importers []string
	// where the rule is written.
	why string
}

// An external rule confines a package that is not the module's (of the
// standard library, or a module's, with "/...") to the packages that may
// import it directly.
type external struct {
	pkg string
	in  []string // module-relative
	why string
}

// testKits are the packages only tests (and other test kits) import.
var testKits = []string{
	"internal/mcptest", "internal/miniotest", "internal/natstest", "internal/syncbuf",
	"internal/testkit", "internal/testkit/gatewaytest", "internal/testkit/storetest", "internal/tlstest", "internal/unprivtest",
}

// ioPackages are what a pure package never imports: files, processes,
// the network, system calls.
var ioPackages = []string{"os", "os/exec", "os/signal", "net", "net/http", "io/ioutil", "syscall", "log"}

// The page: ARCHITECTURE.md ("skillgate — the house") beside the checkout.
const page = "ARCHITECTURE.md"

var rules = []rule{
	// ---- the data flow, as the page draws it ----
	{pkg: "protocol", pure: true,
		never: []string{"skill", "eligibility", "promptbuild", "store", "catalog", "gateway", "node", "report"},
		why:   page + ` ("protocol: … No I/O.") and protocol's doc comment ("never imports skill, eligibility, promptbuild, store, catalog, gateway or node")`},
	{pkg: "store", noProject: true,
		why: page + ` ("store: keys and bytes … Imports nothing of the project.") and store's doc comment ("it imports nothing of the project")`},
	{pkg: "catalog", only: []string{"store", "skill", "governance", "golang.org/x/sync/errgroup"},
		never: []string{"eligibility", "promptbuild", "gateway", "node", "cmd/...", "report", "config"},
		why:   page + ` ("catalog: classifies keys, builds agent views …, loads skills"; issue 25: "the one that may import skill and governance") and catalog's doc comment ("Of the project it is the one package that imports a store … together with skill … and governance"; "must never import eligibility, promptbuild, report, config or gateway, nor node or a cmd package")`},
	{pkg: "skill", pure: true,
		never: []string{"protocol", "eligibility", "promptbuild", "store", "catalog", "gateway", "governance"},
		why:   page + ` ("skill: … knows nothing of hosts or stores") and skill's doc comment ("never imports protocol, eligibility, promptbuild, store, catalog or gateway")`},
	{pkg: "governance", pure: true,
		never: []string{"gateway", "store", "catalog", "eligibility", "scanners", "config"},
		why:   page + ` ("governance: pure") and the doc comments of governance ("must never import gateway, store, catalog or eligibility") and scanners ("governance never imports scanners")`},
	{pkg: "scanners",
		never: []string{"gateway", "config", "catalog", "store", "eligibility"},
		why:   page + ` ("scanners … turns their verdicts … into findings for governance to combine") and scanners' doc comment ("scanners never imports gateway, config, catalog or a store")`},
	{pkg: "eligibility", pure: true,
		never: []string{"gateway", "store", "catalog", "promptbuild", "report", "cmd/..."},
		why:   page + ` ("eligibility: … Never imports gateway, store or catalog.") and eligibility's doc comment ("never imports promptbuild, report, store, catalog, gateway or the commands")`},
	{pkg: "report", pure: true,
		never: []string{"gateway", "store", "catalog", "cmd/..."},
		why:   page + ` ("report: verdicts to the report") and report's doc comment ("never imports gateway, store, catalog or the commands …; it does no I/O")`},
	{pkg: "promptbuild", pure: true,
		never: []string{"eligibility", "report", "store", "catalog", "gateway"},
		why:   page + ` ("promptbuild: … plain entries to budgeted bytes (no verdicts)") and promptbuild's doc comment ("never imports eligibility (nor report, store, catalog or gateway)")`},
	{pkg: "config", pure: true,
		never: []string{"gateway", "store", "catalog", "eligibility", "node"},
		why:   page + ` ("config (one declarative settings table; pure)") and config's doc comment ("The package does no I/O")`},
	{pkg: "gateway",
		never: []string{"node", "cmd/..."},
		why:   `gateway's doc comment ("must never import node or a cmd package … nor a storage SDK or a messaging client directly")`},
	{pkg: "mcp", noProject: true,
		never: []string{"gateway"},
		why:   page + ` ("mcp: never imports gateway") and mcp's doc comment`},
	{pkg: "console", noProject: true,
		why: page + ` ("console (embedded assets, public JSON API only)") and console's doc comment ("imports nothing of the gateway")`},
	{pkg: "node",
		never: []string{"gateway", "store", "catalog", "eligibility", "skill", "github.com/aws/..."},
		only:  []string{"protocol", "api", "internal/cli", "internal/version", "github.com/coder/websocket"},
		why:   page + ` ("node: the node agent; never links storage, AWS or the gateway") and node's doc comment ("never imports gateway, store, catalog, eligibility, skill or an AWS package … it imports protocol, api …, and of this module's internals only cli … and version")`},
	{pkg: "api", only: []string{"protocol"}, pure: true,
		why: `api's doc comment ("It imports only protocol … and the standard library, and does no I/O, so that a client imports the shapes without the gateway")`},

	// ---- the commands ----
	{pkg: "cmd/skillgate", never: []string{"node"},
		why: `cmd/skillgate's doc comment ("it never imports node, whose binary must stay free of them")`},
	{pkg: "cmd/skillgate-node",
		never: []string{"gateway", "store", "catalog", "eligibility", "github.com/aws/..."},
		why:   `cmd/skillgate-node's doc comment ("Like node, it never imports gateway, store, catalog, eligibility or an AWS package")`},
	{pkg: "cmd/skillgate-fleet",
		never: []string{"gateway", "store", "catalog", "eligibility"},
		why:   `cmd/skillgate-fleet's doc comment ("it never imports gateway, store, catalog or eligibility")`},
	{pkg: "internal/seed", never: []string{"gateway", "eligibility", "node"},
		why: `internal/seed's doc comment ("it never imports gateway, eligibility or node")`},

	// ---- the leaves every binary links ----
	{pkg: "internal/cli", only: []string{"protocol", "internal/textsafe", "github.com/tailscale/hujson"},
		never: []string{"gateway", "store", "catalog", "eligibility", "node", "github.com/aws/..."},
		why:   `internal/cli's doc comment ("It may import only the standard library, protocol, internal/textsafe … and github.com/tailscale/hujson")`},
	{pkg: "internal/logging", only: []string{"github.com/lmittmann/tint", "github.com/mattn/go-isatty"},
		why: `internal/logging's doc comment ("It imports only the standard library, tint and go-isatty … never a skillgate package")`},
	{pkg: "internal/version", only: []string{}, importers: []string{"cmd/...", "node"},
		why: `internal/version's doc comment ("It imports only the standard library, and nothing imports it but the cmd packages and node")`},
	{pkg: "internal/bitset", only: []string{}, std: []string{"math/bits"},
		why: `internal/bitset's doc comment ("imports nothing but math/bits")`},
	{pkg: "internal/ident", only: []string{"internal/textsafe"},
		why: `internal/ident's doc comment ("Of the project it imports only internal/textsafe … it must stay a leaf")`},
	{pkg: "internal/textsafe", only: []string{}, pure: true,
		why: `internal/textsafe's doc comment ("It imports only the standard library, so that every layer may use it")`},
	{pkg: "internal/jsonscan", noProject: true,
		why: `internal/jsonscan's doc comment ("It imports nothing of the project")`},
	{pkg: "publisher", only: []string{"github.com/hiddeco/sshsig", "golang.org/x/crypto/ssh"},
		why: `publisher's doc comment ("It imports no package of the project … it must never import any of them")`},
	{pkg: "internal/gobin", only: []string{},
		why: `internal/gobin's doc comment ("It imports only the standard library")`},
	{pkg: "internal/govbench", only: []string{"governance", "catalog", "store", "skill", "internal/corpus"},
		importers: []string{"internal/govbench/cmd"},
		why:       `internal/govbench's doc comment ("Of the project it imports …; nothing but its command and tests imports it")`},

	// ---- the test kits ----
	{pkg: "internal/testkit", importers: testKits,
		why: page + ` ("test kits in internal/testkit")`},
	{pkg: "internal/testkit/gatewaytest", importers: testKits,
		why: page + ` ("test kits in internal/testkit")`},
	{pkg: "internal/testkit/storetest", importers: testKits,
		why: page + ` ("test kits in internal/testkit")`},
	{pkg: "internal/syncbuf", only: []string{}, importers: testKits,
		why: `internal/syncbuf's doc comment ("imported by tests and their helper packages only, and imports only the standard library")`},
	{pkg: "internal/unprivtest", only: []string{}, importers: testKits,
		why: `internal/unprivtest's doc comment ("Only tests import it. It imports only the standard library.")`},
	{pkg: "internal/miniotest", only: []string{"internal/gobin", "internal/syncbuf", "internal/testkit", "github.com/aws/..."}, importers: testKits,
		why: `internal/miniotest's doc comment ("Only tests import it … imports of skillgate only the leaf helpers gobin and syncbuf and testkit's process launcher")`},
	{pkg: "internal/natstest", only: []string{"internal/gobin", "internal/syncbuf", "internal/testkit", "github.com/nats-io/..."}, importers: testKits,
		why: `internal/natstest's doc comment ("Only tests import it; of skillgate it imports only the leaf helpers gobin and syncbuf and testkit's process launcher …")`},
	{pkg: "internal/tlstest", importers: testKits,
		why: `internal/tlstest's doc comment ("Nothing here is for production use")`},
	{pkg: "internal/mcptest", importers: testKits,
		why: `internal/mcptest's doc comment ("for the MCP tests of the gateway … and of skillgate mcp")`},

	// ---- who links the gateway ----
	{pkg: "gateway", importers: []string{"cmd/skillgate", "internal/testkit/gatewaytest"},
		why: `cmd/skillgate's doc comment ("It is the one binary that links the gateway"; the test kit that runs a gateway in the tests' process links it for tests only)`},
}

// externals confine packages of the standard library and of other modules
// to the packages that may import them.
var externals = []external{
	{pkg: "github.com/nats-io/...", in: []string{"cluster", "internal/natstest"},
		why: page + ` ("cluster: … NATS lives only here") and gateway's doc comment ("nor … a messaging client directly")`},
	{pkg: "github.com/aws/...", in: []string{"store", "internal/miniotest"},
		why: page + ` ("store: keys and bytes from S3/R2/MinIO") and gateway's doc comment ("nor a storage SDK … directly: storage is a store.Store")`},
	{pkg: "os/exec", in: append([]string{"scanners", "node", "internal/corpus", "internal/gobin", "examples/scanners/yara"}, testKits...),
		why: page + ` ("scanners: runs external scanner processes … The only process-running code there is"; node asks the login shell for its PATH, see docs/decisions.md; the rest are test kits and tools)`},
	{pkg: "testing", in: testKits,
		why: `only test kits hold test helpers (` + page + `: "test kits in internal/testkit")`},
}

// known are the nevers the code breaks today, each with the work that
// ends it. A break listed here is reported, not failed; one that no longer
// happens fails the test until its line goes.
var known = []struct{ pkg, dep, why string }{}

// planned are packages the page names that do not exist yet; their rules
// wait for them. Every other rule's package must exist.
var planned = []string{}

// listed is one package of `go list -json`.
type listed struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

var (
	listOnce sync.Once
	listPkgs map[string]*listed
	listErr  error
)

// packages lists the module's packages, with their direct imports and
// every dependency, as the go command sees them for this platform.
func packages(t *testing.T) map[string]*listed {
	t.Helper()
	listOnce.Do(func() {
		cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Standard,Imports,Deps,Error", "./...")
		cmd.Dir = testkit.ModuleRoot(t)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			listErr = fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
			return
		}
		listPkgs = map[string]*listed{}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			p := new(listed)
			if err := dec.Decode(p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				listErr = err
				return
			}
			if p.Error != nil {
				listErr = fmt.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
				return
			}
			listPkgs[p.ImportPath] = p
		}
	})
	if listErr != nil {
		t.Fatal(listErr)
	}
	return listPkgs
}

var (
	stdOnce sync.Once
	stdSet  map[string]bool
	stdErr  error
)

// standard returns the packages of the standard library.
func standard(t *testing.T) map[string]bool {
	t.Helper()
	stdOnce.Do(func() {
		out, err := exec.Command("go", "list", "std").Output()
		if err != nil {
			stdErr = fmt.Errorf("go list std: %v", err)
			return
		}
		stdSet = map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			stdSet[p] = true
		}
	})
	if stdErr != nil {
		t.Fatal(stdErr)
	}
	return stdSet
}

// full is the import path of a name of the table.
func full(name string) string {
	first, _, _ := strings.Cut(name, "/")
	if strings.Contains(first, ".") {
		return name
	}
	return module + "/" + name
}

// matches says whether the import path p is name, or under it for a name
// ending in "/...".
func matches(p, name string) bool { return matchPath(p, full(name)) }

// matchPath says whether the import path p is pattern, or under it for a
// pattern ending in "/...".
func matchPath(p, pattern string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	return p == pattern
}

func matchesAny(p string, names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return matches(p, n) })
}

// rel is an import path without the module's prefix.
func rel(p string) string {
	if r, ok := strings.CutPrefix(p, module+"/"); ok {
		return r
	}
	return p
}

func isProject(p string) bool { return p == module || strings.HasPrefix(p, module+"/") }

// violation is one broken rule.
type violation struct{ pkg, dep, msg string }

// check returns every broken rule of the table.
func check(t *testing.T, pkgs map[string]*listed) []violation {
	var out []violation
	add := func(pkg, dep, format string, args ...any) {
		out = append(out, violation{rel(pkg), rel(dep), fmt.Sprintf(format, args...)})
	}
	stdlib := standard(t)
	for _, r := range rules {
		p := pkgs[full(r.pkg)]
		if p == nil {
			continue // planned (TestRulesNameRealPackages says so)
		}
		for _, dep := range p.Deps {
			if matchesAny(dep, r.never) {
				via := "directly"
				if !slices.Contains(p.Imports, dep) {
					via = "indirectly"
				}
				add(p.ImportPath, dep, "%s imports %s (%s): never, per %s", r.pkg, rel(dep), via, r.why)
			}
		}
		for _, imp := range p.Imports {
			switch {
			case r.noProject && isProject(imp):
				add(p.ImportPath, imp, "%s imports %s: it imports nothing of the project, per %s", r.pkg, rel(imp), r.why)
			case r.only != nil && !stdlib[imp] && !matchesAny(imp, r.only):
				add(p.ImportPath, imp, "%s imports %s: it imports only the standard library and %q, per %s", r.pkg, rel(imp), r.only, r.why)
			case r.std != nil && stdlib[imp] && !slices.Contains(r.std, imp):
				add(p.ImportPath, imp, "%s imports %s: of the standard library it imports only %q, per %s", r.pkg, imp, r.std, r.why)
			case r.pure && slices.Contains(ioPackages, imp):
				add(p.ImportPath, imp, "%s imports %s: it does no I/O, per %s", r.pkg, imp, r.why)
			}
		}
		if r.importers == nil {
			continue
		}
		for _, q := range pkgs {
			if slices.Contains(q.Imports, p.ImportPath) && !matchesAny(q.ImportPath, r.importers) {
				add(q.ImportPath, p.ImportPath, "%s imports %s: only %q may, per %s", rel(q.ImportPath), r.pkg, r.importers, r.why)
			}
		}
	}
	for _, e := range externals {
		for _, q := range pkgs {
			for _, imp := range q.Imports {
				if matchPath(imp, e.pkg) && !matchesAny(q.ImportPath, e.in) {
					add(q.ImportPath, imp, "%s imports %s: only %q may, per %s", rel(q.ImportPath), imp, e.in, e.why)
				}
			}
		}
	}
	return out
}

// TestArchitecture holds the code to the table: every never of the
// architecture page and of the packages' doc comments.
func TestArchitecture(t *testing.T) {
	pkgs := packages(t)
	seen := map[[2]string]bool{}
	for _, v := range check(t, pkgs) {
		i := slices.IndexFunc(known, func(k struct{ pkg, dep, why string }) bool { return k.pkg == v.pkg && k.dep == v.dep })
		if i >= 0 {
			seen[[2]string{v.pkg, v.dep}] = true
			t.Logf("known: %s (%s)", v.msg, known[i].why)
			continue
		}
		t.Error(v.msg)
	}
	for _, k := range known {
		if !seen[[2]string{k.pkg, k.dep}] {
			t.Errorf("%s no longer imports %s: remove the line of known (%s)", k.pkg, k.dep, k.why)
		}
	}
}

// TestRulesNameRealPackages: a rule about a package that is neither in the
// module nor planned is a rule nobody checks (a package renamed under it).
func TestRulesNameRealPackages(t *testing.T) {
	pkgs := packages(t)
	names := map[string]bool{}
	for _, r := range rules {
		names[r.pkg] = true
		names = addAll(names, r.importers, r.only)
	}
	for _, e := range externals {
		names = addAll(names, e.in)
	}
	for n := range names {
		if !isProject(full(n)) {
			continue
		}
		if strings.HasSuffix(n, "/...") {
			prefix := strings.TrimSuffix(n, "/...")
			if !slices.ContainsFunc(slices.Collect(maps.Keys(pkgs)), func(p string) bool { return matches(p, prefix+"/...") }) {
				t.Errorf("the table names %s, which holds no package", n)
			}
			continue
		}
		if pkgs[full(n)] == nil && !slices.Contains(planned, n) {
			t.Errorf("the table names %s, which is no package of the module: renamed? (planned packages: %q)", n, planned)
		}
		if pkgs[full(n)] != nil && slices.Contains(planned, n) {
			t.Logf("%s exists now: take it out of planned", n)
		}
	}
}

// TestCheckFindsBreaks: the checker itself, on a made-up module that breaks
// each kind of rule once.
func TestCheckFindsBreaks(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	pkgs := map[string]*listed{
		m("protocol"):         {ImportPath: m("protocol"), Imports: []string{"os", m("skill")}, Deps: []string{"os", m("skill")}},
		m("skill"):            {ImportPath: m("skill"), Imports: []string{m("internal/ident")}, Deps: []string{m("internal/ident")}},
		m("internal/ident"):   {ImportPath: m("internal/ident")},
		m("internal/version"): {ImportPath: m("internal/version")},
		m("gateway"):          {ImportPath: m("gateway"), Imports: []string{m("internal/version"), "github.com/nats-io/nats.go"}, Deps: []string{m("internal/version"), "github.com/nats-io/nats.go"}},
		m("config"):           {ImportPath: m("config"), Imports: []string{"testing"}, Deps: []string{"testing"}},
	}
	var got []string
	for _, v := range check(t, pkgs) {
		got = append(got, v.pkg+" → "+v.dep)
	}
	slices.Sort(got)
	want := []string{
		"config → testing",                     // externals: the standard library
		"gateway → github.com/nats-io/nats.go", // externals
		"gateway → internal/version",           // importers
		"protocol → os",                        // pure
		"protocol → skill",                     // never
	}
	if !slices.Equal(got, want) {
		t.Errorf("check found %q, want %q", got, want)
	}
}

func addAll(m map[string]bool, lists ...[]string) map[string]bool {
	for _, l := range lists {
		for _, n := range l {
			m[n] = true
		}
	}
	return m
}

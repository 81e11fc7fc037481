package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
)

// maxLines is the length past which a function is split, or kept with a
// reason in docs/decisions.md.
const maxLines = 80

// decisionsTable is the section of docs/decisions.md that names the
// functions kept over maxLines.
const decisionsTable = "### Functions over 80 lines"

// longFunc is a function of the module's code (not its tests) over
// maxLines, counted from its func line to its closing brace.
type longFunc struct {
	file  string // relative to the module root, slash-separated
	name  string // Recv.Name for a method
	line  int
	lines int
}

// longFuncs lists the functions over maxLines of the module's non-test Go
// files.
func longFuncs(t *testing.T, root string) []longFunc {
	t.Helper()
	var out []longFunc
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			if n := end - start + 1; n > maxLines {
				out = append(out, longFunc{filepath.ToSlash(rel), funcName(fd), start, n})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// funcName is Name, or Recv.Name for a method (the receiver's type without
// pointer or type parameters).
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

var keptRow = regexp.MustCompile("^\\| `([^`]+\\.go)` `([^`]+)` \\| (.+) \\|$")

// keptFuncs reads the table of docs/decisions.md: file, function and why.
func keptFuncs(t *testing.T, root string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "decisions.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+decisionsTable+"\n")
	if !ok {
		t.Fatalf("docs/decisions.md has no section %q", decisionsTable)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	kept := map[string]string{}
	for l := range strings.Lines(section) {
		if m := keptRow.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			kept[m[1]+" "+m[2]] = m[3]
		}
	}
	if len(kept) == 0 {
		t.Fatalf("docs/decisions.md, %q: no row | `FILE.go` `FUNC` | WHY |", decisionsTable)
	}
	return kept
}

// TestLongFunctions: every function over 80 lines is named in
// docs/decisions.md with the reason it stays whole, and every function
// named there is still over 80 lines. Run with -v for the list.
func TestLongFunctions(t *testing.T) {
	root := testkit.ModuleRoot(t)
	kept := keptFuncs(t, root)
	funcs := longFuncs(t, root)
	slices.SortFunc(funcs, func(a, b longFunc) int { return b.lines - a.lines })
	seen := map[string]bool{}
	for _, f := range funcs {
		key := f.file + " " + f.name
		seen[key] = true
		t.Logf("%4d lines  %s:%d  %s", f.lines, f.file, f.line, f.name)
		if kept[key] == "" {
			t.Errorf("%s:%d: %s is %d lines: split it, or name it with the reason it stays whole in docs/decisions.md (%s)",
				f.file, f.line, f.name, f.lines, decisionsTable)
		}
	}
	for key := range kept {
		if !seen[key] {
			t.Errorf("docs/decisions.md (%s) names %s, which is no longer over %d lines (or is gone): take its row out", decisionsTable, key, maxLines)
		}
	}
	t.Logf("%d functions over %d lines", len(funcs), maxLines)
}

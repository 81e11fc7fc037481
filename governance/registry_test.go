package governance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// docs/decisions.md's rule table is the registry's.
func TestRuleTable(t *testing.T) {
	const (
		path  = "../docs/decisions.md"
		begin = "<!-- rule table: generated from governance's registry; go test ./governance -run TestRuleTable -update -->\n"
		end   = "<!-- end of rule table -->"
	)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no rule table between %q and %q", path, begin, end)
	}
	want := ruleTable()
	if got := doc[i+len(begin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's rule table differs from the registry; run go test ./governance -run TestRuleTable -update\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// Every rule's example is reported by its rule, at the rule's severity.
func TestRuleExamples(t *testing.T) {
	for _, r := range Rules() {
		rep := r.Example.Report()
		if got := severityOf(rep, r.ID); got != r.Severity {
			t.Errorf("%s: its example reports %q, want %q: %+v", r.ID, got, r.Severity, rep.Findings)
		}
	}
}

// The registry holds every rule id the package declares, once each, with
// a category, a severity, a score class, a description and an example.
func TestRuleIDs(t *testing.T) {
	declared := map[string]string{} // id → constant
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for k, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Rule") || k >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[k].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					id, _ := strconv.Unquote(lit.Value)
					declared[id] = name.Name
				}
			}
			return true
		})
	}
	cats := map[string]bool{"execution": true, "exfiltration": true, "credentials": true, "persistence": true, "tampering": true,
		"evasion": true, "egress": true, "instruction": true, "discovery": true, "supply-chain": true, "mining": true,
		"files": true, "proportionality": true, "provenance": true}
	seen := map[string]bool{}
	for _, r := range Rules() {
		switch {
		case seen[r.ID]:
			t.Errorf("%s is in the registry twice", r.ID)
		case declared[r.ID] == "":
			t.Errorf("%s is in the registry but no Rule constant declares it", r.ID)
		case !cats[r.Category]:
			t.Errorf("%s: category %q", r.ID, r.Category)
		case r.Severity != SeverityError && r.Severity != SeverityWarn && r.Severity != SeverityInfo:
			t.Errorf("%s: severity %q", r.ID, r.Severity)
		case scoreClasses[r.Warn].weight == 0:
			t.Errorf("%s: score class %q", r.ID, r.Warn)
		case r.Description == "" || strings.Contains(r.Description, "\n") || r.Example.SkillMD == "":
			t.Errorf("%s: a description of one line and an example", r.ID)
		}
		seen[r.ID] = true
	}
	for id, name := range declared {
		if !seen[id] {
			t.Errorf("%s (%s) is not in the registry", name, id)
		}
	}
}

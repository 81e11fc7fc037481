package gateway

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/skillgate/skillgate"

// importsOf returns the direct imports of the package in dir (test files
// left out) and every package of this module it imports, directly or not.
func importsOf(t *testing.T, dir string) (direct []string, module []string) {
	t.Helper()
	seen := map[string]bool{}
	var walk func(dir string, top bool)
	walk = func(dir string, top bool) {
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if top {
			direct = p.Imports
		}
		for _, imp := range p.Imports {
			rest, ok := strings.CutPrefix(imp, modulePath+"/")
			if !ok || seen[imp] {
				continue
			}
			seen[imp] = true
			module = append(module, imp)
			walk(filepath.Join("..", filepath.FromSlash(rest)), false)
		}
	}
	walk(dir, true)
	slices.Sort(module)
	return direct, module
}

// TestGatewayImports holds the package to what its doc comment promises:
// no node or cmd package, directly or not, and no storage SDK or
// messaging client of its own.
func TestGatewayImports(t *testing.T) {
	direct, module := importsOf(t, ".")
	for _, imp := range module {
		if imp == modulePath+"/node" || strings.HasPrefix(imp, modulePath+"/cmd/") {
			t.Errorf("gateway imports %s", imp)
		}
	}
	for _, imp := range direct {
		if strings.HasPrefix(imp, "github.com/aws/") || strings.HasPrefix(imp, "github.com/nats-io/") {
			t.Errorf("gateway imports %s directly", imp)
		}
	}
	if !slices.Contains(module, modulePath+"/r2store") || !slices.Contains(module, modulePath+"/protocol") {
		t.Errorf("module imports %q: the walk missed r2store or protocol", module)
	}
}

package r2store_test

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/skillgate/skillgate"

// TestR2storeImports holds the package to what its doc comment promises:
// storage never evaluates, so it imports none of eligibility,
// promptbuild, gateway, node or a cmd package, directly or not.
func TestR2storeImports(t *testing.T) {
	var module []string
	var walk func(dir string)
	walk = func(dir string) {
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range p.Imports {
			rest, ok := strings.CutPrefix(imp, modulePath+"/")
			if !ok || slices.Contains(module, imp) {
				continue
			}
			module = append(module, imp)
			walk(filepath.Join("..", filepath.FromSlash(rest)))
		}
	}
	walk(".")
	for _, imp := range module {
		rest := strings.TrimPrefix(imp, modulePath+"/")
		switch {
		case rest == "eligibility", rest == "promptbuild", rest == "gateway", rest == "node",
			strings.HasPrefix(rest, "cmd/"):
			t.Errorf("r2store imports %s", imp)
		}
	}
	if !slices.Contains(module, modulePath+"/skill") {
		t.Errorf("module imports %q: the walk missed skill", module)
	}
}

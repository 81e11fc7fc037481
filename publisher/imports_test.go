package publisher

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports holds the package to its doc comment: it imports no package
// of the project (governance, config, gateway and the commands import
// it), only the standard library, sshsig and golang.org/x/crypto/ssh.
func TestImports(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && imp != "github.com/hiddeco/sshsig" && imp != "golang.org/x/crypto/ssh" {
			t.Errorf("publisher imports %s", imp)
		}
	}
}

package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/r2store"
)

// TestReloadKeepsNodeAuthWhenExposed: on a gateway listening beyond
// loopback, a config reload that would leave no node token is rejected and
// the old tokens stay in force.
func TestReloadKeepsNodeAuthWhenExposed(t *testing.T) {
	st, err := r2store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "gw.hujson")
	write := func(s string) {
		if err := os.WriteFile(cfgPath, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"gateway": {"nodeTokens": {"n1": "secret"}}}`)
	s, err := New(Config{Store: st, ConfigPath: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	s.exposed.Store(true) // as Serve sets it for a non-loopback listener

	write(`{"gateway": {}}`)
	s.reloadConfig(true)
	if !s.tokenOK("n1", "secret") || s.tokenOK("intruder", "x") {
		t.Fatal("node auth changed by a reload that removed the last token")
	}
	if !strings.Contains(s.rejected, "leaves no node token") {
		t.Errorf("rejected = %q", s.rejected)
	}

	// On loopback the same reload is fine.
	s.exposed.Store(false)
	s.reloadConfig(true)
	if !s.tokenOK("intruder", "x") {
		t.Error("loopback gateway without tokens should accept any node")
	}
}

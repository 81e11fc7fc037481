package gateway

import (
	"log/slog"
	"testing"

	"github.com/skillgate/skillgate/store"
)

// quietServer is a gateway on an empty directory store that logs nothing
// and is not serving, for the package's own tests; it closes when t ends.
func quietServer(t *testing.T) *Server {
	t.Helper()
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

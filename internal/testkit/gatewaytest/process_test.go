package gatewaytest

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestStartProcessChoosesAgain: a port the kit chose that something else
// listens on by the time the process starts is chosen again.
func TestStartProcessChoosesAgain(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	calls := 0
	defer func(f func(testing.TB) int) { freePort = f }(freePort)
	next := freePort
	freePort = func(t testing.TB) int {
		calls++
		if calls == 1 {
			return takenPort
		}
		return next(t)
	}
	p := StartProcess(t, ProcessOptions{Store: t.TempDir()})
	if calls != 2 || strings.HasSuffix(p.URL, ":"+strconv.Itoa(takenPort)) {
		t.Errorf("%d ports chosen, serving at %s (the taken port %d); want a second port", calls, p.URL, takenPort)
	}
}

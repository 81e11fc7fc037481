package testkit

import (
	"fmt"
	"net"
	"testing"
)

// FreePort returns a loopback port nothing listens on now. Another
// process may take it before the caller binds it: a server started on it
// goes through WithFreePorts, which tries again.
func FreePort(t testing.TB) int {
	t.Helper()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

// freePorts returns n distinct loopback ports nothing listens on now.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		lns = append(lns, l) // held until all are found: n distinct ports
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startAttempts is how often WithFreePorts starts a server.
const startAttempts = 3

// WithFreePorts calls start with n free loopback ports until it returns
// nil, at most three times, each time with other ports, and returns start's
// last error: a port found free may be taken before the server binds it.
// It is the start-retry of the servers the tests run (MinIO, NATS).
func WithFreePorts(n int, start func(ports []int) error) error {
	var err error
	for range startAttempts {
		var ports []int
		if ports, err = freePorts(n); err != nil {
			continue
		}
		if err = start(ports); err == nil {
			return nil
		}
	}
	return err
}

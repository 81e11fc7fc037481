package testkit

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FreePort returns a loopback port nothing listens on now. Another
// process may take it before the caller binds it: a server started on it
// goes through WithFreePorts, which tries again. The port is below the
// kernel's ephemeral range, where the servers tests start on port 0 and
// every outgoing connection take theirs, and not one handed out before in
// this process: a port chosen ahead (a replica's, named in its nodes'
// --gateway list before it starts) is then seldom taken meanwhile.
func FreePort(t testing.TB) int {
	t.Helper()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{} // handed out by freePorts in this process
)

// freePorts returns n distinct loopback ports nothing listens on now.
func freePorts(n int) ([]int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	low, high := portRange()
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n && tries < 2000; tries++ {
		p := low + rand.N(high-low)
		if portsGiven[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // in use
		}
		lns = append(lns, l) // held until all are found: n distinct ports
		ports = append(ports, p)
		portsGiven[p] = true
	}
	if len(ports) < n {
		return nil, fmt.Errorf("finding %d free ports in %d–%d: found %d", n, low, high-1, len(ports))
	}
	return ports, nil
}

// portRange is where freePorts looks: the 12,000 ports below the kernel's
// ephemeral range (/proc/sys/net/ipv4/ip_local_port_range; 32768 when it
// cannot be read), not below 1024.
func portRange() (low, high int) {
	high = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 2048 {
				high = v
			}
		}
	}
	return max(1024, high-12000), high
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

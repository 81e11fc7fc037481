// Package natstest runs a real NATS server with JetStream for tests: a
// `nats-server` binary on PATH or in $(go env GOPATH)/bin, bound to
// loopback on free ports, with a throwaway store directory.
//
// Install the binary with
//
//	go install github.com/nats-io/nats-server/v2@v2.15.2
//
// Without it, tests that need NATS are skipped, or fail when CI=true.
//
// A Server can be stopped, killed and restarted on the same port, for
// tests of NATS outages. Only tests import it; of skillgate it imports only
// the leaf helpers gobin and syncbuf and testkit's process launcher (which
// miniotest shares), and the NATS client, for JetStream, so that any
// package's tests can use it.
package natstest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/skillgate/skillgate/internal/testkit"
)

// InstallCommand installs the nats-server version the tests are run with.
const InstallCommand = "go install github.com/nats-io/nats-server/v2@v2.15.2"

const (
	readyTimeout = 30 * time.Second // from process start to a ready JetStream
	stopTimeout  = 10 * time.Second // from SIGTERM to SIGKILL
	outputLimit  = 1 << 20          // bytes of server output kept
)

// ErrNoBinary is returned by Launch when no nats-server binary is found.
var ErrNoBinary = errors.New("nats-server binary not found on PATH or in $(go env GOPATH)/bin; install it with: " + InstallCommand)

// Server is a running (or stopped) nats-server with JetStream.
type Server struct {
	bin         string
	args        []string        // extra arguments, e.g. --user and --pass
	port, mport int             // client and monitoring ports, kept across restarts
	daemon      *testkit.Daemon // holds the store directory
	closeOnce   sync.Once
}

// Start launches a server for t and stops it when t ends. Extra arguments
// go to nats-server as they are (e.g. "--user", "u", "--pass", "p"). When
// the binary is missing it skips t, or fails it when CI=true. When t
// fails, the server's recent output is logged.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	s, err := Launch(args...)
	if err != nil {
		testkit.SkipOrFatal(t, err, ErrNoBinary)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("nats-server output:\n%s", testkit.Tail(s.Output(), 16<<10))
		}
		s.Close()
	})
	return s
}

// Launch starts a server and waits until JetStream is ready. The caller
// must Close it. It returns ErrNoBinary when nats-server is not installed.
func Launch(args ...string) (*Server, error) {
	bin, err := findBinary()
	if err != nil {
		return nil, err
	}
	d, err := testkit.NewDaemon("natstest-", outputLimit)
	if err != nil {
		return nil, fmt.Errorf("natstest: %w", err)
	}
	s := &Server{bin: bin, args: args, daemon: d}
	if err := d.Launch("nats-server", 2, func(ports []int) error {
		s.port, s.mport = ports[0], ports[1]
		return s.start()
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// findBinary finds the nats-server binary, or ErrNoBinary.
func findBinary() (string, error) { return testkit.FindProgram("nats-server", ErrNoBinary) }

// start runs the nats-server process and waits for readiness.
func (s *Server) start() error {
	args := append([]string{
		"-js", "-sd", filepath.Join(s.daemon.Dir, "jetstream"),
		"-a", "127.0.0.1", "-p", strconv.Itoa(s.port), "-m", strconv.Itoa(s.mport),
		"-n", "natstest",
	}, s.args...)
	cmd := exec.Command(s.bin, args...)
	return s.daemon.Start(cmd, "natstest: nats-server", readyTimeout, 20*time.Millisecond, s.ready)
}

// ready reports whether JetStream is enabled (the monitoring endpoint
// says so) and the client port accepts connections.
func (s *Server) ready() error {
	client := &http.Client{Timeout: time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz?js-enabled-only=true", s.mport)
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	c, err := net.DialTimeout("tcp", s.addr(), time.Second)
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

func (s *Server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the client URL, e.g. "nats://127.0.0.1:40123". It stays the same
// across Restart.
func (s *Server) URL() string { return "nats://" + s.addr() }

// Port is the client port.
func (s *Server) Port() int { return s.port }

// Stop stops the server (SIGTERM to its process group, SIGKILL after
// 10 s). Memory streams are lost; file streams stay for Restart. Stopping
// a stopped server does nothing.
func (s *Server) Stop() { s.stop(syscall.SIGTERM) }

// Kill kills the server at once (SIGKILL), as a crash would.
func (s *Server) Kill() { s.stop(syscall.SIGKILL) }

func (s *Server) stop(sig syscall.Signal) { s.daemon.Stop(sig, stopTimeout) }

// Restart stops the server if it runs and starts it again on the same
// ports with the same store directory. It fails t when the server does
// not come back.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	var err error
	// The port was just released; another process may grab it, so retry
	// briefly rather than pick a new one (clients know only this URL).
	for attempt := 0; attempt < 3; attempt++ {
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%v\nnats-server output:\n%s", err, s.Output())
}

// Close stops the server and removes its store directory.
func (s *Server) Close() { s.closeOnce.Do(func() { s.daemon.Close(syscall.SIGTERM, stopTimeout) }) }

// Output returns what the server printed so far (the last 1 MiB).
func (s *Server) Output() string { return s.daemon.Output() }

// JetStream returns a JetStream client of s's (opts as nats.Connect
// takes them), whose connection closes when t ends.
func (s *Server) JetStream(t testing.TB, opts ...nats.Option) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(s.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

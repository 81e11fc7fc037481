package testkit

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// A Server serves on a listener until its context ends, as
// gateway.Server does.
type Server interface {
	Serve(ctx context.Context, ln net.Listener) error
}

// Served is a Server running in this process on a loopback listener.
type Served struct {
	Addr string // 127.0.0.1:PORT
	// StopWithin bounds how long Serve may take to return once its
	// context ends; 0: 10 s.
	StopWithin time.Duration

	cancel context.CancelFunc
	done   chan struct{} // closed when Serve has returned
	err    error         // Serve's result, set before done closes
	stop   func()
}

// Serve runs srv on a fresh 127.0.0.1 listener until t ends, when it ends
// Serve's context and fails t if Serve does not return within 10 s, or
// returns an error. It is the in-process start of every gateway of the
// tests: gatewaytest builds on it, and the gateway's own in-package tests,
// which cannot import gatewaytest, call it with their server.
func Serve(t testing.TB, srv Server) *Served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ServeOn(t, srv, ln)
}

// ServeOn is Serve on the listener ln.
func ServeOn(t testing.TB, srv Server, ln net.Listener) *Served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Served{Addr: ln.Addr().String(), cancel: cancel, done: make(chan struct{})}
	go func() { s.err = srv.Serve(ctx, ln); close(s.done) }()
	s.stopOnCleanup(t)
	return s
}

// ServeAfter is Serve on a loopback address that nothing listens on until
// delay has passed: for clients started before their server.
func ServeAfter(t testing.TB, srv Server, delay time.Duration) *Served {
	t.Helper()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Served{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		ln, err := net.Listen("tcp", s.Addr)
		if err != nil {
			s.err = err
			return
		}
		s.err = srv.Serve(ctx, ln)
	}()
	s.stopOnCleanup(t)
	return s
}

// stopOnCleanup sets s.stop and calls it when t ends.
func (s *Served) stopOnCleanup(t testing.TB) {
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			s.cancel()
			within := s.StopWithin
			if within == 0 {
				within = procWait
			}
			select {
			case <-s.done:
				if s.err != nil {
					t.Errorf("Serve: %v", s.err)
				}
			case <-time.After(within):
				t.Errorf("Serve did not return within %v of its context ending", within)
			}
		})
	}
	t.Cleanup(s.stop)
}

// Stop ends Serve's context and waits for it to return (as when t ends).
func (s *Served) Stop() { s.stop() }

// Cancel ends Serve's context and returns at once: a test that watches
// how the server stops waits on Done itself.
func (s *Served) Cancel() { s.cancel() }

// Done is closed when Serve has returned; Err is then its result.
func (s *Served) Done() <-chan struct{} { return s.done }

// Err is what Serve returned, once Done is closed.
func (s *Served) Err() error { return s.err }

// URL is "http://" + Addr.
func (s *Served) URL() string { return "http://" + s.Addr }

package node

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/protocol"
)

// wait bounds every wait in these tests, so that a bug fails a test
// instead of hanging it.
const wait = 5 * time.Second

// fakeGateway is an in-test WebSocket server on 127.0.0.1 that plays the
// gateway's side of a session, driven step by step by the test.
type fakeGateway struct {
	t     *testing.T
	srv   *httptest.Server
	conns chan *gwConn

	requests atomic.Int64 // every HTTP request, upgrade or not

	mu       sync.Mutex
	received [][]byte // every message any node sent, for leak checks
}

// gwConn is one accepted node connection.
type gwConn struct {
	t    *testing.T
	c    *websocket.Conn
	in   chan []byte
	done chan error // the read error that ended the connection
}

// newFakeGateway starts a server. With stallAfter > 0, each connection
// stops reading after that many messages, so it answers neither pings nor
// the node's close frame: a gateway that hangs.
func newFakeGateway(t *testing.T, stallAfter int) *fakeGateway {
	t.Helper()
	g := &fakeGateway{t: t, conns: make(chan *gwConn, 16)}
	stop := make(chan struct{})
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.requests.Add(1)
		if r.URL.Path != "/v1/nodes/connect" {
			http.NotFound(w, r)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(protocol.ReadLimit)
		gc := &gwConn{t: t, c: c, in: make(chan []byte, 64), done: make(chan error, 1)}
		g.conns <- gc
		for n := 0; ; n++ {
			if stallAfter > 0 && n == stallAfter {
				<-stop
				c.CloseNow()
			}
			_, data, err := c.Read(context.Background())
			if err != nil {
				gc.done <- err
				close(gc.in)
				return
			}
			g.mu.Lock()
			g.received = append(g.received, data)
			g.mu.Unlock()
			gc.in <- data
		}
	}))
	t.Cleanup(g.srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first: cleanups are last-in, first-out
	return g
}

// all returns everything nodes sent, concatenated.
func (g *fakeGateway) all() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return bytes.Join(g.received, []byte("\n"))
}

func (g *fakeGateway) accept() *gwConn {
	g.t.Helper()
	select {
	case gc := <-g.conns:
		g.t.Cleanup(func() { gc.c.CloseNow() })
		return gc
	case <-time.After(wait):
		g.t.Fatal("no node connected")
		return nil
	}
}

// noConnection asserts that no node connects within d.
func (g *fakeGateway) noConnection(d time.Duration) {
	g.t.Helper()
	select {
	case gc := <-g.conns:
		gc.c.CloseNow()
		g.t.Fatal("a node connected again")
	case <-time.After(d):
	}
}

// recv returns the next message's raw text.
func (gc *gwConn) recv() string {
	gc.t.Helper()
	select {
	case b, ok := <-gc.in:
		if !ok {
			gc.t.Fatal("connection closed while waiting for a frame")
		}
		return string(b)
	case <-time.After(wait):
		gc.t.Fatal("no frame from the node")
		return ""
	}
}

// expect asserts the next message is exactly want.
func (gc *gwConn) expect(want string) {
	gc.t.Helper()
	if got := gc.recv(); got != want {
		gc.t.Fatalf("node sent\n got %s\nwant %s", got, want)
	}
}

// quiet asserts the node sends nothing for d.
func (gc *gwConn) quiet(d time.Duration) {
	gc.t.Helper()
	select {
	case b, ok := <-gc.in:
		if ok {
			gc.t.Fatalf("node sent an unexpected frame: %s", b)
		}
	case <-time.After(d):
	}
}

func (gc *gwConn) send(b []byte) {
	gc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := gc.c.Write(ctx, websocket.MessageText, b); err != nil {
		gc.t.Fatalf("gateway write: %v", err)
	}
}

func (gc *gwConn) sendRes(id string, payload any) {
	gc.t.Helper()
	b, err := protocol.NewRes(id, payload)
	if err != nil {
		gc.t.Fatal(err)
	}
	gc.send(b)
}

func (gc *gwConn) sendEvt(payload any) {
	gc.t.Helper()
	b, err := protocol.NewEvt(protocol.EventInterest, payload)
	if err != nil {
		gc.t.Fatal(err)
	}
	gc.send(b)
}

// closed waits for the connection to end and returns its close status.
func (gc *gwConn) closed() websocket.StatusCode {
	gc.t.Helper()
	select {
	case err := <-gc.done:
		return websocket.CloseStatus(err)
	case <-time.After(wait):
		gc.t.Fatal("connection did not close")
		return 0
	}
}

// newTestClient builds a client with timings short enough for tests.
func newTestClient(t *testing.T, cfg Config, logs *syncbuf.Buffer) *Client {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.backoffMin = 10 * time.Millisecond
	c.backoffMax = 50 * time.Millisecond
	c.connectTimeout = 2 * time.Second
	c.closeGrace = 300 * time.Millisecond
	return c
}

// runClient starts Run and returns a channel with its result.
// startClient runs a test client of cfg (newTestClient, then each tune)
// until cancel is called or t ends, and returns its logs and Run's result.
func startClient(t *testing.T, cfg Config, tune ...func(*Client)) (logs *syncbuf.Buffer, errc <-chan error, cancel context.CancelFunc) {
	t.Helper()
	logs = &syncbuf.Buffer{}
	c := newTestClient(t, cfg, logs)
	for _, f := range tune {
		f(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return logs, runClient(ctx, c), cancel
}

func runClient(ctx context.Context, c *Client) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	return errc
}

func waitRun(t *testing.T, errc <-chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(within):
		t.Fatalf("Run did not return within %v", within)
		return errors.New("unreachable")
	}
}

package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/protocol"
)

// dirGateway is a real gateway on a directory store, which the test
// stops itself (Close, or the end of Serve's context), so that it can
// check what is left.
type dirGateway struct{ *gw }

func startDirGateway(t *testing.T, files map[string]string, cfg gateway.Config) *dirGateway {
	t.Helper()
	cfg.StoreName = "directory"
	if cfg.Poll == 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	return &dirGateway{&gw{gatewaytest.Start(t, gatewaytest.Options{Files: files, Config: cfg})}}
}

// served waits for Serve to return and checks it returned nil.
func (d *dirGateway) waitServed(t *testing.T) {
	t.Helper()
	select {
	case <-d.Served.Done():
		if err := d.Served.Err(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatalf("Serve did not return within %v", waitFor)
	}
}

// exercise drives a gateway through what runs goroutines and timers:
// real skillgate-node processes, raw nodes (one replaced by a newer
// connection with its id), a socket that never sends connect, an interest
// change pushed to every node, and every HTTP endpoint. It returns the
// node processes and the raw sockets still open.
func exercise(t *testing.T, d *dirGateway) ([]*testkit.Proc, []*testkit.RawNode) {
	t.Helper()
	procs := []*testkit.Proc{
		startNode(t, d.URL, "proc-a", testkit.BinDir(t, "alpha-tool"), nil),
		startNode(t, d.URL, "proc-b", testkit.BinDir(t, "beta-tool"), nil),
	}
	old := dialRaw(t, d.gw)
	old.Connect("raw-dup", "")
	raw := dialRaw(t, d.gw)
	raw.Connect("raw-dup", "") // replaces old
	raw.Facts("f1", nil, map[string]bool{"alpha-tool": true})
	other := dialRaw(t, d.gw)
	other.Connect("raw-other", "")
	other.Facts("f1", nil, nil)
	pending := dialRaw(t, d.gw) // never sends connect: its timer is armed
	d.waitNodes(t, "proc-a,proc-b,raw-dup,raw-other")
	d.waitPrompt(t, "main", block(eAlpha, eBeta))

	// A new skill changes the interest: an evt push to every node.
	d.Put(t, "skills/gamma/SKILL.md", skillMD("gamma", "Needs COMBO_KEY.", `{"env": ["COMBO_KEY"]}`))
	testkit.Eventually(t, waitFor, func() (string, bool) {
		f, err := other.Next(waitFor)
		if err != nil {
			t.Fatalf("waiting for the interest event: %v", err)
		}
		return fmt.Sprintf("%+v", f), f.Type == protocol.TypeEvt && strings.Contains(string(f.Payload), "COMBO_KEY")
	})
	for _, path := range []string{"/v1/agents/main/prompt", "/v1/agents/main/prompt", "/v1/agents/main/skills",
		"/v1/agents/main/read?path=skills/alpha/SKILL.md", "/v1/nodes", "/readyz", "/healthz", "/metrics"} {
		if code, _, body := d.Get(t, path, nil); code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
	}
	return procs, []*testkit.RawNode{old, raw, other, pending}
}

var closeSkills = map[string]string{
	"skills/alpha/SKILL.md": skillMD("alpha", "Uses alpha-tool.", `{"bins": ["alpha-tool"]}`),
	"skills/beta/SKILL.md":  skillMD("beta", "Uses beta-tool.", `{"bins": ["beta-tool"]}`),
}

// TestCloseLeavesNoGoroutine: after Close (or the end of Serve's context,
// which is what SIGTERM does to skillgate serve), no goroutine the gateway
// started or ran on is left: pollers, pings, read loops, pushes, connect
// timers of pending sockets, the HTTP server's.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	for _, how := range []string{"Close", "context"} {
		t.Run(how, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			// Pings every 100ms run while the test drives the gateway; the
			// default connect timeout (10s) outlives the test, so the
			// pending socket must be ended by Close.
			d := startDirGateway(t, closeSkills, gateway.Config{PingInterval: 100 * time.Millisecond})
			procs, raws := exercise(t, d)
			// Let a few pings run.
			time.Sleep(300 * time.Millisecond)

			if how == "Close" {
				d.Server.Close()
			} else {
				d.Served.Cancel()
			}
			d.waitServed(t)
			// Checked before the test closes its side of anything: the
			// only goroutines left may be those that wait for the node
			// processes (which would reconnect forever) and copy their
			// output.
			goleak.VerifyNone(t, ignore,
				goleak.IgnoreAnyFunction("github.com/skillgate/skillgate/internal/testkit.StartProcess.func1"),
				goleak.IgnoreAnyFunction("os/exec.(*Cmd).writerDescriptor.func1"))

			// Then nothing at all once the test's own are gone.
			for _, p := range procs {
				p.Kill(t)
			}
			for _, r := range raws {
				r.Conn.CloseNow()
			}
			d.Client.CloseIdleConnections()
			goleak.VerifyNone(t, ignore)
		})
	}
}

// TestCloseWithNodesConnected: Close closes every node socket with 1001
// "gateway shutting down" — connected, pending (never sent connect) and
// one whose peer never answers the close handshake — and returns, after
// which nothing is served and Close returns at once.
func TestCloseWithNodesConnected(t *testing.T) {
	d := startDirGateway(t, closeSkills, gateway.Config{})
	proc := startNode(t, d.URL, "proc-a", testkit.BinDir(t, "alpha-tool"), nil)
	reading := dialRaw(t, d.gw)
	reading.Connect("reading", "")
	reading.Facts("f1", nil, nil)
	deaf := dialRaw(t, d.gw)
	deaf.Connect("deaf", "")
	deaf.Facts("f1", nil, nil) // reads nothing from here on: never answers the close
	pending := dialRaw(t, d.gw)
	d.waitNodes(t, "deaf,proc-a,reading")

	// Both readers see the close while Close runs.
	closes := make(chan string, 2)
	for _, r := range []*testkit.RawNode{reading, pending} {
		go func() {
			for {
				_, _, err := r.Conn.Read(context.Background())
				if err != nil {
					closes <- fmt.Sprintf("%d %q", websocket.CloseStatus(err), closeReason(err))
					return
				}
			}
		}()
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range 2 { // concurrent calls both return once everything ended
		wg.Go(func() { d.Server.Close() })
	}
	wg.Wait()
	// The deaf peer costs the library's close handshake timeout (5s).
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("Close took %v", took)
	}
	for range 2 {
		select {
		case got := <-closes:
			if want := `1001 "gateway shutting down"`; got != want {
				t.Errorf("node socket closed with %s, want %s", got, want)
			}
		case <-time.After(waitFor):
			t.Fatal("a node socket was not closed")
		}
	}
	testkit.Eventually(t, waitFor, func() (string, bool) {
		out := proc.Output()
		return out, strings.Contains(out, "gateway shutting down")
	})
	d.waitServed(t)

	start = time.Now()
	d.Server.Close()
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("a second Close took %v", took)
	}
	if _, err := http.Get(d.URL + "/healthz"); err == nil {
		t.Error("the gateway still answers after Close")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := d.Server.Serve(ctx, mustListen(t)); !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve after Close = %v, want http.ErrServerClosed", err)
	}
}

func closeReason(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}

func mustListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

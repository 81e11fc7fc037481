package gateway_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
)

// pingedNode is a raw node connection that counts the gateway's pings.
type pingedNode struct {
	*testkit.RawNode
	pings atomic.Int64
}

// dialPinged connects node id to d, counting the pings it receives. With
// read set, a goroutine reads (and so answers pings) until the test ends.
func dialPinged(t *testing.T, d *dirGateway, id string, read bool) *pingedNode {
	t.Helper()
	p := &pingedNode{}
	p.RawNode = testkit.DialNodeWith(t, d.WSURL, &websocket.DialOptions{
		OnPingReceived: func(context.Context, []byte) bool { p.pings.Add(1); return true },
	})
	c := p.Conn
	p.Connect(id, "")
	if read {
		go func() {
			for {
				if _, _, err := c.Read(context.Background()); err != nil {
					return
				}
			}
		}()
	}
	return p
}

// TestPingsOnlySilentNodes: the gateway pings a node that has been silent
// for the ping interval, not one it hears from (the node agent pings every
// 30 s, under the default interval of 45 s), and drops one that does not
// answer its ping.
func TestPingsOnlySilentNodes(t *testing.T) {
	const interval = 600 * time.Millisecond
	d := startDirGateway(t, closeSkills, gateway.Config{PingInterval: interval})

	silent := dialPinged(t, d, "silent", true)
	talking := dialPinged(t, d, "talking", true)
	stop := make(chan struct{})
	pinged := make(chan error, 1)
	go func() {
		// A ping every 30 ms: ten in each interval of the gateway's.
		tk := time.NewTicker(30 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				pinged <- nil
				return
			case <-tk.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			err := talking.Conn.Ping(ctx)
			cancel()
			if err != nil {
				pinged <- err
				return
			}
		}
	}()
	time.Sleep(5 * interval)
	close(stop)
	if err := <-pinged; err != nil {
		t.Fatalf("the talking node's ping: %v", err)
	}
	if n := silent.pings.Load(); n < 2 {
		t.Errorf("the silent node was pinged %d times in 5 ping intervals; want at least 2", n)
	}
	if n := talking.pings.Load(); n != 0 {
		t.Errorf("the node that pings every 30 ms was pinged %d times by the gateway; want none", n)
	}

	// A node that never reads never answers a ping: it is dropped.
	dialPinged(t, d, "deaf", false)
	testkit.Eventually(t, waitFor, func() (string, bool) {
		nodes, body := d.nodes(t)
		for _, n := range nodes {
			if n.ID == "deaf" {
				return body, false
			}
		}
		return body, len(nodes) == 2
	})
	testkit.Eventually(t, waitFor, func() (string, bool) {
		logs := d.Logs.String()
		for line := range strings.Lines(logs) {
			if strings.Contains(line, `"msg":"node missed a ping; dropping it"`) && strings.Contains(line, `"node":"deaf"`) {
				return logs, true
			}
		}
		return logs, false
	})
}

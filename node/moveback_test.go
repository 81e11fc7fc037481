package node

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/protocol"
)

// replica is an in-test gateway replica that answers by itself: /readyz
// with 200 while ready, 503 otherwise; connect with an empty interest
// while up (else the upgrade gets 503), or with refuse's error code.
type replica struct {
	t      *testing.T
	srv    *httptest.Server
	ready  atomic.Bool
	up     atomic.Bool
	refuse atomic.Value // string: an error code to answer connect with
	probes atomic.Int64 // GET /readyz

	mu     sync.Mutex
	events []replicaEvent
	notify chan struct{}
}

// replicaEvent is what a replica saw of a node: "connect", "facts" or
// "closed" (with the close status and reason), and when.
type replicaEvent struct {
	node, kind string
	at         time.Time
	code       websocket.StatusCode
	reason     string
}

func newReplica(t *testing.T) *replica {
	t.Helper()
	r := &replica{t: t, notify: make(chan struct{}, 1)}
	r.refuse.Store("")
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/readyz":
			r.probes.Add(1)
			if r.ready.Load() {
				w.Write([]byte(`{"ready":true}`))
			} else {
				http.Error(w, `{"ready":false}`, http.StatusServiceUnavailable)
			}
			return
		case "/v1/nodes/connect":
		default:
			http.NotFound(w, req)
			return
		}
		if !r.up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		c, err := websocket.Accept(w, req, nil)
		if err != nil {
			return
		}
		r.serve(c)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *replica) add(e replicaEvent) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// serve plays the gateway's side of one connection.
func (r *replica) serve(c *websocket.Conn) {
	defer c.CloseNow()
	id := ""
	for {
		_, data, err := c.Read(context.Background())
		if err != nil {
			var ce websocket.CloseError
			if ok := asCloseError(err, &ce); ok {
				r.add(replicaEvent{node: id, kind: "closed", at: time.Now(), code: ce.Code, reason: ce.Reason})
			} else {
				r.add(replicaEvent{node: id, kind: "closed", at: time.Now(), code: -1, reason: err.Error()})
			}
			return
		}
		f, err := protocol.DecodeFrame(data)
		if err != nil {
			continue
		}
		var answer []byte
		switch f.Method {
		case protocol.MethodConnect:
			p, err := protocol.ParseConnectParams(f.Params)
			if err != nil {
				r.t.Errorf("connect params: %v", err)
				return
			}
			id = p.Node.ID
			if code := r.refuse.Load().(string); code != "" {
				r.add(replicaEvent{node: id, kind: "refused", at: time.Now()})
				c.Write(context.Background(), websocket.MessageText, protocol.NewErr(f.ID, code, "refused by the test"))
				c.Close(websocket.StatusPolicyViolation, code)
				return
			}
			r.add(replicaEvent{node: id, kind: "connect", at: time.Now()})
			answer, _ = protocol.NewRes(f.ID, protocol.ConnectResult{Protocol: protocol.Version})
		case protocol.MethodFactsUpdate:
			r.add(replicaEvent{node: id, kind: "facts", at: time.Now()})
			answer, _ = protocol.NewRes(f.ID, nil)
		}
		if answer != nil {
			c.Write(context.Background(), websocket.MessageText, answer)
		}
	}
}

func asCloseError(err error, ce *websocket.CloseError) bool {
	code := websocket.CloseStatus(err)
	if code == -1 {
		return false
	}
	ce.Code = code
	// The reason is in the error's text: "status = StatusGoingAway and reason = "…"".
	if _, after, ok := strings.Cut(err.Error(), `reason = "`); ok {
		ce.Reason = strings.TrimSuffix(after, `"`)
	}
	return true
}

// seen returns the events of kind for node so far.
func (r *replica) seen(node, kind string) []replicaEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []replicaEvent
	for _, e := range r.events {
		if e.node == node && e.kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// waitSeen waits until node has n events of kind and returns them.
func (r *replica) waitSeen(node, kind string, n int, within time.Duration) []replicaEvent {
	r.t.Helper()
	deadline := time.After(within)
	for {
		if got := r.seen(node, kind); len(got) >= n {
			return got
		}
		select {
		case <-r.notify:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			r.t.Fatalf("%s: %d %q events of %s within %v, want %d", r.srv.URL, len(r.seen(node, kind)), kind, node, within, n)
		}
	}
}

// preferring returns a node id whose first replica (ReplicaOrder) is
// first's, starting the search at prefix+n.
func preferring(t *testing.T, prefix string, n int, first *replica, others ...*replica) string {
	t.Helper()
	bases := []string{first.srv.URL}
	for _, o := range others {
		bases = append(bases, o.srv.URL)
	}
	urls, err := Config{Gateway: strings.Join(bases, ",")}.Gateways()
	if err != nil {
		t.Fatal(err)
	}
	for i := n; ; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		if ReplicaOrder(id, urls)[0] == urls[0] {
			return id
		}
	}
}

// moveConfig is the Config of a node with the replicas' URLs, moving back
// after hold, plus up to window.
func moveConfig(t *testing.T, id string, hold, window time.Duration, rs ...*replica) Config {
	t.Helper()
	var bases []string
	for _, r := range rs {
		bases = append(bases, r.srv.URL)
	}
	if window == 0 {
		window = -1
	}
	return Config{Gateway: strings.Join(bases, ","), ID: id, Path: []string{t.TempDir()},
		MoveBack: hold, MoveBackWindow: window}
}

// TestMoveBack: a node whose first replica is down starts on the second;
// once the first is ready for the hold-down it connects there, and only
// once that connection is answered (and the facts sent) does it close the
// old one, with 1001 and the reason "node moved to a preferred replica".
// On its first replica it probes nothing more.
func TestMoveBack(t *testing.T) {
	a, b := newReplica(t), newReplica(t)
	b.up.Store(true)
	b.ready.Store(true)
	id := preferring(t, "n", 0, a, b)
	var logs syncbuf.Buffer
	const hold = 300 * time.Millisecond
	c := newTestClient(t, moveConfig(t, id, hold, 0, a, b), &logs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := runClient(ctx, c)

	b.waitSeen(id, "facts", 1, wait)
	if a.seen(id, "connect") != nil {
		t.Fatal("the node connected to a, which is down")
	}
	time.Sleep(hold) // a down meanwhile: probed, not ready
	if a.probes.Load() == 0 {
		t.Error("the node did not probe its first replica while on the second")
	}
	a.up.Store(true)
	a.ready.Store(true)
	readyAt := time.Now()
	a.waitSeen(id, "facts", 1, wait)
	conn := a.seen(id, "connect")[0]
	if d := conn.at.Sub(readyAt); d < hold {
		t.Errorf("the node moved %v after its first replica was ready, before the hold-down of %v", d, hold)
	}
	closed := b.waitSeen(id, "closed", 1, wait)[0]
	if closed.code != websocket.StatusGoingAway || closed.reason != protocol.CloseReasonNodeMoved {
		t.Errorf("the old connection closed with %d %q, want 1001 %q", closed.code, closed.reason, protocol.CloseReasonNodeMoved)
	}
	// The node sends the facts to a before it closes b; which of the two
	// frames the replicas read first is not ordered, but connect was
	// answered before either.
	if closed.at.Before(conn.at) {
		t.Errorf("the old connection closed (%v) before the new one was answered (%v)", closed.at, conn.at)
	}
	probes := a.probes.Load()
	time.Sleep(3 * hold)
	if n := a.probes.Load() - probes; n != 0 {
		t.Errorf("%d probes of /readyz after the move, want none: the node is on its first replica", n)
	}
	if n := len(b.seen(id, "connect")); n != 1 {
		t.Errorf("%d connects on b, want 1", n)
	}
	cancel()
	if err := waitRun(t, errc, 3*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if c.URL() != c.urls[0] { // Run has returned: no race
		t.Errorf("URL() = %s, want the first replica's %s", c.URL(), c.urls[0])
	}
	for _, want := range []string{"a preferred gateway is ready; moving back to it if it stays ready", "moving back to a preferred gateway"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestMoveBackHoldDown: a first replica that is ready, then not, then
// ready again, is moved back to only once it has been ready for the whole
// hold-down since it was last not ready.
func TestMoveBackHoldDown(t *testing.T) {
	a, b := newReplica(t), newReplica(t)
	b.up.Store(true)
	b.ready.Store(true)
	a.up.Store(true) // accepts connects all along: only /readyz says whether to move
	id := preferring(t, "n", 0, a, b)
	const hold = 600 * time.Millisecond // probed every 50–150 ms
	// Down at first: the node goes to b.
	a.up.Store(false)
	logs, errc, cancel := startClient(t, moveConfig(t, id, hold, 0, a, b))
	b.waitSeen(id, "facts", 1, wait)
	a.up.Store(true)

	a.ready.Store(true)
	time.Sleep(hold / 2)
	a.ready.Store(false)
	time.Sleep(hold / 2)
	if got := a.seen(id, "connect"); got != nil {
		t.Fatalf("the node moved to a replica ready for only %v of the hold-down %v", hold/2, hold)
	}
	a.ready.Store(true)
	readyAgain := time.Now()
	conn := a.waitSeen(id, "connect", 1, wait)[0]
	if d := conn.at.Sub(readyAgain); d < hold {
		t.Errorf("the node moved %v after its first replica was ready again, before the hold-down of %v", d, hold)
	}
	if !strings.Contains(logs.String(), "the preferred gateway is not ready any more; staying") {
		t.Errorf("the log does not say the preferred gateway went unready:\n%s", logs.String())
	}
	cancel()
	waitRun(t, errc, 3*time.Second)
}

// TestMoveBackSpread: 40 nodes on their second replica while the first is
// down move back over the window (each waits a random part of it after
// the hold-down), not all at once.
func TestMoveBackSpread(t *testing.T) {
	a, b := newReplica(t), newReplica(t)
	b.up.Store(true)
	b.ready.Store(true)
	const (
		n      = 40
		hold   = 200 * time.Millisecond
		window = 1500 * time.Millisecond
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ids []string
	var errcs []<-chan error
	for next := 0; len(ids) < n; {
		id := preferring(t, "spread-", next, a, b)
		fmt.Sscanf(strings.TrimPrefix(id, "spread-"), "%d", &next)
		next++
		ids = append(ids, id)
		errcs = append(errcs, runClient(ctx, newTestClient(t, moveConfig(t, id, hold, window, a, b), &syncbuf.Buffer{})))
	}
	for _, id := range ids {
		b.waitSeen(id, "facts", 1, wait)
	}
	a.up.Store(true)
	a.ready.Store(true)
	readyAt := time.Now()
	var at []time.Duration
	for _, id := range ids {
		at = append(at, a.waitSeen(id, "connect", 1, hold+window+wait)[0].at.Sub(readyAt))
	}
	slices.Sort(at)
	t.Logf("%d nodes moved back between %v and %v after their replica was ready (hold-down %v, window %v)", n, at[0], at[n-1], hold, window)
	if at[0] < hold {
		t.Errorf("a node moved %v after the replica was ready, before the hold-down of %v", at[0], hold)
	}
	// 40 uniform draws over the window span less than half of it with a
	// probability of about 40·2⁻³⁹.
	if spread := at[n-1] - at[0]; spread < window/2 {
		t.Errorf("the moves spread over %v, want at least half the window %v", spread, window)
	}
	// No more than half of them within any tenth of the window (uniform
	// draws put about 4 there; a loaded machine that delays the probes
	// bunches some, a storm would put all 40).
	for i := range at {
		j := i
		for j < n && at[j]-at[i] < window/10 {
			j++
		}
		if j-i > n/2 {
			t.Errorf("%d of %d nodes moved within %v of each other", j-i, n, window/10)
			break
		}
	}
	cancel()
	for _, errc := range errcs {
		waitRun(t, errc, 3*time.Second)
	}
}

// TestMoveBackRefused: a ready first replica that refuses the node for
// good (a token it does not know) is tried once per session: the node
// stays where it is and says why.
func TestMoveBackRefused(t *testing.T) {
	a, b := newReplica(t), newReplica(t)
	b.up.Store(true)
	b.ready.Store(true)
	id := preferring(t, "n", 0, a, b)
	const hold = 100 * time.Millisecond
	logs, errc, cancel := startClient(t, moveConfig(t, id, hold, 0, a, b))
	b.waitSeen(id, "facts", 1, wait)
	a.refuse.Store(protocol.CodeUnauthorized)
	a.up.Store(true)
	a.ready.Store(true)
	a.waitSeen(id, "refused", 1, wait)
	time.Sleep(10 * hold)
	if n := len(a.seen(id, "refused")); n != 1 {
		t.Errorf("the node tried its refusing first replica %d times in one session, want once", n)
	}
	if got := b.seen(id, "closed"); got != nil {
		t.Errorf("the node left b: %+v", got)
	}
	if !strings.Contains(logs.String(), "a preferred gateway refused this node; staying") {
		t.Errorf("the log does not say the preferred gateway refused the node:\n%s", logs.String())
	}
	cancel()
	if err := waitRun(t, errc, 3*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestMoveBackOff: with moving back off (a negative MoveBack, the flag's
// 0) the node stays on the replica it failed over to and probes nothing.
func TestMoveBackOff(t *testing.T) {
	a, b := newReplica(t), newReplica(t)
	b.up.Store(true)
	b.ready.Store(true)
	id := preferring(t, "n", 0, a, b)
	_, errc, cancel := startClient(t, moveConfig(t, id, -1, 0, a, b))
	b.waitSeen(id, "facts", 1, wait)
	a.up.Store(true)
	a.ready.Store(true)
	time.Sleep(time.Second)
	if a.seen(id, "connect") != nil || a.probes.Load() != 0 {
		t.Errorf("with moving back off the node probed (%d) or moved to its first replica", a.probes.Load())
	}
	cancel()
	waitRun(t, errc, 3*time.Second)
}

// TestShutdownWhileMoving: ctx ending during the connect to the preferred
// replica closes both connections and returns within the grace period.
func TestShutdownWhileMoving(t *testing.T) {
	g := newFakeGateway(t, 0) // the preferred replica: answers nothing by itself
	b := newReplica(t)
	b.up.Store(true)
	b.ready.Store(true)
	// g's /readyz is a 404: a replica in front of it answers 200.
	front := newReplica(t)
	front.srv.Close()
	front.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/readyz" {
			w.Write([]byte(`{"ready":true}`))
			return
		}
		g.srv.Config.Handler.ServeHTTP(w, req)
	}))
	t.Cleanup(front.srv.Close)
	id := preferring(t, "n", 0, front, b)
	// The first dial goes to front (g): hold it there, unanswered, past
	// the connect timeout so that the node goes to b.
	_, errc, cancel := startClient(t, moveConfig(t, id, 100*time.Millisecond, 0, front, b),
		func(c *Client) { c.connectTimeout = 300 * time.Millisecond })
	g.accept().recv()
	b.waitSeen(id, "facts", 1, wait)
	gc := g.accept() // the move: connect sent, never answered
	if got := gc.recv(); !strings.Contains(got, `"method":"connect"`) {
		t.Fatalf("first frame of the move: %s", got)
	}
	start := time.Now()
	cancel()
	if err := waitRun(t, errc, 3*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run took %v to return after ctx ended during a move", d)
	}
	if code := gc.closed(); code != websocket.StatusGoingAway {
		t.Errorf("the connection being opened closed with %d, want 1001", code)
	}
	if got := b.waitSeen(id, "closed", 1, wait)[0]; got.code != websocket.StatusGoingAway || got.reason != protocol.CloseReasonNodeStop {
		t.Errorf("the old connection closed with %d %q, want 1001 %q", got.code, got.reason, protocol.CloseReasonNodeStop)
	}
}

func TestReadyURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ws://127.0.0.1:7780/v1/nodes/connect", "http://127.0.0.1:7780/readyz"},
		{"wss://gw-1.example.com/v1/nodes/connect", "https://gw-1.example.com/readyz"},
		{"wss://proxy.example.com/skillgate/v1/nodes/connect?x=1", "https://proxy.example.com/skillgate/readyz"},
	} {
		if got, err := readyURL(tc.in); err != nil || got != tc.want {
			t.Errorf("readyURL(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/store"
)

// The regression tests of issue 8 (an adversarial review of the gateway),
// on a real listener over the directory store.

const hardWait = 10 * time.Second

// hardGW is a gateway serving a directory store on 127.0.0.1.
type hardGW struct {
	s    *Server
	dir  string // the store's root
	addr string // 127.0.0.1:PORT
	logs *syncbuf.Buffer
}

func startHard(t *testing.T, cfg Config, files map[string]string) *hardGW {
	t.Helper()
	root := t.TempDir()
	testkit.WriteFiles(t, root, files)
	g := &hardGW{dir: root, logs: &syncbuf.Buffer{}}
	if cfg.Store == nil {
		st, err := store.NewDir(root)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Store = st
	}
	cfg.StoreName = root
	cfg.Logger = slog.New(slog.NewJSONHandler(g.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.Poll == 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g.s = s
	t.Cleanup(func() { // after Serve's cleanup: the logs are complete
		if t.Failed() {
			t.Logf("gateway logs:\n%s", g.logs.String())
		}
	})
	g.addr = testkit.Serve(t, s).Addr
	return g
}

// get sends a GET with an optional Host and headers; it returns the status
// and body.
func (g *hardGW) get(t *testing.T, path, host string, hdr http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+g.addr+path, nil)
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := (&http.Client{Timeout: hardWait}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// dial opens a node WebSocket.
func (g *hardGW) dial(t *testing.T) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(t.Context(), hardWait)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+g.addr+"/v1/nodes/connect", nil)
	if err == nil {
		c.SetReadLimit(protocol.ReadLimit)
		t.Cleanup(func() { c.CloseNow() })
	}
	return c, err
}

// connectNode dials and completes connect for id; it returns the socket.
func (g *hardGW) connectNode(t *testing.T, id, token string) (*websocket.Conn, error) {
	c, err := g.dial(t)
	if err != nil {
		return nil, err
	}
	if err := wsWrite(c, fmt.Sprintf(`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"token":%q,"node":{"id":%q,"os":"linux","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}}`, token, id)); err != nil {
		return nil, err
	}
	f, err := wsReadRes(c)
	if err != nil {
		return nil, err
	}
	if f.OK == nil || !*f.OK {
		return nil, fmt.Errorf("connect refused: %+v", f.Error)
	}
	return c, nil
}

func wsWrite(c *websocket.Conn, s string) error {
	ctx, cancel := context.WithTimeout(context.Background(), hardWait)
	defer cancel()
	return c.Write(ctx, websocket.MessageText, []byte(s))
}

// wsReadRes reads frames until a res.
func wsReadRes(c *websocket.Conn) (protocol.Frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hardWait)
	defer cancel()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return protocol.Frame{}, err
		}
		f, err := protocol.DecodeFrame(data)
		if err != nil {
			return protocol.Frame{}, err
		}
		if f.Type == protocol.TypeRes {
			return f, nil
		}
	}
}

// skillWithBin is a SKILL.md that needs one binary.
func skillWithBin(name, bin string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: Uses %s.\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [%q]}}}\n---\n# %s\n", name, bin, bin, name)
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Broken 1: 4,095 made-up agent ids made the cache hold 4,095 copies of
// the block (and of its gzip). Agents without skills of their own now
// share one entry.
func TestMadeUpAgentIDsDoNotGrowTheCache(t *testing.T) {
	files := map[string]string{}
	long := strings.Repeat("A long description that makes the block big. ", 40)
	for i := range 150 {
		files[fmt.Sprintf("skills/s%03d/SKILL.md", i)] = fmt.Sprintf("---\nname: s%03d\ndescription: %s %d\n---\n", i, long, i)
	}
	files["agents/own/skills/mine/SKILL.md"] = "---\nname: mine\ndescription: Only for agent own.\n---\n"
	// A budget over the block: the whole block, every time.
	cfgPath := filepath.Join(t.TempDir(), "gw.hujson")
	if err := os.WriteFile(cfgPath, []byte(`{"gateway": {"prompt": {"maxChars": 10000000, "maxSkills": 1000}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startHard(t, Config{ConfigPath: cfgPath}, files)
	code, block := g.get(t, "/v1/agents/main/prompt", "", nil)
	if code != 200 || len(block) < 250<<10 {
		t.Fatalf("prompt: %d, %d bytes; want a block over 250 KiB", code, len(block))
	}
	before := heapInUse()
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: hardWait}
	for i := range 4095 {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/v1/agents/made-up-%d/prompt", g.addr, i), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	grown := int64(heapInUse()) - int64(before)
	// 4,095 blocks of 250 KiB would be about 1 GiB; one shared block is
	// well under the bound whatever else the heap does.
	if grown > 64<<20 {
		t.Errorf("heap grew by %d MiB over 4,095 made-up agent ids; want them to share one block", grown>>20)
	}
	if _, body := g.get(t, "/v1/agents/own/prompt", "", nil); !strings.Contains(body, `name="mine"`) {
		t.Errorf("agent own lost its local skill: %.200s", body)
	}
	if n, _ := g.s.prompts.stats(); n != 2 {
		t.Errorf("prompt cache holds %d entries; want 2 (the shared global view and agent own)", n)
	}
}

// The byte bound evicts entries one by one, stale ones first, and never
// empties the cache at once.
func TestViewCacheBounds(t *testing.T) {
	c := newViewCache[string](4, 1000)
	c.put("a", 1, 1, 300, "a")
	c.put("b", 0, 1, 300, "b") // stale
	c.put("c", 1, 1, 300, "c")
	c.put("d", 1, 1, 300, "d") // over 1000 bytes: the stale one goes
	if _, ok := c.peek("b"); ok {
		t.Error("stale entry b kept while over the byte bound")
	}
	n, bytes := c.stats()
	if n != 3 || bytes != 900 {
		t.Errorf("entries %d, bytes %d; want 3, 900", n, bytes)
	}
	c.put("e", 1, 1, 300, "e")
	if n, bytes := c.stats(); n != 3 || bytes != 900 {
		t.Errorf("after one more: entries %d, bytes %d; want 3, 900 (one evicted, not all)", n, bytes)
	}
	if v, ok := c.get("e", 1); !ok || v != "e" {
		t.Error("the entry just stored was evicted")
	}
	for i := range 10 {
		c.put(fmt.Sprint("k", i), 1, 1, 10, "k")
	}
	if n, _ := c.stats(); n != 4 {
		t.Errorf("entries %d; want the entry bound 4", n)
	}
}

// Broken 2: a client announcing a body it never sends kept its socket
// forever. The read timeout ends it; a node's WebSocket is not cut.
func TestHalfSentRequestIsCut(t *testing.T) {
	g := startHard(t, Config{ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond},
		map[string]string{"skills/alpha/SKILL.md": skillWithBin("alpha", "alpha-tool")})
	c, err := net.Dial("tcp", g.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\nContent-Length: 100000\r\n\r\n", g.addr)
	// The server waits for the announced body (before or after its
	// answer); it must give up and close the connection.
	c.SetReadDeadline(time.Now().Add(hardWait))
	_, err = io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection still open after %v: the gateway waits forever for a body", hardWait)
	}

	// A node's socket outlives both timeouts many times over.
	ws, err := g.connectNode(t, "n1", "")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := wsWrite(ws, `{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{"alpha-tool":true}}}`); err != nil {
		t.Fatalf("node socket cut by the HTTP timeouts: %v", err)
	}
	if f, err := wsReadRes(ws); err != nil || !*f.OK {
		t.Fatalf("facts.update after the HTTP timeouts: %+v, %v", f, err)
	}
}

// Broken 3: a caller that never reads a large answer held it for as long
// as it stayed connected. The write timeout ends the connection.
func TestUnreadAnswerIsCut(t *testing.T) {
	files := map[string]string{}
	desc := strings.Repeat("x", 100<<10)
	for i := range 100 { // a 10 MB block: more than loopback buffers hold
		files[fmt.Sprintf("skills/s%03d/SKILL.md", i)] = fmt.Sprintf("---\nname: s%03d\ndescription: %s\n---\n", i, desc)
	}
	g := startHard(t, Config{WriteTimeout: 500 * time.Millisecond}, files)
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", g.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v1/agents/main/prompt HTTP/1.1\r\nHost: %s\r\n\r\n", g.addr)
	time.Sleep(2 * time.Second) // never reading, well past the write timeout
	c.SetReadDeadline(time.Now().Add(hardWait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return // cut before the headers got out: fine
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && n == resp.ContentLength {
		t.Errorf("a client that did not read for 2s still got the whole %d-byte answer: no write timeout", n)
	}
}

// The /v1/nodes answer is built once per registry change, not per call.
func TestNodesAnswerIsCached(t *testing.T) {
	g := startHard(t, Config{}, map[string]string{"skills/alpha/SKILL.md": skillWithBin("alpha", "alpha-tool")})
	ws, err := g.connectNode(t, "n1", "")
	if err != nil {
		t.Fatal(err)
	}
	a, b := g.s.nodeEntries(), g.s.nodeEntries()
	if &a[0] != &b[0] {
		t.Error("two calls without a node event built the answer twice")
	}
	wsWrite(ws, `{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{"alpha-tool":true}}}`)
	wsReadRes(ws)
	if c := g.s.nodeEntries(); !strings.Contains(string(c[0].fields[5]), `"alpha-tool":true`) {
		t.Errorf("answer after facts.update is stale: %s", c[0].fields[5])
	}
	if _, body := g.get(t, "/v1/nodes", "", nil); !strings.HasPrefix(body, `{"nodes":[{"id":"n1",`) {
		t.Errorf("GET /v1/nodes = %s", body)
	}
}

// Broken 4: sockets that never send connect took every node slot. They
// now have caps of their own, and the oldest is closed for a newer one.
func TestSilentSocketsCannotStarveNodes(t *testing.T) {
	g := startHard(t, Config{MaxNodes: 3, MaxPending: 16, MaxPendingPerAddr: 8}, nil)
	var silent []*websocket.Conn
	for range 40 {
		c, err := g.dial(t)
		if err != nil {
			t.Fatalf("silent socket refused: %v (pending sockets are evicted, not refused)", err)
		}
		silent = append(silent, c)
	}
	for i := range 3 {
		if _, err := g.connectNode(t, fmt.Sprint("real-", i), ""); err != nil {
			t.Fatalf("real node %d behind 40 silent sockets: %v", i, err)
		}
	}
	if n := g.s.pending.len(); n > 8 {
		t.Errorf("%d pending sockets; want at most the per-address cap 8", n)
	}
	// The oldest silent socket was dropped.
	ctx, cancel := context.WithTimeout(t.Context(), hardWait)
	defer cancel()
	if _, _, err := silent[0].Read(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("oldest silent socket: %v; want it dropped", err)
	}
	// maxNodes bounds connected nodes: the fourth is refused at connect,
	// with a code the node retries on.
	if _, err := g.connectNode(t, "real-3", ""); err == nil || !strings.Contains(err.Error(), protocol.CodeUnavailable) {
		t.Errorf("fourth node: %v; want refused as %s", err, protocol.CodeUnavailable)
	}
	// A reconnect of a connected id replaces it even when full.
	if _, err := g.connectNode(t, "real-0", ""); err != nil {
		t.Errorf("replacing a connected node on a full gateway: %v", err)
	}
}

func TestPendingCaps(t *testing.T) {
	p := newPendingSockets(4, 2)
	s := make([]*nodeConn, 6)
	for i := range s {
		s[i] = &nodeConn{}
	}
	if ev := p.add(s[0], "10.0.0.1:1"); len(ev) != 0 {
		t.Fatal("evicted under the caps")
	}
	p.add(s[1], "10.0.0.1:2")
	if ev := p.add(s[2], "10.0.0.1:3"); len(ev) != 1 || ev[0] != s[0] {
		t.Fatalf("per-address cap: evicted %v; want the address's oldest", ev)
	}
	p.add(s[3], "10.0.0.2:1")
	p.add(s[4], "10.0.0.3:1")
	if ev := p.add(s[5], "10.0.0.4:1"); len(ev) != 1 || ev[0] != s[1] {
		t.Fatalf("total cap: evicted %v; want the oldest of all", ev)
	}
	if p.done(s[1]) || !p.done(s[2]) || p.len() != 3 {
		t.Errorf("done: evicted sockets are not pending; len %d, want 3", p.len())
	}
}

// Broken 8: a tokenless gateway answered any Host, so a page whose DNS
// name was rebound to 127.0.0.1 could read skills and register nodes.
func TestDNSRebinding(t *testing.T) {
	g := startHard(t, Config{}, map[string]string{"skills/alpha/SKILL.md": skillWithBin("alpha", "alpha-tool")})
	_, port, _ := net.SplitHostPort(g.addr)
	for host, want := range map[string]int{
		"evil.example":             403,
		"evil.example:" + port:     403,
		"127.0.0.1.nip.io:" + port: 403,
		"localhost:" + port:        200,
		"LOCALHOST":                200,
		"127.0.0.1:" + port:        200,
		"127.9.9.9:" + port:        200,
		"[::1]:" + port:            200,
		"[::1]":                    200,
		"10.0.0.1:" + port:         403,
	} {
		for _, path := range []string{"/v1/agents/main/prompt", "/v1/nodes", "/readyz"} {
			if code, body := g.get(t, path, host, nil); code != want {
				t.Errorf("Host %q %s: %d %s; want %d", host, path, code, body, want)
			}
		}
	}
	// The upgrade too, with Origin and Host both the attacker's.
	ctx, cancel := context.WithTimeout(t.Context(), hardWait)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws://"+g.addr+"/v1/nodes/connect", &websocket.DialOptions{
		Host: "evil.example:" + port, HTTPHeader: http.Header{"Origin": {"http://evil.example:" + port}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("upgrade with a rebound Host: %v %v; want 403", err, resp)
	}

	// With tokens the name does not matter.
	g2 := startHard(t, Config{AgentToken: "agent-secret", NodeToken: "node-secret"}, nil)
	if code, _ := g2.get(t, "/v1/agents/main/prompt", "skills.example.com", http.Header{"Authorization": {"Bearer agent-secret"}}); code != 200 {
		t.Errorf("with a token, Host skills.example.com: %d; want 200", code)
	}
}

// Degraded 1: only facts.update was paced; every frame kind is now.
func TestEveryFrameKindIsPaced(t *testing.T) {
	g := startHard(t, Config{}, nil)
	ws, err := g.connectNode(t, "n1", "")
	if err != nil {
		t.Fatal(err)
	}
	const n = 21
	start := time.Now()
	for i := range n {
		if err := wsWrite(ws, fmt.Sprintf(`{"type":"req","id":"x%d","method":"no.such.method","params":{}}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		if _, err := wsReadRes(ws); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < (n-1)*minFrameInterval {
		t.Errorf("%d unknown-method frames answered in %v; want them paced %v apart", n, d, minFrameInterval)
	}
}

// The processing budget: a node whose frames cost more than frameBudget
// per second waits until it has paid for them.
func TestPacerBudget(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := newPacer(t0)
	if d := p.delay(t0); d != 0 {
		t.Fatalf("first frame delayed %v", d)
	}
	p.start(t0)
	p.charge(frameBurst + 100*time.Millisecond) // 100ms past the burst
	now := t0.Add(time.Millisecond)
	got := p.delay(now)
	// 100ms of debt (less what 1ms earned) is repaid at frameBudget per second.
	want := time.Duration(float64(100*time.Millisecond-time.Millisecond*frameBudget/time.Second) / (float64(frameBudget) / float64(time.Second)))
	if got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("delay after overspending = %v; want about %v", got, want)
	}
	// Cheap frames only wait for the interval.
	p2 := newPacer(t0)
	p2.start(t0)
	p2.charge(time.Millisecond)
	if d := p2.delay(t0.Add(10 * time.Millisecond)); d != minFrameInterval-10*time.Millisecond {
		t.Errorf("cheap frame delay = %v; want %v", d, minFrameInterval-10*time.Millisecond)
	}
}

// Degraded 4: a revoked node counted until its close handshake ended
// (about 5 s with a peer that does not answer it).
func TestRevokedNodeStopsCountingAtOnce(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "gw.hujson")
	os.WriteFile(cfgPath, []byte(`{"gateway": {"nodeTokens": {"n1": "t1"}}}`), 0o600)
	g := startHard(t, Config{ConfigPath: cfgPath, NodeToken: "shared"}, map[string]string{"skills/alpha/SKILL.md": skillWithBin("alpha", "alpha-tool")})
	ws, err := g.connectNode(t, "n1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	wsWrite(ws, `{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{"alpha-tool":true}}}`)
	wsReadRes(ws)
	if !strings.Contains(g.s.promptFor("main"), `name="alpha"`) {
		t.Fatal("alpha not offered with n1 connected")
	}
	// From here the node reads nothing: it would never answer a close.
	os.WriteFile(cfgPath, []byte(`{"gateway": {"nodeTokens": {"n1": "t2"}}}`), 0o600)
	g.s.reloadConfig(true)
	if p := g.s.promptFor("main"); strings.Contains(p, `name="alpha"`) {
		t.Errorf("revoked node still counts right after the reload: %s", p)
	}
}

// failingStore fails every listing while fail is set, with an error that
// names a path, as OS errors do.
type failingStore struct {
	store.Store
	fail *atomic.Bool
}

func (f failingStore) List(ctx context.Context, prefix string) ([]store.Object, error) {
	if f.fail.Load() {
		return nil, &os.PathError{Op: "open", Path: "/srv/secret-store/skills", Err: syscall.EACCES}
	}
	return f.Store.List(ctx, prefix)
}

// Degraded 6: the open /readyz showed the store's path and OS error text.
func TestReadyzHidesInternals(t *testing.T) {
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	g := startHard(t, Config{Store: failingStore{st, &fail}}, nil)
	waitCode := func(want int) string {
		var body string
		testkit.Eventually(t, hardWait, func() (string, bool) {
			var code int
			code, body = g.get(t, "/readyz", "", nil)
			return fmt.Sprintf("/readyz answered %d %s, want %d", code, body, want), code == want
		})
		return body
	}
	waitCode(200)
	fail.Store(true)
	body := waitCode(503)
	for _, leak := range []string{"/srv/secret-store", "permission denied", g.dir} {
		if strings.Contains(body, leak) {
			t.Errorf("/readyz shows %q: %s", leak, body)
		}
	}
	if !strings.Contains(g.logs.String(), "/srv/secret-store/skills") {
		t.Error("the log should keep the full error")
	}
}

package gateway_test

// Shared machinery of the gateway's end-to-end tests: a real gateway on a
// real loopback listener, a real MinIO (one per package, a bucket per test),
// real skillgate-node processes built once (testkit.Binaries), and a raw WebSocket
// client for the protocol tests. Nothing here is a mock.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/store"
)

// waitFor bounds every wait of these tests.
const waitFor = 10 * time.Second

var sharedMinio miniotest.Once

func TestMain(m *testing.M) {
	code := m.Run()
	sharedMinio.Close()
	os.Exit(code)
}

// nodeBin returns the skillgate-node binary, built once for every package
// that runs it (testkit.Binaries).
func nodeBin(t *testing.T) string {
	t.Helper()
	return testkit.Binary(t, "cmd/skillgate-node")
}

// ---------------------------------------------------------------------------
// Polling

// eventually calls f until it reports true, and returns its value. On
// timeout it fails t with the last value f observed.
func eventually(t *testing.T, timeout time.Duration, f func() (string, bool)) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v, ok := f()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v; last observed:\n%s", timeout, v)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended while waiting; last observed:\n%s", v)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ---------------------------------------------------------------------------
// Logs

// ---------------------------------------------------------------------------
// Gateway

// gw is a real gateway serving on a real 127.0.0.1 listener.
type gw struct {
	srv     *gateway.Server
	base    string // http://127.0.0.1:PORT
	wsURL   string // ws://127.0.0.1:PORT/v1/nodes/connect
	logs    *syncbuf.Buffer
	store   *store.S3
	cfgPath string
	token   string // agent bearer token, sent by the helpers when set
	stop    func() // cancels Serve's context and waits for it to return
}

type gwOptions struct {
	minio          *miniotest.Server // nil: the package's shared server
	files          map[string]string // initial bucket content
	config         string            // config file content; "" → "{}"
	nodeToken      string
	agentToken     string
	poll           time.Duration // default 200ms
	connectTimeout time.Duration
	pingInterval   time.Duration
	maxNodes       int
	firstByte      time.Duration // the listener's first-byte timeout; 0: the default
	silentPerAddr  int           // silent connections per address; 0: the default
	// Replicas: a store shared with other gateways (nil: a fresh bucket
	// with files), this one's replica name, and its cluster membership.
	store   *store.S3
	replica string
	cluster *cluster.Config
}

// newBucketStore makes a fresh bucket on srv and returns its S3 store.
func newBucketStore(t *testing.T, srv *miniotest.Server) *store.S3 {
	t.Helper()
	st, err := store.NewS3(t.Context(), store.S3Config{
		Bucket:          srv.Bucket(t),
		Endpoint:        srv.Endpoint,
		Region:          "us-east-1",
		PathStyle:       true,
		AccessKeyID:     srv.AccessKey,
		SecretAccessKey: srv.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// startGateway starts a gateway on MinIO for t; it stops when t ends.
func startGateway(t *testing.T, o gwOptions) *gw {
	t.Helper()
	m := o.minio
	if m == nil {
		m = sharedMinio.Get(t)
	}
	st := o.store
	if st == nil {
		st = newBucketStore(t, m)
	}
	g := &gw{store: st, logs: &syncbuf.Buffer{}, token: o.agentToken}
	for k, v := range o.files {
		g.put(t, k, v)
	}
	g.cfgPath = filepath.Join(t.TempDir(), "gateway.hujson")
	if o.config == "" {
		o.config = "{}"
	}
	g.writeConfig(t, o.config)
	if o.poll == 0 {
		o.poll = 200 * time.Millisecond
	}
	srv, err := gateway.New(gateway.Config{
		Listen:           "127.0.0.1:0",
		Store:            st,
		StoreName:        "s3://" + st.Bucket(),
		ConfigPath:       g.cfgPath,
		Poll:             o.poll,
		NodeToken:        o.nodeToken,
		MaxNodes:         o.maxNodes,
		AgentToken:       o.agentToken,
		ConnectTimeout:   o.connectTimeout,
		FirstByteTimeout: o.firstByte,
		MaxSilentPerAddr: o.silentPerAddr,
		PingInterval:     o.pingInterval,
		Replica:          o.replica,
		Cluster:          o.cluster,
		Logger:           slog.New(slog.NewJSONHandler(g.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	g.srv = srv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.base = "http://" + ln.Addr().String()
	g.wsURL = "ws://" + ln.Addr().String() + "/v1/nodes/connect"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var stopOnce sync.Once
	g.stop = func() {
		stopOnce.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(waitFor):
				t.Errorf("Serve did not return within %v of its context ending", waitFor)
			}
		})
	}
	t.Cleanup(func() {
		g.stop()
		if t.Failed() {
			t.Logf("gateway logs:\n%s", tail(g.logs.String(), 16<<10))
		}
	})
	// Ready once the first snapshot is in.
	eventually(t, waitFor, func() (string, bool) {
		code, _, body := g.get(t, "/readyz", nil)
		return fmt.Sprint(code, " ", body), code == http.StatusOK
	})
	return g
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// put writes a bucket object.
func (g *gw) put(t *testing.T, key, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := g.store.Put(ctx, key, []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// del removes a bucket object.
func (g *gw) del(t *testing.T, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := g.store.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
}

// writeConfig replaces the config file atomically (the gateway polls it).
func (g *gw) writeConfig(t *testing.T, content string) {
	t.Helper()
	tmp := g.cfgPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, g.cfgPath); err != nil {
		t.Fatal(err)
	}
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// get does a GET on the gateway with the agent token (when configured)
// plus hdr, and returns the status, headers and body.
func (g *gw) get(t *testing.T, pathAndQuery string, hdr http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, g.base+pathAndQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", pathAndQuery, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", pathAndQuery, err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// prompt returns the agent's prompt block; the request must succeed.
func (g *gw) prompt(t *testing.T, agent string) string {
	t.Helper()
	code, hdr, body := g.get(t, "/v1/agents/"+agent+"/prompt", nil)
	if code != http.StatusOK {
		t.Fatalf("GET prompt of %s: %d %s", agent, code, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET prompt of %s: Content-Type %q, want text/plain", agent, ct)
	}
	return body
}

// waitPrompt waits until the agent's prompt block is exactly want.
func (g *gw) waitPrompt(t *testing.T, agent, want string) {
	t.Helper()
	eventually(t, waitFor, func() (string, bool) {
		got := g.prompt(t, agent)
		return fmt.Sprintf("got:\n%s\nwant:\n%s", got, want), got == want
	})
}

// nodeView is one node of GET /v1/nodes.
type nodeView struct {
	ID            string          `json:"id"`
	OS            string          `json:"os"`
	Roles         []string        `json:"roles"`
	Capabilities  []string        `json:"capabilities"`
	Env           []string        `json:"env"`
	HostBinStatus map[string]bool `json:"hostBinStatus"`
	ConnectedAt   string          `json:"connectedAt"`
	FactsAt       *string         `json:"factsAt"`
}

// nodes returns GET /v1/nodes, decoded, and its raw body.
func (g *gw) nodes(t *testing.T) ([]nodeView, string) {
	t.Helper()
	code, _, body := g.get(t, "/v1/nodes", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /v1/nodes: %d %s", code, body)
	}
	var out struct {
		Nodes []nodeView `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("GET /v1/nodes: %v\n%s", err, body)
	}
	return out.Nodes, body
}

// nodeIDs lists the ids of GET /v1/nodes that have reported facts.
func (g *gw) reportingNodeIDs(t *testing.T) string {
	ns, _ := g.nodes(t)
	var ids []string
	for _, n := range ns {
		if n.FactsAt != nil {
			ids = append(ids, n.ID)
		}
	}
	return strings.Join(ids, ",")
}

// waitNodes waits until exactly these node ids (comma separated, sorted)
// have reported facts.
func (g *gw) waitNodes(t *testing.T, want string) {
	t.Helper()
	eventually(t, waitFor, func() (string, bool) {
		got := g.reportingNodeIDs(t)
		return fmt.Sprintf("reporting nodes %q, want %q", got, want), got == want
	})
}

// metric sums the samples of a metric whose labels include every one of
// labels (e.g. `op="get"`).
func (g *gw) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	code, _, body := g.get(t, "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, lbl, _ := strings.Cut(series, "{")
		if n != name {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(lbl, l) {
				match = false
			}
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// ---------------------------------------------------------------------------
// Skills and expected blocks

// skillMD returns a SKILL.md with a name, a description and, when requires
// is not empty, metadata {"gsv":{"requires": requires}} (a JSON object).
func skillMD(name, description, requires string) string {
	var b strings.Builder
	b.WriteString("---\nname: " + name + "\ndescription: " + description + "\n")
	if requires != "" {
		b.WriteString(`metadata: '{"gsv": {"requires": ` + requires + `}}'` + "\n")
	}
	b.WriteString("---\n\n# " + name + "\n\nBody of " + name + ".\n")
	return b.String()
}

// alwaysMD returns a SKILL.md with always: true.
func alwaysMD(name, description string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\nalways: true\n---\n\n# " + name + "\n"
}

// entry is one expected <skill> of a block.
type entry struct {
	name, desc, location string
	always               bool
}

// global is an entry of the global skill skills/{name}/SKILL.md.
func global(name, desc string) entry {
	return entry{name: name, desc: desc, location: "skills/" + name + "/SKILL.md"}
}

// block renders the exact <available_skills> text DESIGN.md specifies,
// written out independently of promptbuild, within the default budget
// (the entries must fit it whole): entries in priority order, as DESIGN.md
// orders them without skills.entries priorities: always first, then
// agent-local, then by name. Values must need no escaping.
func block(entries ...entry) string {
	if len(entries) == 0 {
		return ""
	}
	entries = slices.Clone(entries)
	slices.SortStableFunc(entries, func(a, b entry) int {
		if a.always != b.always {
			if a.always {
				return -1
			}
			return 1
		}
		if la, lb := strings.HasPrefix(a.location, "agents/"), strings.HasPrefix(b.location, "agents/"); la != lb {
			if la {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	var b strings.Builder
	b.WriteString("<available_skills>\n")
	for _, e := range entries {
		readPath := e.location
		if rest, ok := strings.CutPrefix(e.location, "agents/"); ok {
			readPath = rest[strings.Index(rest, "/skills/")+1:]
		}
		always := ""
		if e.always {
			always = ` always="true"`
		}
		fmt.Fprintf(&b, "  <skill name=\"%s\"%s>\n    <description>%s</description>\n    <location>%s</location>\n    <read_path>%s</read_path>\n  </skill>\n",
			e.name, always, e.desc, e.location, readPath)
	}
	b.WriteString("</available_skills>")
	return b.String()
}

// ---------------------------------------------------------------------------
// skillgate-node processes

// nodeProc is a running skillgate-node process.
type nodeProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{}
	err  error // Wait's result, valid after done
}

// binDir makes a directory holding executable shell scripts of these names.
func binDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		addBin(t, dir, n)
	}
	return dir
}

// addBin puts a real executable script into dir.
func addBin(t *testing.T, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, name)
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte("#!/bin/sh\necho "+name+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// startNode runs skillgate-node against g with --id id, --path pathDir,
// --recheck 200ms, and exactly env as its environment (plus HOME). Extra
// arguments are appended. It is killed when t ends.
func startNode(t *testing.T, gatewayBase, id, pathDir string, env []string, extra ...string) *nodeProc {
	t.Helper()
	args := []string{"--gateway", gatewayBase, "--id", id, "--path", pathDir, "--recheck", "200ms"}
	args = append(args, extra...)
	cmd := exec.Command(nodeBin(t), args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir()}, env...)
	p := &nodeProc{t: t, cmd: cmd, out: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("skillgate-node %s output:\n%s", id, tail(p.out.String(), 8<<10))
		}
	})
	return p
}

// kill kills the process and waits for it.
func (p *nodeProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(waitFor):
		p.t.Errorf("skillgate-node did not exit within %v of SIGKILL", waitFor)
	}
}

// wait waits for the process to exit on its own and returns its exit code.
func (p *nodeProc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.t.Fatalf("skillgate-node still running after %v; output:\n%s", timeout, p.out.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatalf("skillgate-node: %v", p.err)
	}
	return 0
}

// ---------------------------------------------------------------------------
// Raw WebSocket client

// rawNode is a hand-driven node connection, for sending what a real node
// never would.
type rawNode struct {
	t *testing.T
	c *websocket.Conn
}

func dialRaw(t *testing.T, g *gw) *rawNode {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	c, _, err := websocket.Dial(ctx, g.wsURL, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", g.wsURL, err)
	}
	c.SetReadLimit(protocol.ReadLimit)
	t.Cleanup(func() { c.CloseNow() })
	return &rawNode{t: t, c: c}
}

func (r *rawNode) send(typ websocket.MessageType, data []byte) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := r.c.Write(ctx, typ, data); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *rawNode) sendText(s string) { r.t.Helper(); r.send(websocket.MessageText, []byte(s)) }

// next reads the next frame the gateway sends, checked with
// protocol.DecodeFrame. err is the read error (a close, typically).
func (r *rawNode) next(timeout time.Duration) (protocol.Frame, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	typ, data, err := r.c.Read(ctx)
	if err != nil {
		return protocol.Frame{}, err
	}
	if typ != websocket.MessageText {
		r.t.Fatalf("gateway sent a binary frame: %q", data)
	}
	f, err := protocol.DecodeFrame(data)
	if err != nil {
		r.t.Fatalf("gateway sent a frame that does not decode: %v\n%s", err, data)
	}
	return f, nil
}

// res reads frames until a res (events are skipped) and returns it.
func (r *rawNode) res() protocol.Frame {
	r.t.Helper()
	for {
		f, err := r.next(waitFor)
		if err != nil {
			r.t.Fatalf("waiting for a res: %v", err)
		}
		if f.Type == protocol.TypeRes {
			return f
		}
	}
}

// expectErr reads the next res and checks it is an error with this id and
// code.
func (r *rawNode) expectErr(id, code string) protocol.Frame {
	r.t.Helper()
	f := r.res()
	if *f.OK || f.Error == nil || f.Error.Code != code || f.ID != id {
		r.t.Fatalf("got res %+v (error %+v), want ok:false id %q code %q", f, f.Error, id, code)
	}
	if f.Error.Message == "" {
		r.t.Errorf("error %s has no message", code)
	}
	return f
}

// expectOK reads the next res and checks it is ok:true with this id.
func (r *rawNode) expectOK(id string) protocol.Frame {
	r.t.Helper()
	f := r.res()
	if !*f.OK || f.ID != id {
		r.t.Fatalf("got res %+v (error %+v), want ok:true id %q", f, f.Error, id)
	}
	return f
}

// expectClose reads until the connection ends and checks the close status
// (and the reason, when reason is not empty). Events are skipped; a res is
// an error.
func (r *rawNode) expectClose(code websocket.StatusCode, reason string) {
	r.t.Helper()
	for {
		f, err := r.next(waitFor)
		if err == nil {
			if f.Type == protocol.TypeRes {
				r.t.Fatalf("got res %+v (error %+v), want the socket closed with %d", f, f.Error, code)
			}
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			r.t.Fatalf("connection ended with %v, want a close frame with status %d", err, code)
		}
		if ce.Code != code {
			r.t.Fatalf("closed with %d %q, want %d", ce.Code, ce.Reason, code)
		}
		if reason != "" && ce.Reason != reason {
			r.t.Fatalf("closed with %d reason %q, want reason %q", ce.Code, ce.Reason, reason)
		}
		return
	}
}

// connectFrame is a req connect. An empty token leaves "token" out.
func connectFrame(reqID, nodeID, token string, proto int, roles, caps []string) string {
	params := map[string]any{
		"protocol": proto,
		"client":   "e2e-raw/1",
		"node":     map[string]any{"id": nodeID, "os": "linux", "roles": roles, "capabilities": caps},
	}
	if token != "" {
		params["token"] = token
	}
	b, err := json.Marshal(map[string]any{"type": "req", "id": reqID, "method": "connect", "params": params})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// baseline is the capability set every execution host must have.
var baseline = []string{"filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"}

// connect sends a valid connect for nodeID and expects ok:true; it returns
// the interest the gateway answered with.
func (r *rawNode) connect(nodeID, token string) protocol.Interest {
	r.t.Helper()
	r.sendText(connectFrame("c1", nodeID, token, protocol.Version, []string{"execution"}, baseline))
	f := r.expectOK("c1")
	res, err := protocol.ParseConnectResult(f.Payload)
	if err != nil {
		r.t.Fatalf("connect result: %v", err)
	}
	return res.Interest
}

// factsFrame is a req facts.update.
func factsFrame(reqID string, env []string, bins map[string]bool) string {
	if env == nil {
		env = []string{}
	}
	if bins == nil {
		bins = map[string]bool{}
	}
	b, err := json.Marshal(map[string]any{"type": "req", "id": reqID, "method": "facts.update",
		"params": map[string]any{"env": env, "hostBinStatus": bins}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// facts sends a facts.update and expects ok:true.
func (r *rawNode) facts(reqID string, env []string, bins map[string]bool) {
	r.t.Helper()
	r.sendText(factsFrame(reqID, env, bins))
	r.expectOK(reqID)
}

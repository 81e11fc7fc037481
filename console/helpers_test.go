package console_test

// The machinery of the console's browser test: a real gateway (in this
// process, on a directory store and a real 127.0.0.1 listener) and real
// skillgate-node processes built once (testkit.Binaries). Adapted from
// gateway/helpers_test.go; nothing here is a mock.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/store"
)

// waitFor bounds every wait of these tests.
const waitFor = 10 * time.Second

// nodeBin returns the skillgate-node binary, built once for every package
// that runs it (testkit.Binaries).
func nodeBin(t *testing.T) string {
	t.Helper()
	return testkit.Binary(t, "cmd/skillgate-node")
}

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

// gw is a real gateway serving on a real 127.0.0.1 listener, on a
// directory store.
type gw struct {
	base    string // http://127.0.0.1:PORT
	store   string // the store directory
	cfgPath string // the config file
	logs    *syncbuf.Buffer
	token   string // admin token, sent by get when set
}

// writeConfig replaces the gateway's config file (a poll reloads it).
func (g *gw) writeConfig(t *testing.T, content string) {
	t.Helper()
	if err := os.WriteFile(g.cfgPath, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

type gwOptions struct {
	files      map[string]string // initial store content, key → body
	config     string            // config file content; "" → "{}"
	agentToken string            // SKILLGATE_AGENT_TOKEN
	// unloaded removes the store directory before the gateway's first
	// poll (put makes it again), and does not wait for readiness.
	unloaded bool
}

// startGateway starts a gateway for t; it stops when t ends.
func startGateway(t *testing.T, o gwOptions) *gw {
	t.Helper()
	g := &gw{store: t.TempDir(), logs: &syncbuf.Buffer{}, token: o.agentToken}
	for k, v := range o.files {
		g.put(t, k, v)
	}
	st, err := store.NewDir(g.store)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "gateway.hujson")
	g.cfgPath = cfgPath
	if o.config == "" {
		o.config = "{}"
	}
	if err := os.WriteFile(cfgPath, []byte(o.config), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := gateway.New(gateway.Config{
		Listen:     "127.0.0.1:0",
		Store:      st,
		StoreName:  g.store,
		ConfigPath: cfgPath,
		Poll:       200 * time.Millisecond,
		AgentToken: o.agentToken,
		Logger:     slog.New(slog.NewJSONHandler(g.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.base = "http://" + ln.Addr().String()
	if o.unloaded {
		if err := os.RemoveAll(g.store); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var stopOnce sync.Once
	t.Cleanup(func() {
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
		if t.Failed() {
			t.Logf("gateway logs:\n%s", tail(g.logs.String(), 16<<10))
		}
	})
	if o.unloaded {
		return g
	}
	eventually(t, waitFor, func() (string, bool) {
		code, _, body := g.get(t, "/readyz", "")
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

// put writes a store file (atomically: the gateway polls the directory).
func (g *gw) put(t *testing.T, key, body string) {
	t.Helper()
	p := filepath.Join(g.store, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

var httpClient = &http.Client{
	Timeout:       5 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// get does a GET with token as bearer token (none when "") and returns
// the status, headers and body.
func (g *gw) get(t *testing.T, pathAndQuery, token string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, g.base+pathAndQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
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

// skillMD returns a SKILL.md with a name, a description and, when requires
// is not empty, metadata {"gsv":{"requires": requires}} (a JSON object),
// and body after the heading.
func skillMD(name, description, requires, body string) string {
	var b strings.Builder
	b.WriteString("---\nname: " + name + "\ndescription: " + description + "\n")
	if requires != "" {
		b.WriteString(`metadata: '{"gsv": {"requires": ` + requires + `}}'` + "\n")
	}
	b.WriteString("---\n\n# " + name + "\n\n" + body + "\n")
	return b.String()
}

// nodeProc is a running skillgate-node process.
type nodeProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{}
}

// binDir makes a directory holding executable shell scripts of these names.
func binDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+n+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startNode runs skillgate-node against the gateway with --id id, --path
// pathDir, --recheck 200ms and only HOME in its environment. It is killed
// when t ends.
func startNode(t *testing.T, gatewayBase, id, pathDir string) *nodeProc {
	t.Helper()
	cmd := exec.Command(nodeBin(t), "--gateway", gatewayBase, "--id", id, "--path", pathDir, "--recheck", "200ms")
	cmd.Env = []string{"HOME=" + t.TempDir()}
	p := &nodeProc{t: t, cmd: cmd, out: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
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

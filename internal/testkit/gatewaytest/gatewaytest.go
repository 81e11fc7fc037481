// Package gatewaytest runs a real gateway for end-to-end tests, as
// net/http/httptest runs a server: in this process (Start), on a real
// 127.0.0.1 listener, over a directory store or a MinIO bucket, with or
// without TLS, alone or as a replica of a cluster; or as a `skillgate
// serve` process (StartProcess), as operators run it. Nothing here is a
// mock.
//
// It imports the gateway, so only the gateway's external tests (package
// gateway_test) and other packages' tests can use it; the gateway's own
// in-package tests serve their server with testkit.Serve, which this
// package builds on. Every piece that is not about the gateway (waiting,
// processes, nodes, ports, files) is in testkit.
package gatewaytest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/testkit"
)

// Wait bounds every wait of this package (readiness, Serve's return).
const Wait = 10 * time.Second

// Options say what Start serves. The zero value serves an empty directory
// store with no config file.
type Options struct {
	// Config is the gateway's configuration. Start sets Store, Listen and
	// Logger (JSON at debug level, into Gateway.Logs), StoreName when
	// empty (the directory, or s3://BUCKET), ConfigPath when ConfigFile
	// is set, and Poll when zero (200 ms).
	Config gateway.Config
	// Files are the store's first content, key → body.
	Files map[string]string
	// MinIO, when set, holds the store: a fresh bucket on that server
	// (miniotest.Once shares one among a package's tests). Otherwise it
	// is a fresh directory.
	MinIO *miniotest.Server
	// Dir, when set, is the directory the store serves (Files are
	// written into it), instead of a fresh one.
	Dir string
	// Shared, when set, is a store another gateway serves too (replicas),
	// made by NewStore or handed on by Gateway.Shared; MinIO and Dir are
	// then ignored. Config.Store, when set, is served as it is.
	Shared *Store
	// ConfigFile, when not empty, is the content of the config file Start
	// writes (WriteConfig replaces it).
	ConfigFile string
	// CA, when set, makes the client trust only it, and the URLs https:
	// for a gateway given Config.TLSCert and TLSKey.
	CA *x509.CertPool
	// Token is the bearer token Get sends ("": none).
	Token string
	// Unloaded removes the directory store before the gateway's first
	// poll (Put makes it again), and Start does not wait for readiness.
	Unloaded bool
	// NoWait: Start returns without waiting for /readyz to answer 200.
	NoWait bool
	// ListenAfter, when set, opens the listener only after this long
	// (nodes started before their gateway), and Start does not wait for
	// readiness.
	ListenAfter time.Duration
	// StopWithin bounds how long Serve may take to return when the test
	// ends; 0: 10 s.
	StopWithin time.Duration
}

// Gateway is a gateway.Server serving on a 127.0.0.1 listener in this
// process until the test ends.
type Gateway struct {
	Server *gateway.Server
	Addr   string // 127.0.0.1:PORT
	URL    string // http://Addr, or https://Addr with Options.CA
	WSURL  string // the node endpoint: ws(s)://Addr/v1/nodes/connect
	// Logs are the gateway's JSON log records; the last 16 KiB are logged
	// when the test fails.
	Logs *syncbuf.Buffer
	// ConfigPath is the config file (Options.ConfigFile), or "".
	ConfigPath string
	// Client is what Get uses: a 5 s timeout, trusting Options.CA.
	Client *http.Client
	// Token is the bearer token Get sends ("": none).
	Token string

	// Served is the running Serve, for a test that stops it itself.
	Served *testkit.Served

	store *Store
}

// Start starts a gateway for t as o says; it stops when t ends. Unless
// o.NoWait or o.Unloaded, it returns once /readyz answers 200 (the first
// snapshot is in).
func Start(t testing.TB, o Options) *Gateway {
	t.Helper()
	g := &Gateway{Logs: &syncbuf.Buffer{}, Token: o.Token}
	g.Client = &http.Client{Timeout: 5 * time.Second}
	scheme, wsScheme := "http", "ws"
	if o.CA != nil {
		g.Client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.CA}}
		scheme, wsScheme = "https", "wss"
	}
	switch {
	case o.Config.Store != nil: // a store the test built: Put cannot write it
		g.store = &Store{store: o.Config.Store, name: o.Config.StoreName}
	case o.Shared != nil:
		g.store = o.Shared
	default:
		g.store = newStore(t, o.MinIO, o.Dir)
	}
	for k, v := range o.Files {
		g.Put(t, k, v)
	}
	cfg := o.Config
	cfg.Store, cfg.Listen = g.store.store, "127.0.0.1:0"
	if cfg.StoreName == "" {
		cfg.StoreName = g.store.name
	}
	if o.ConfigFile != "" {
		g.ConfigPath = filepath.Join(t.TempDir(), "gateway.hujson")
		cfg.ConfigPath = g.ConfigPath
		g.WriteConfig(t, o.ConfigFile)
	}
	if cfg.Poll == 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(g.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g.Server = srv
	if o.Unloaded {
		if err := os.RemoveAll(g.store.dir); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway logs:\n%s", testkit.Tail(g.Logs.String(), 16<<10))
		}
	})
	if o.ListenAfter > 0 {
		g.Served = testkit.ServeAfter(t, srv, o.ListenAfter)
	} else {
		g.Served = testkit.Serve(t, srv) // its cleanup runs first: the logs are complete
	}
	g.Served.StopWithin = o.StopWithin
	g.Addr = g.Served.Addr
	g.URL = scheme + "://" + g.Addr
	g.WSURL = wsScheme + "://" + g.Addr + "/v1/nodes/connect"
	if !o.NoWait && !o.Unloaded && o.ListenAfter == 0 {
		g.WaitReady(t)
	}
	return g
}

// Stop ends Serve and waits for it to return (as when t ends).
func (g *Gateway) Stop() { g.Served.Stop() }

// WaitReady waits until /readyz answers 200.
func (g *Gateway) WaitReady(t testing.TB) {
	t.Helper()
	testkit.Eventually(t, Wait, func() (string, bool) {
		code, _, body := g.Get(t, "/readyz", nil)
		return fmt.Sprint(code, " ", body), code == http.StatusOK
	})
}

// WriteConfig replaces the config file atomically (the gateway polls it).
func (g *Gateway) WriteConfig(t testing.TB, content string) {
	t.Helper()
	testkit.WriteFileAtomic(t, g.ConfigPath, content, 0o600)
}

// Get does a GET on the gateway with Token as bearer token (when set) and
// hdr, and returns the status, headers and body. A transport error fails
// t.
func (g *Gateway) Get(t testing.TB, pathAndQuery string, hdr http.Header) (int, http.Header, string) {
	t.Helper()
	code, h, body, err := g.TryGet(t, pathAndQuery, hdr)
	if err != nil {
		t.Fatalf("GET %s: %v", pathAndQuery, err)
	}
	return code, h, body
}

// TryGet is Get returning a transport error instead of failing t.
func (g *Gateway) TryGet(t testing.TB, pathAndQuery string, hdr http.Header) (int, http.Header, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, g.URL+pathAndQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Token != "" {
		req.Header.Set("Authorization", "Bearer "+g.Token)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := g.Client.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, "", fmt.Errorf("reading body: %w", err)
	}
	return resp.StatusCode, resp.Header, string(b), nil
}

// GetJSON does a Get that must answer 200 and decodes its body into v; it
// returns the body.
func (g *Gateway) GetJSON(t testing.TB, pathAndQuery string, v any) string {
	t.Helper()
	code, _, body := g.Get(t, pathAndQuery, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", pathAndQuery, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v\n%s", pathAndQuery, err, body)
	}
	return body
}

// Prompt returns the agent's prompt block; the request must succeed with
// text/plain.
func (g *Gateway) Prompt(t testing.TB, agent string) string {
	t.Helper()
	code, hdr, body := g.Get(t, "/v1/agents/"+agent+"/prompt", nil)
	if code != http.StatusOK {
		t.Fatalf("GET prompt of %s: %d %s", agent, code, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET prompt of %s: Content-Type %q, want text/plain", agent, ct)
	}
	return body
}

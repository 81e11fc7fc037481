package node

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/tlstest"
)

// tlsServer serves h over TLS with cfg on 127.0.0.1; it counts requests.
func tlsServer(t *testing.T, cfg *tls.Config, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake errors are the point
	s.TLS = cfg
	if cfg != nil {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, &n
}

// TestTLSFinalErrors: TLS failures that retrying cannot fix end Run with
// a *FatalError that says what to change, after one attempt; other
// answers are retried.
func TestTLSFinalErrors(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "gateway CA")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	otherCA := tlstest.NewCA(t, "other CA").WriteCA(t, dir, "other.pem")
	nodeCA := tlstest.NewCA(t, "node CA")
	good := ca.Leaf(t, tlstest.LeafOptions{}).TLS(t)
	misnamed := ca.Leaf(t, tlstest.LeafOptions{DNSNames: []string{"gateway.example"}}).TLS(t)
	expired := ca.Leaf(t, tlstest.LeafOptions{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)}).TLS(t)
	strangerCert, strangerKey := tlstest.NewCA(t, "stranger CA").Leaf(t, tlstest.LeafOptions{Client: true}).Write(t, dir, "stranger")

	forbidden := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"error": "no certificate, no entry"}`)
	})
	unavailable := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	serverTLS := func(c tls.Certificate) *tls.Config { return &tls.Config{Certificates: []tls.Certificate{c}} }
	tests := []struct {
		name     string
		srvTLS   *tls.Config
		handler  http.Handler
		scheme   string // of the gateway URL; default https
		cfg      Config
		code     string // "" when not final
		contains []string
	}{
		{name: "unknown CA, system roots", srvTLS: serverTLS(good),
			code: CodeTLS, contains: []string{"not signed by an authority this host trusts", "with --ca-file FILE"}},
		{name: "unknown CA, --ca-file", srvTLS: serverTLS(good), cfg: Config{CAFile: otherCA},
			code: CodeTLS, contains: []string{"not signed by a CA in --ca-file " + otherCA, "point --ca-file at the CA"}},
		{name: "name mismatch", srvTLS: serverTLS(misnamed), cfg: Config{CAFile: caFile},
			code: CodeTLS, contains: []string{"not valid for the name in --gateway", "gateway.example"}},
		{name: "expired", srvTLS: serverTLS(expired), cfg: Config{CAFile: caFile},
			code: CodeTLS, contains: []string{"has expired or is not valid yet", "renew it on the gateway"}},
		{name: "gateway without TLS", handler: unavailable, cfg: Config{CAFile: caFile},
			code: CodeTLS, contains: []string{"does not speak TLS", "use http://"}},
		{name: "gateway with TLS, http URL", srvTLS: serverTLS(good), scheme: "http",
			code: CodeTLS, contains: []string{"speaks TLS: use https://"}},
		{name: "client certificate required", srvTLS: &tls.Config{Certificates: []tls.Certificate{good}, ClientAuth: tls.RequireAnyClientCert},
			cfg: Config{CAFile: caFile}, code: CodeTLS, contains: []string{"requires a client certificate; set --cert FILE and --key FILE"}},
		{name: "client certificate of another CA", srvTLS: &tls.Config{Certificates: []tls.Certificate{good}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: nodeCA.Pool()},
			cfg:  Config{CAFile: caFile, CertFile: strangerCert, KeyFile: strangerKey},
			code: CodeTLS, contains: []string{"refused this node's TLS client certificate " + strangerCert, "unknown certificate authority", "--tls-client-ca"}},
		{name: "403 to the upgrade", srvTLS: serverTLS(good), handler: forbidden, cfg: Config{CAFile: caFile},
			code: CodeForbidden, contains: []string{"answered the upgrade with 403: no certificate, no entry"}},
		{name: "503 is retried", srvTLS: serverTLS(good), handler: unavailable, cfg: Config{CAFile: caFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.handler
			if h == nil {
				h = unavailable
			}
			srv, requests := tlsServer(t, tt.srvTLS, h)
			scheme := tt.scheme
			if scheme == "" {
				scheme = "https"
			}
			cfg := tt.cfg
			cfg.Gateway = scheme + "://" + strings.TrimPrefix(strings.TrimPrefix(srv.URL, "https://"), "http://")
			cfg.ID, cfg.Path = "n1", []string{t.TempDir()}
			logs, errc, cancel := startClient(t, cfg)
			if tt.code == "" {
				deadline := time.Now().Add(wait)
				for requests.Load() < 3 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if requests.Load() < 3 {
					t.Fatalf("%d requests, want retries; logs:\n%s", requests.Load(), logs.String())
				}
				cancel()
				if err := waitRun(t, errc, wait); err != nil {
					t.Errorf("Run after cancel: %v", err)
				}
				return
			}
			err := waitRun(t, errc, wait)
			fe, ok := errors.AsType[*FatalError](err)
			if !ok {
				t.Fatalf("Run returned %v (%T), want *FatalError; logs:\n%s", err, err, logs.String())
			}
			if fe.Code != tt.code {
				t.Errorf("code %q, want %q (%s)", fe.Code, tt.code, fe.Message)
			}
			for _, w := range tt.contains {
				if !strings.Contains(fe.Message, w) {
					t.Errorf("message %q lacks %q", fe.Message, w)
				}
			}
			if n := requests.Load(); n > 1 {
				t.Errorf("%d requests, want at most 1 (no retry)", n)
			}
			if !strings.Contains(logs.String(), "not retrying") {
				t.Errorf("logs:\n%s", logs.String())
			}
		})
	}
}

// TestTLSConfigChecks: TLS files are checked at New, against the URL too;
// errors name the field.
func TestTLSConfigChecks(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "CA")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{Client: true}).Write(t, dir, "node")
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	const gw = "https://127.0.0.1:1"
	for _, tt := range []struct {
		cfg   Config
		field string
		want  string
	}{
		{Config{Gateway: gw, CertFile: cert}, "key", "is required with --cert"},
		{Config{Gateway: gw, KeyFile: key}, "cert", "is required with --key"},
		{Config{Gateway: "http://127.0.0.1:1", CAFile: caFile}, "caFile", "is not https:// or wss://"},
		{Config{Gateway: "ws://127.0.0.1:1", CertFile: cert, KeyFile: key}, "cert", "is not https:// or wss://"},
		{Config{Gateway: gw, CAFile: filepath.Join(dir, "absent.pem")}, "caFile", "no such file"},
		{Config{Gateway: gw, CAFile: notPEM}, "caFile", notPEM + " holds no PEM certificate"},
		{Config{Gateway: gw, CertFile: cert, KeyFile: caFile}, "cert", "certificate " + cert + " and key " + caFile},
	} {
		tt.cfg.ID, tt.cfg.Path = "n1", []string{dir}
		_, err := New(tt.cfg)
		ce, ok := errors.AsType[*ConfigError](err)
		if !ok || ce.Field != tt.field || !strings.Contains(ce.Error(), tt.want) {
			t.Errorf("New(%+v) = %v; want a ConfigError of %s with …%s…", tt.cfg, err, tt.field, tt.want)
		}
	}
	if _, err := New(Config{Gateway: "wss://127.0.0.1:1", ID: "n1", Path: []string{dir}, CAFile: caFile, CertFile: cert, KeyFile: key}); err != nil {
		t.Errorf("good TLS files: %v", err)
	}
}

// TestTLSFilesReread: each dial reads the TLS files again; when they
// cannot be read, the last good ones are used and the error is logged
// once.
func TestTLSFilesReread(t *testing.T) {
	dir := t.TempDir()
	caFile := tlstest.NewCA(t, "first").WriteCA(t, dir, "ca.pem")
	var logs syncbuf.Buffer
	c := newTestClient(t, Config{Gateway: "https://127.0.0.1:1", ID: "n1", Path: []string{dir}, CAFile: caFile}, &logs)
	first := c.tls.config()
	second := tlstest.NewCA(t, "second")
	tlstest.WriteFile(t, caFile, second.PEM)
	if cfg := c.tls.config(); cfg.RootCAs.Equal(first.RootCAs) || !cfg.RootCAs.Equal(second.Pool()) {
		t.Error("the new CA file was not read")
	}
	if err := os.Remove(caFile); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if cfg := c.tls.config(); !cfg.RootCAs.Equal(second.Pool()) {
			t.Error("a missing CA file did not keep the last good one")
		}
	}
	if n := strings.Count(logs.String(), "cannot read the TLS files again"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestLoadFileTLSKeys: caFile, cert and key in the config file are
// resolved against its directory.
func TestLoadFileTLSKeys(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "node.hujson")
	if err := os.WriteFile(p, []byte(`{"caFile": "ca.pem", "cert": "/etc/node.crt", "key": "keys/node.key"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fc, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if fc.CAFile != filepath.Join(dir, "ca.pem") || fc.CertFile != "/etc/node.crt" || fc.KeyFile != filepath.Join(dir, "keys/node.key") ||
		!fc.Set["caFile"] || !fc.Set["cert"] || !fc.Set["key"] {
		t.Errorf("%+v", fc)
	}
}

func TestGatewaysList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "http://127.0.0.1:7780", want: []string{"ws://127.0.0.1:7780/v1/nodes/connect"}},
		{in: "http://a:1, https://b:2/", want: []string{"ws://a:1/v1/nodes/connect", "wss://b:2/v1/nodes/connect"}},
		{in: "http://a:1,,http://b:2", err: "empty URL between its commas"},
	} {
		got, err := Config{Gateway: tc.in}.Gateways()
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Gateways(%q) error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("Gateways(%q): %v", tc.in, err)
		case strings.Join(got, " ") != strings.Join(tc.want, " "):
			t.Errorf("Gateways(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestReplicaOrder: each node tries every replica once per round, nodes
// spread over the first choices, and a replica's nodes spread their next
// choices over the other replicas (none stampedes the one listed after
// it).
func TestReplicaOrder(t *testing.T) {
	urls := []string{"wss://a", "wss://b", "wss://c"}
	first := map[string]int{}
	nextOfA := map[string]int{}
	for i := range 3000 {
		id := fmt.Sprintf("node-%d", i)
		o := ReplicaOrder(id, urls)
		if got := slices.Sorted(slices.Values(o)); !slices.Equal(got, urls) {
			t.Fatalf("%s: order %v is not a permutation of %v", id, o, urls)
		}
		if again := ReplicaOrder(id, urls); !slices.Equal(again, o) {
			t.Fatalf("%s: order %v, then %v", id, o, again)
		}
		first[o[0]]++
		if o[0] == "wss://a" {
			nextOfA[o[1]]++
		}
	}
	for _, u := range urls {
		if n := first[u]; n < 800 || n > 1200 {
			t.Errorf("%d of 3000 nodes start at %s; want about a third: %v", n, u, first)
		}
	}
	if b, c := nextOfA["wss://b"], nextOfA["wss://c"]; b < first["wss://a"]*2/5 || c < first["wss://a"]*2/5 {
		t.Errorf("the nodes starting at a move next to b %d times and to c %d times; want about half each", b, c)
	}
}

package gateway_test

// TLS end to end: a real gateway serving HTTPS and WSS on a loopback
// listener with certificates made by the test, and real skillgate-node
// processes connecting to it.

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/internal/tlstest"
)

// tlsGateway is a gateway on a directory store serving over TLS.
type tlsGateway struct{ *gatewaytest.Gateway }

// startTLSGateway serves files over TLS with cfg's TLS files; it stops
// when t ends.
func startTLSGateway(t *testing.T, files map[string]string, cfg gateway.Config, ca *x509.CertPool) *tlsGateway {
	t.Helper()
	cfg.StoreName, cfg.Poll = "directory", 50*time.Millisecond
	return &tlsGateway{gatewaytest.Start(t, gatewaytest.Options{Files: files, Config: cfg, CA: ca})}
}

// get does a GET over HTTPS; a transport error is status 0 and its text.
func (g *tlsGateway) get(t *testing.T, path string) (int, string) {
	t.Helper()
	code, _, body, err := g.TryGet(t, path, nil)
	if err != nil {
		return 0, err.Error()
	}
	return code, body
}

// waitPrompt waits until the prompt of agent main, fetched over HTTPS,
// is want.
func (g *tlsGateway) waitPrompt(t *testing.T, want string) {
	t.Helper()
	testkit.Eventually(t, waitFor, func() (string, bool) {
		code, body := g.get(t, "/v1/agents/main/prompt")
		return fmt.Sprintf("%d\n%s\nwant:\n%s", code, body, want), code == http.StatusOK && body == want
	})
}

// handshakeSerial makes a new TLS connection and returns the serial of
// the certificate the gateway presented.
func handshakeSerial(t *testing.T, addr string, ca *x509.CertPool) string {
	t.Helper()
	d := &tls.Dialer{Config: &tls.Config{RootCAs: ca}, NetDialer: &net.Dialer{Timeout: 5 * time.Second}}
	c, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatalf("TLS handshake with %s: %v", addr, err)
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// gated is one skill that needs the binary gh on a host.
var gatedFiles = map[string]string{"skills/github/SKILL.md": skillMD("github", "Uses gh.", `{"bins": ["gh"]}`)}

// TestTLSNodeOverWSS: with --tls-cert and --tls-key the gateway serves
// HTTPS and WSS on one listener: real nodes given its CA with --ca-file
// connect with an https:// and a wss:// gateway URL, and their skill
// shows in the prompt fetched over HTTPS. Plain HTTP and TLS below 1.2
// are refused.
func TestTLSNodeOverWSS(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "skillgate test CA")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gateway")
	g := startTLSGateway(t, gatedFiles, gateway.Config{TLSCert: cert, TLSKey: key}, ca.Pool())

	g.waitPrompt(t, "") // no host has gh yet
	startNode(t, "https://"+g.Addr, "n-https", testkit.BinDir(t, "gh"), nil, "--ca-file", caFile)
	g.waitPrompt(t, block(global("github", "Uses gh.")))
	testkit.Eventually(t, waitFor, func() (string, bool) {
		_, body := g.get(t, "/v1/nodes")
		return body, strings.Contains(body, `"id":"n-https"`)
	})
	startNode(t, "wss://"+g.Addr, "n-wss", testkit.BinDir(t), nil, "--ca-file", caFile)
	testkit.Eventually(t, waitFor, func() (string, bool) {
		_, body := g.get(t, "/v1/nodes")
		return body, strings.Contains(body, `"id":"n-wss"`) && strings.Contains(body, `"id":"n-https"`)
	})

	// Plain HTTP on the TLS port: net/http's own 400, never the API.
	resp, err := http.Get("http://" + g.Addr + "/v1/agents/main/prompt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP to the TLS port: %d, want 400", resp.StatusCode)
	}
	// TLS 1.1 is refused; 1.2 is enough.
	for v, ok := range map[uint16]bool{tls.VersionTLS11: false, tls.VersionTLS12: true} {
		c, err := tls.Dial("tcp", g.Addr, &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS10, MaxVersion: v})
		if err == nil {
			c.Close()
		}
		if (err == nil) != ok {
			t.Errorf("TLS version %x: handshake error %v, want success %v", v, err, ok)
		}
	}
}

// TestTLSCertRotation: new certificate files are served without a
// restart, to the next handshake; a bad new pair keeps the old one in
// force and is logged as an error, once.
func TestTLSCertRotation(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "skillgate test CA")
	first := ca.Leaf(t, tlstest.LeafOptions{})
	cert, key := first.Write(t, dir, "gateway")
	g := startTLSGateway(t, nil, gateway.Config{TLSCert: cert, TLSKey: key}, ca.Pool())
	if got, want := handshakeSerial(t, g.Addr, ca.Pool()), first.Cert.SerialNumber.String(); got != want {
		t.Fatalf("serial %s, want the first certificate's %s", got, want)
	}

	// Renewed: a new leaf of a new CA (the client trusts both).
	ca2 := tlstest.NewCA(t, "skillgate test CA 2")
	both := ca.Pool()
	both.AddCert(ca2.Cert)
	second := ca2.Leaf(t, tlstest.LeafOptions{})
	second.Write(t, dir, "gateway")
	want := second.Cert.SerialNumber.String()
	testkit.Eventually(t, waitFor, func() (string, bool) {
		got := handshakeSerial(t, g.Addr, both)
		return "serial " + got + ", want " + want, got == want
	})

	// A certificate that does not match the key: the old pair stays.
	tlstest.WriteFile(t, cert, ca.Leaf(t, tlstest.LeafOptions{}).CertPEM)
	testkit.Eventually(t, waitFor, func() (string, bool) {
		handshakeSerial(t, g.Addr, both) // the files are checked at handshakes
		return g.Logs.String(), strings.Contains(g.Logs.String(), "TLS certificate changed but cannot be used")
	})
	for range 2 { // handshakes after further checks of the files
		if got := handshakeSerial(t, g.Addr, both); got != want {
			t.Fatalf("after a bad pair: serial %s, want the last good one's %s", got, want)
		}
		time.Sleep(gateway.TLSCheckEvery + 50*time.Millisecond)
	}
	if n := strings.Count(g.Logs.String(), "TLS certificate changed but cannot be used"); n != 1 {
		t.Errorf("the bad pair was logged %d times, want once", n)
	}
	if !strings.Contains(g.Logs.String(), `"level":"ERROR","msg":"TLS certificate changed but cannot be used`) {
		t.Errorf("the bad pair is not logged as an error")
	}
}

// TestTLSWrongCANodeExits: a node that does not trust the gateway's
// certificate stops at once with exit status 1 and says which file to
// fix; it does not retry.
func TestTLSWrongCANodeExits(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "skillgate test CA")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gateway")
	g := startTLSGateway(t, nil, gateway.Config{TLSCert: cert, TLSKey: key}, ca.Pool())
	other := tlstest.NewCA(t, "another CA").WriteCA(t, dir, "other-ca.pem")

	tests := []struct {
		name, url string
		args      []string
		wants     []string
	}{
		{"wrong CA", "wss://" + g.Addr, []string{"--ca-file", other},
			[]string{"TLS with the gateway failed; not retrying", "not signed by a CA in --ca-file " + other, "point --ca-file at the CA"}},
		{"system roots", "https://" + g.Addr, nil,
			[]string{"not signed by an authority this host trusts", "with --ca-file FILE"}},
		{"plain http", "http://" + g.Addr, nil,
			[]string{"speaks TLS: use https://"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startNode(t, tt.url, "n-wrong", testkit.BinDir(t), nil, tt.args...)
			if code := p.Wait(t, waitFor); code != 1 {
				t.Fatalf("exit %d, want 1; output:\n%s", code, p.Output())
			}
			for _, w := range tt.wants {
				if !strings.Contains(p.Output(), w) {
					t.Errorf("output lacks %q:\n%s", w, p.Output())
				}
			}
			if strings.Contains(p.Output(), "retrying") && !strings.Contains(p.Output(), "not retrying") {
				t.Errorf("the node retried:\n%s", p.Output())
			}
		})
	}
}

// TestTLSClientCA: with --tls-client-ca a node must present a client
// certificate signed by it: one without is refused for good (exit 1,
// saying to set --cert and --key), one signed by another CA too, one
// signed by it connects. API clients need no certificate.
func TestTLSClientCA(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "skillgate test CA")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gateway")
	nodeCA := tlstest.NewCA(t, "node CA")
	g := startTLSGateway(t, gatedFiles, gateway.Config{TLSCert: cert, TLSKey: key, TLSClientCA: nodeCA.WriteCA(t, dir, "node-ca.pem")}, ca.Pool())
	g.waitPrompt(t, "") // an API client without a certificate is served

	p := startNode(t, "https://"+g.Addr, "n-nocert", testkit.BinDir(t, "gh"), nil, "--ca-file", caFile)
	if code := p.Wait(t, waitFor); code != 1 {
		t.Fatalf("node without a client certificate: exit %d, want 1; output:\n%s", code, p.Output())
	}
	for _, w := range []string{"gateway refused this node; not retrying", "answered the upgrade with 403", "start skillgate-node with --cert FILE --key FILE"} {
		if !strings.Contains(p.Output(), w) {
			t.Errorf("node without a client certificate: output lacks %q:\n%s", w, p.Output())
		}
	}

	strangerCert, strangerKey := tlstest.NewCA(t, "stranger CA").Leaf(t, tlstest.LeafOptions{Client: true}).Write(t, dir, "stranger")
	p = startNode(t, "https://"+g.Addr, "n-stranger", testkit.BinDir(t, "gh"), nil, "--ca-file", caFile, "--cert", strangerCert, "--key", strangerKey)
	if code := p.Wait(t, waitFor); code != 1 {
		t.Fatalf("node with a certificate of another CA: exit %d, want 1; output:\n%s", code, p.Output())
	}
	for _, w := range []string{"TLS with the gateway failed; not retrying", "refused this node's TLS client certificate " + strangerCert, "--tls-client-ca"} {
		if !strings.Contains(p.Output(), w) {
			t.Errorf("node with a certificate of another CA: output lacks %q:\n%s", w, p.Output())
		}
	}
	g.waitPrompt(t, "")

	nodeCert, nodeKey := nodeCA.Leaf(t, tlstest.LeafOptions{Client: true}).Write(t, dir, "node")
	startNode(t, "https://"+g.Addr, "n-cert", testkit.BinDir(t, "gh"), nil, "--ca-file", caFile, "--cert", nodeCert, "--key", nodeKey)
	g.waitPrompt(t, block(global("github", "Uses gh.")))
	if !strings.Contains(g.Logs.String(), "node refused: no TLS client certificate") {
		t.Error("the gateway did not log the node it refused")
	}
}

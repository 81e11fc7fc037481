package gateway

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/tlstest"
	"github.com/skillgate/skillgate/store"
)

// TestCleartextWarning: a gateway listening beyond loopback without TLS
// warns at start, in one structured line, that tokens travel in clear
// text; on loopback, or with TLS, it does not.
func TestCleartextWarning(t *testing.T) {
	for _, tt := range []struct {
		addr  string
		tls   bool
		warns bool
	}{
		{"0.0.0.0:7780", false, true},
		{"[::]:7780", false, true},
		{"10.1.2.3:7780", false, true},
		{"gateway.example:7780", false, true},
		{"0.0.0.0:7780", true, false},
		{"127.0.0.1:7780", false, false},
		{"[::1]:7780", false, false},
		{"localhost:7780", false, false},
	} {
		if got := cleartextExposed(tt.addr, tt.tls); got != tt.warns {
			t.Errorf("cleartextExposed(%s, tls %v) = %v, want %v", tt.addr, tt.tls, got, tt.warns)
		}
	}

	dir := t.TempDir()
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ca := tlstest.NewCA(t, "test CA")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gw")
	for _, withTLS := range []bool{false, true} {
		logs := &syncbuf.Buffer{}
		cfg := Config{Store: st, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
		if withTLS {
			cfg.TLSCert, cfg.TLSKey = cert, key
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.warnCleartext("127.0.0.1:7780")
		s.warnCleartext("0.0.0.0:7780")
		out := strings.TrimSpace(logs.String())
		if withTLS {
			if out != "" {
				t.Errorf("with TLS: logged %s", out)
			}
			continue
		}
		var rec map[string]any
		if strings.Count(out, "\n") != 0 || json.Unmarshal([]byte(out), &rec) != nil {
			t.Fatalf("want one JSON line, got:\n%s", out)
		}
		if rec["level"] != "WARN" || rec["addr"] != "0.0.0.0:7780" || rec["tls"] != false ||
			!strings.Contains(rec["msg"].(string), "tokens travel in clear text unless TLS is terminated in front") {
			t.Errorf("warning %v", rec)
		}
	}
}

// TestTLSSettings: the config file's gateway.tlsCert, tlsKey and
// tlsClientCA are accepted, resolved against the file's directory; New
// refuses unusable TLS files with a message naming them.
func TestTLSSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gw.hujson")
	if err := os.WriteFile(path, []byte(`{"gateway": {"tlsCert": "certs/gw.crt", "tlsKey": "/abs/gw.key", "tlsClientCA": "ca.pem"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ReadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Gateway; s.TLSCert != filepath.Join(dir, "certs/gw.crt") || s.TLSKey != "/abs/gw.key" || s.TLSClientCA != filepath.Join(dir, "ca.pem") {
		t.Errorf("settings %+v", s)
	}
	if err := os.WriteFile(path, []byte(`{"gateway": {"tlsCert": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadConfigFile(path); err == nil || !strings.Contains(err.Error(), "gateway.tlsCert: must be a string") {
		t.Errorf("tlsCert: 1: %v", err)
	}

	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ca := tlstest.NewCA(t, "test CA")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gw")
	_, otherKey := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "other")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	absent := filepath.Join(dir, "absent.pem")
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{TLSCert: cert}, "TLS needs both a certificate and its key"},
		{Config{TLSClientCA: caFile}, "a TLS client CA (--tls-client-ca or gateway.tlsClientCA) needs TLS"},
		{Config{TLSCert: absent, TLSKey: key}, "TLS certificate " + absent + " and key " + key + ": open " + absent},
		{Config{TLSCert: cert, TLSKey: otherKey}, "private key does not match public key"},
		{Config{TLSCert: cert, TLSKey: key, TLSClientCA: key}, "TLS client CA " + key + ": no PEM certificate in it"},
	} {
		tt.cfg.Store = st
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v): %v, want …%s…", tt.cfg, err, tt.want)
		}
	}
}

// TestReloadNamesTLSSettings: the TLS files' paths are restart-only; a
// reload that changes one says so, naming the flag that wins over it.
func TestReloadNamesTLSSettings(t *testing.T) {
	c := newConfiguredServer(t, Config{Flags: map[string]bool{"tlsKey": true}}, `{"gateway": {"tlsCert": "a.crt", "tlsKey": "a.key"}}`)
	c.reloadWith(t, `{"gateway": {"tlsCert": "b.crt", "tlsKey": "b.key", "tlsClientCA": "ca.pem"}}`)
	c.wantSettingRecords(t,
		"WARN config: gateway.tlsCert changed; it takes effect at the next restart setting=gateway.tlsCert",
		"WARN config: gateway.tlsKey changed; --tls-key on the command line wins over it setting=gateway.tlsKey",
		"WARN config: gateway.tlsClientCA changed; it takes effect at the next restart setting=gateway.tlsClientCA",
	)
}

// TestRotationRefusesAnInvalidCertificate: a renewed pair that is expired
// or not valid yet, or a cert file that is a named pipe, keeps the
// certificate in force.
func TestRotationRefusesAnInvalidCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "rot")
	certPath, keyPath := ca.Leaf(t, tlstest.LeafOptions{DNSNames: []string{"localhost"}}).Write(t, dir, "srv")
	logs := &syncbuf.Buffer{}
	cfg := &Config{TLSCert: certPath, TLSKey: keyPath, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	st, err := newTLSState(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st.cert.every, st.cert.next = 0, time.Time{} // read at every get
	first := st.cert.get().Leaf.SerialNumber

	for _, o := range []tlstest.LeafOptions{
		{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)}, // expired
		{NotBefore: time.Now().Add(time.Hour), NotAfter: time.Now().Add(48 * time.Hour)},   // not yet valid
	} {
		l := ca.Leaf(t, o)
		tlstest.WriteFile(t, certPath, l.CertPEM)
		tlstest.WriteFile(t, keyPath, l.KeyPEM)
		if got := st.cert.get().Leaf.SerialNumber; got.Cmp(first) != 0 {
			t.Errorf("a certificate valid %s–%s replaced the one in force", o.NotBefore, o.NotAfter)
		}
	}
	if !strings.Contains(logs.String(), "the new certificate is valid only from") {
		t.Errorf("no error logged for the refused certificate:\n%s", logs.String())
	}
	// A renewal for another name (S6): every node that reconnects by the
	// name in force would refuse it and exit.
	other := ca.Leaf(t, tlstest.LeafOptions{DNSNames: []string{"evil.example"}})
	tlstest.WriteFile(t, certPath, other.CertPEM)
	tlstest.WriteFile(t, keyPath, other.KeyPEM)
	if got := st.cert.get().Leaf.SerialNumber; got.Cmp(first) != 0 {
		t.Error("a certificate for evil.example replaced the one for localhost")
	}
	if want := `the new certificate does not cover localhost, a name of the certificate in force (its names: evil.example)`; !strings.Contains(logs.String(), want) {
		t.Errorf("no error logged for the renewal for another name; want %q in:\n%s", want, logs.String())
	}
	// One that covers the names in force, and more, is taken.
	good := ca.Leaf(t, tlstest.LeafOptions{DNSNames: []string{"localhost", "gw.example"}})
	tlstest.WriteFile(t, certPath, good.CertPEM)
	tlstest.WriteFile(t, keyPath, good.KeyPEM)
	if got := st.cert.get().Leaf.SerialNumber; got.Cmp(good.Cert.SerialNumber) != 0 {
		t.Errorf("a valid renewal was not taken: serial %s, want %s", got, good.Cert.SerialNumber)
	}
	// A wildcard covers the names it matches.
	wild := ca.Leaf(t, tlstest.LeafOptions{DNSNames: []string{"localhost", "*.example"}})
	tlstest.WriteFile(t, certPath, wild.CertPEM)
	tlstest.WriteFile(t, keyPath, wild.KeyPEM)
	if got := st.cert.get().Leaf.SerialNumber; got.Cmp(wild.Cert.SerialNumber) != 0 {
		t.Errorf("a wildcard renewal covering gw.example was not taken")
	}
}

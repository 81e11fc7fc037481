package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/tlstest"
)

// TestTLSUsageErrors: unusable TLS settings are usage errors (exit 2)
// that name the flag, or the config file and key.
func TestTLSUsageErrors(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "CA")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{Client: true}).Write(t, dir, "node")
	cfgFile := filepath.Join(dir, "node.hujson")
	if err := os.WriteFile(cfgFile, []byte(`{"gateway": "https://127.0.0.1:1", "caFile": "absent.pem"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const gw = "https://127.0.0.1:1" // never dialled
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--gateway", gw, "--cert", cert}, "skillgate-node: --key: is required with --cert"},
		{[]string{"--gateway", gw, "--key", key}, "skillgate-node: --cert: is required with --key"},
		{[]string{"--gateway", "http://127.0.0.1:1", "--ca-file", caFile}, "skillgate-node: --ca-file: " + caFile + " is set, but the gateway URL http://127.0.0.1:1 is not https:// or wss://"},
		{[]string{"--gateway", gw, "--ca-file", filepath.Join(dir, "absent.pem")}, "skillgate-node: --ca-file: open " + filepath.Join(dir, "absent.pem")},
		{[]string{"--gateway", gw, "--cert", cert, "--key", caFile}, "skillgate-node: --cert: certificate " + cert + " and key " + caFile},
		{[]string{"--config", cfgFile}, "skillgate-node: " + cfgFile + ": caFile: open " + filepath.Join(dir, "absent.pem")},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCmd(t, context.Background(), tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and …%s…", code, out, errOut, tt.want)
			}
		})
	}
	// A flag wins over the file.
	code, _, errOut := runCmd(t, context.Background(), "--config", cfgFile, "--ca-file", caFile, "--cert", cert)
	if code != 2 || !strings.Contains(errOut, "--key: is required with --cert") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestTLSWrongCAExits1: a gateway whose certificate the --ca-file does
// not vouch for ends the node at once with exit status 1 and a message
// naming the flag and the file.
func TestTLSWrongCAExits1(t *testing.T) {
	dir := t.TempDir()
	gwCA := tlstest.NewCA(t, "gateway CA")
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{gwCA.Leaf(t, tlstest.LeafOptions{}).TLS(t)}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	other := tlstest.NewCA(t, "other CA").WriteCA(t, dir, "other.pem")
	cfgFile := filepath.Join(dir, "node.hujson")
	if err := os.WriteFile(cfgFile, []byte(`{"gateway": "`+srv.URL+`", "caFile": "other.pem"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCmd(t, context.Background(), "--config", cfgFile, "--id", "n1", "--path", dir)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1; stderr:\n%s", code, out, errOut)
	}
	var rec map[string]any
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		t.Fatalf("last line is not a JSON log record: %v\n%s", err, errOut)
	}
	msg, _ := rec["message"].(string)
	if rec["level"] != "ERROR" || rec["msg"] != "TLS with the gateway failed; not retrying" || rec["code"] != "tls" ||
		!strings.Contains(msg, "not signed by a CA in --ca-file "+other) || !strings.Contains(msg, "point --ca-file at the CA that signed the gateway's certificate") {
		t.Errorf("last log record %v", rec)
	}
}

package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/tlstest"
)

const tlsWait = 10 * time.Second

// listenAddr waits for the "gateway listening" record in a gateway's JSON
// logs and returns its address.
func listenAddr(t *testing.T, logs func() string, exited <-chan struct{}) string {
	t.Helper()
	deadline := time.Now().Add(tlsWait)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(logs()))
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "gateway listening" {
				return rec["addr"].(string)
			}
		}
		select {
		case <-exited:
			t.Fatalf("the gateway exited:\n%s", logs())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the gateway did not listen within %v:\n%s", tlsWait, logs())
	return ""
}

// httpsGet fetches url trusting only pool.
func httpsGet(t *testing.T, url string, pool *x509.CertPool) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// storeWithGhSkill makes a store directory with one skill that needs gh.
func storeWithGhSkill(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	p := filepath.Join(store, "skills", "github", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: github\ndescription: Uses gh.\nmetadata: '{\"gsv\": {\"requires\": {\"bins\": [\"gh\"]}}}'\n---\n"
	if err := os.WriteFile(p, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	return store
}

// TestServeTLSProcesses: a real `skillgate serve --tls-cert --tls-key`
// process and a real `skillgate-node --ca-file` process: the node
// connects over wss and its skill shows in the prompt fetched over https.
func TestServeTLSProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bin := testBins(t)
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "skillgate test CA")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gateway")
	ghDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(ghDir, "gh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	gw := startProc(t, "skillgate", filepath.Join(bin, "skillgate"), "serve", "--store", storeWithGhSkill(t), "--listen", "127.0.0.1:0",
		"--tls-cert", cert, "--tls-key", key, "--poll", "100ms")
	addr := listenAddr(t, gw.Output, gw.Exited())
	startProc(t, "skillgate-node", filepath.Join(bin, "skillgate-node"), "--gateway", "wss://"+addr, "--ca-file", caFile, "--id", "tls-node", "--path", ghDir, "--recheck", "100ms")

	want := "<available_skills>\n  <skill name=\"github\">\n    <description>Uses gh.</description>\n" +
		"    <location>skills/github/SKILL.md</location>\n    <read_path>skills/github/SKILL.md</read_path>\n  </skill>\n</available_skills>"
	testkit.Eventually(t, tlsWait, func() (string, bool) {
		code, body := httpsGet(t, "https://"+addr+"/v1/agents/main/prompt", ca.Pool())
		return fmt.Sprintf("prompt over https: %d %q, want %q", code, body, want), code == http.StatusOK && body == want
	})
	if strings.Contains(gw.Output(), "without TLS") {
		t.Errorf("a loopback gateway with TLS warned about clear text:\n%s", gw.Output())
	}
}

// TestServeTLSSettings: the TLS files may come from the config file
// (relative to it), a flag wins over the file, and unusable settings are
// usage errors naming what to fix.
func TestServeTLSSettings(t *testing.T) {
	t.Setenv("SKILLGATE_NODE_TOKEN", "")
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "skillgate test CA")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gateway")
	store := storeWithGhSkill(t)
	writeCfg := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fromFile := writeCfg("file.hujson", `{"gateway": {"tlsCert": "gateway.crt", "tlsKey": "gateway.key"}}`)
	badFile := writeCfg("bad.hujson", `{"gateway": {"tlsCert": "absent.crt", "tlsKey": "gateway.key"}}`)

	serve := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		logs := &syncbuf.Buffer{}
		exited := make(chan struct{})
		var code int
		go func() {
			defer close(exited)
			code = run(ctx, append([]string{"serve", "--store", store, "--listen", "127.0.0.1:0"}, args...), io.Discard, logs)
		}()
		defer func() {
			cancel()
			select {
			case <-exited:
				if code != 0 {
					t.Errorf("serve %q: exit %d:\n%s", args, code, logs.String())
				}
			case <-time.After(tlsWait):
				t.Errorf("serve %q did not stop", args)
			}
		}()
		addr := listenAddr(t, logs.String, exited)
		status, body := httpsGet(t, "https://"+addr+"/healthz", ca.Pool())
		if status != http.StatusOK {
			t.Errorf("serve %q: GET /healthz over https: %d %s", args, status, body)
		}
	}
	serve("--config", fromFile)
	serve("--config", badFile, "--tls-cert", cert) // the flag wins

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", cert}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-key", key}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-client-ca", cert}, "--tls-client-ca needs TLS: set --tls-cert and --tls-key too"},
		{[]string{"--config", badFile}, "TLS certificate " + filepath.Join(dir, "absent.crt") + " and key " + key + ": open "},
		{[]string{"--tls-cert", key, "--tls-key", key}, "TLS certificate " + key + " and key " + key},
		{[]string{"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", key}, "TLS client CA " + key + ": no PEM certificate in it"},
	} {
		_, errOut, code := runCmd(t, append([]string{"serve", "--store", store, "--listen", "127.0.0.1:0"}, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want 2 and …%s…", tt.args, code, errOut, tt.want)
		}
	}
}

// TestStatusCAFile: `skillgate status --ca-file` (and `eval --hosts URL
// --ca-file`) reads a gateway whose
// certificate is from a private CA; without it, or with another CA, the
// certificate is refused (exit 2, saying so and, without it, naming
// --ca-file), and a --ca-file that cannot be used is a usage error.
func TestStatusCAFile(t *testing.T) {
	t.Setenv("SKILLGATE_NODE_TOKEN", "")
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	t.Setenv("SSL_CERT_FILE", "")
	t.Setenv("SSL_CERT_DIR", "")
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "skillgate test CA")
	caFile := ca.WriteCA(t, dir, "ca.pem")
	other := tlstest.NewCA(t, "another CA").WriteCA(t, t.TempDir(), "other.pem")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gateway")
	store := storeWithGhSkill(t)

	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncbuf.Buffer{}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		run(ctx, []string{"serve", "--store", store, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--poll", "100ms"}, io.Discard, logs)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	base := "https://" + listenAddr(t, logs.String, exited)
	testkit.Eventually(t, tlsWait, func() (string, bool) {
		code, _ := httpsGet(t, base+"/readyz", ca.Pool())
		return "the gateway was not ready:\n" + logs.String(), code == http.StatusOK
	})

	out, errOut, code := runCmd(t, "status", "--gateway", base, "--ca-file", caFile, "--agent", "main")
	if code != 0 || !strings.Contains(out, "0 nodes connected to "+base) || !strings.Contains(out, "github") {
		t.Errorf("status --ca-file: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = runCmd(t, "status", "--ca-file", caFile, "--json", "--gateway", base)
	if code != 0 || !strings.Contains(out, `"ready": true`) {
		t.Errorf("status --ca-file --json: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "certificate signed by unknown authority (is the gateway running? each page must arrive within 10s); if the gateway's certificate is from a private CA, name the CA with --ca-file FILE"},
		{[]string{"--ca-file", other}, "certificate signed by unknown authority"},
	} {
		_, errOut, code := runCmd(t, append([]string{"status", "--gateway", base}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("status %q against a private CA's gateway: exit %d, stderr %q; want 2 and …%s…", c.args, code, errOut, c.want)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--gateway", "http://127.0.0.1:1", "--ca-file", caFile}, "--ca-file: the gateway http://127.0.0.1:1 is not https://"},
		{[]string{"--gateway", base, "--ca-file", filepath.Join(dir, "absent.pem")}, "--ca-file: open "},
		{[]string{"--gateway", base, "--ca-file", key}, "--ca-file: " + key + " holds no PEM certificate"},
	} {
		_, errOut, code := runCmd(t, append([]string{"status"}, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("status %q: exit %d, stderr %q; want 2 and …%s…", tt.args, code, errOut, tt.want)
		}
	}

	// eval --hosts https://…/v1/nodes takes --ca-file the same way.
	eval := []string{"eval", "--store", store, "--agent", "main", "--json", "--hosts", base + "/v1/nodes"}
	out, errOut, code = runCmd(t, append(eval, "--ca-file", caFile)...)
	if code != 0 || !strings.Contains(out, `"name": "github"`) {
		t.Errorf("eval --ca-file: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "--hosts: Get \"" + base + "/v1/nodes\": tls: failed to verify certificate: x509: certificate signed by unknown authority (is the gateway running? each page must arrive within 30s); if the gateway's certificate is from a private CA, name the CA with --ca-file FILE"},
		{[]string{"--ca-file", other}, 2, "certificate signed by unknown authority"},
		{[]string{"--ca-file", key}, 2, "--ca-file: " + key + " holds no PEM certificate"},
	} {
		_, errOut, code := runCmd(t, append(eval, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("eval %q against a private CA's gateway: exit %d, stderr %q; want %d and …%s…", c.args, code, errOut, c.code, c.want)
		}
	}
	hostsFile := filepath.Join(dir, "hosts.json")
	if err := os.WriteFile(hostsFile, []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCmd(t, "eval", "--store", store, "--agent", "main", "--hosts", hostsFile, "--ca-file", caFile)
	if want := "--ca-file: --hosts " + hostsFile + " is a file; --ca-file verifies an https:// URL of GET /v1/nodes"; code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("eval --ca-file with a hosts file: exit %d, stderr %q; want 2 and …%s…", code, errOut, want)
	}
}

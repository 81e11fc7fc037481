package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/version"
	"github.com/skillgate/skillgate/node"
	"github.com/skillgate/skillgate/protocol"
)

// wait bounds every wait in these tests.
const wait = 10 * time.Second

func runCmd(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, &out, &errb) }()
	select {
	case code = <-done:
	case <-time.After(wait):
		t.Fatalf("run %q did not return", args)
	}
	return code, out.String(), errb.String()
}

// TestVersion: --version prints the one version of the build, which is
// also the one the node sends in connect.
func TestVersion(t *testing.T) {
	code, out, _ := runCmd(t, context.Background(), "--version")
	want := "skillgate-node " + version.String() + " (" + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q; want 0, %q", code, out, want)
	}
	if node.Version != version.String() {
		t.Errorf("node.Version %q, want %q", node.Version, version.String())
	}
}

func TestHelp(t *testing.T) {
	code, _, errOut := runCmd(t, context.Background(), "--help")
	if code != 0 || !strings.Contains(errOut, "  --gateway URL") || !strings.Contains(errOut, "skillgate-node facts") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badRoles := write("roles.hujson", `{"gateway": "http://127.0.0.1:1", "roles": ["gpu"]}`)
	typo := write("typo.hujson", `{"gatway": "http://127.0.0.1:1"}`)
	empty := write("empty-token", "\n")
	gw := "http://127.0.0.1:1" // never dialled: every case fails before
	tests := []struct {
		args []string
		want string
	}{
		{nil, "skillgate-node: --gateway is required"},
		{[]string{"--gateway", "127.0.0.1:7780"}, `--gateway: "127.0.0.1:7780": the scheme must be http, https, ws or wss`},
		{[]string{"--gateway", gw, "--roles", "gpu"}, `--roles: roles[0]: unknown role "gpu"`},
		{[]string{"--gateway", gw, "--capabilities", "shell.exec"}, "--capabilities: an execution host must have"},
		{[]string{"--gateway", gw, "--id", "a/b"}, `--id: "a/b" contains a slash`},
		{[]string{"--gateway", gw, "--path", "bin:/usr/bin"}, `--path: "bin" is not an absolute directory`},
		{[]string{"--gateway", gw, "--recheck", "0s"}, "--recheck: must be a positive duration"},
		{[]string{"--gateway", gw, "--recheck", "soon"}, `invalid value "soon" for flag -recheck`},
		{[]string{"--gateway", gw, "--token", "x"}, "flag provided but not defined: -token"},
		{[]string{"--gateway", gw, "--move-back", "-1s"}, "--move-back: must be a duration of 0 or more"},
		{[]string{"--gateway", gw, "--move-back", "10ms"}, "--move-back: 10ms is shorter than 100ms (0 turns moving back off)"},
		{[]string{"--gateway", gw, "--move-back-window", "-1s"}, "--move-back-window: must be a duration of 0 or more"},
		{[]string{"--gateway", gw, "--token-file", filepath.Join(dir, "absent")}, "--token-file: stat "},
		{[]string{"--gateway", gw, "--token-file", empty}, "--token-file: " + empty + " is empty"},
		{[]string{"--gateway", gw, "stray"}, `unexpected argument "stray"`},
		{[]string{"--config", badRoles}, badRoles + `: roles: roles[0]: unknown role "gpu"`},
		{[]string{"--config", typo}, "--config: " + typo + ": gatway: unknown key"},
		{[]string{"--config", filepath.Join(dir, "absent.hujson")}, "--config: open "},
		{[]string{"facts", "--gateway", gw}, "flag provided but not defined: -gateway"},
		{[]string{"facts", "--roles", "execution", "--capabilities", "text.search"}, "--capabilities: an execution host must have"},
		{[]string{"facts", "--path", "relative"}, `--path: "relative" is not an absolute directory`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCmd(t, context.Background(), tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and …%s…", code, out, errOut, tt.want)
			}
		})
	}
	// A flag wins over the file: the file's bad roles are not used.
	code, _, errOut := runCmd(t, context.Background(), "--config", badRoles, "--roles", "execution", "--recheck", "1ns")
	if code != 2 || !strings.Contains(errOut, "--recheck: 1ns is shorter than 10ms") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestFacts(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("executable bits are a unix notion")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "node.hujson")
	if err := os.WriteFile(cfg, []byte(`{"id": "from-file", "roles": "specialized", "capabilities": ["text.search"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SG_FACTS_SET", "value-that-must-not-show")
	t.Setenv("SG_FACTS_EMPTY", "")

	code, out, errOut := runCmd(t, context.Background(), "facts", "--config", cfg, "--id", "from-flag",
		"--bins", "gh, tmux,jq,../gh", "--env", "SG_FACTS_SET,SG_FACTS_EMPTY", "--path", dir)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var got protocol.HostFacts
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not host facts JSON: %v\n%s", err, out)
	}
	want := protocol.HostFacts{
		ID: "from-flag", OS: runtime.GOOS, Roles: []string{"specialized"}, Capabilities: []string{"text.search"},
		Env: []string{"SG_FACTS_SET"}, HostBinStatus: map[string]bool{"gh": true, "tmux": false, "jq": false, "../gh": false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("facts\n got %+v\nwant %+v", got, want)
	}
	if !strings.HasPrefix(out, "{\n  \"id\": \"from-flag\",\n") {
		t.Errorf("stdout is not indented JSON:\n%s", out)
	}
	wantHints := []string{
		`missing bin "tmux": searched ` + dir,
		"  " + filepath.Join(dir, "tmux") + ": not executable",
		`missing bin "jq": searched ` + dir,
		`missing bin "../gh": a binary name, not a path, is expected; never looked up`,
		`missing env "SG_FACTS_EMPTY": not set or empty here`,
	}
	for _, h := range wantHints {
		if !strings.Contains(errOut, h) {
			t.Errorf("stderr lacks %q:\n%s", h, errOut)
		}
	}
	if strings.Contains(out+errOut, "value-that-must-not-show") {
		t.Error("an env value was printed")
	}
}

// gateway is a minimal in-test gateway: it hands each connection's first
// frame to the test and answers it with reply (a whole frame).
type gateway struct {
	srv    *httptest.Server
	first  chan string
	closed chan websocket.StatusCode
}

func newGateway(t *testing.T, reply []byte) *gateway {
	t.Helper()
	g := &gateway{first: make(chan string, 4), closed: make(chan websocket.StatusCode, 4)}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		g.first <- string(data)
		if err := c.Write(ctx, websocket.MessageText, reply); err != nil {
			return
		}
		for {
			if _, _, err := c.Read(ctx); err != nil {
				g.closed <- websocket.CloseStatus(err)
				return
			}
		}
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// wantGoingAway checks that the node closed its connection with 1001.
func (g *gateway) wantGoingAway(t *testing.T) {
	t.Helper()
	select {
	case code := <-g.closed:
		if code != websocket.StatusGoingAway {
			t.Errorf("close status %v, want 1001", code)
		}
	case <-time.After(wait):
		t.Fatal("the gateway saw no close")
	}
}

func (g *gateway) connectFrame(t *testing.T) protocol.ConnectParams {
	t.Helper()
	select {
	case s := <-g.first:
		f, err := protocol.DecodeFrame([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		p, err := protocol.ParseConnectParams(f.Params)
		if err != nil {
			t.Fatal(err)
		}
		return p
	case <-time.After(wait):
		t.Fatal("the node did not connect")
		return protocol.ConnectParams{}
	}
}

func TestAgentUnauthorizedExits1(t *testing.T) {
	g := newGateway(t, protocol.NewErr("1", protocol.CodeUnauthorized, "unknown token for node n1"))
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("file-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(tokenEnv, "env-token")
	code, out, errOut := runCmd(t, context.Background(), "--gateway", g.srv.URL, "--id", "n1",
		"--path", t.TempDir(), "--token-file", tokenFile)
	if code != 1 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if p := g.connectFrame(t); p.Token != "file-token" || p.Node.ID != "n1" {
		t.Errorf("connect params %+v: want the token from the file", p)
	}
	if out != "" || !strings.Contains(errOut, "unknown token for node n1") || strings.Contains(errOut, "file-token") || strings.Contains(errOut, "env-token") {
		t.Errorf("stdout %q, stderr:\n%s", out, errOut)
	}
	// Not a terminal: JSON log lines.
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("log line is not JSON: %s", line)
		}
	}
}

func TestAgentStopsOnCancel(t *testing.T) {
	ok, _ := protocol.NewRes("1", protocol.ConnectResult{Protocol: 1})
	g := newGateway(t, ok)
	t.Setenv(tokenEnv, "env-token")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var errb bytes.Buffer
	args := []string{"--gateway", g.srv.URL, "--path", t.TempDir()}
	go func() { done <- run(ctx, args, &bytes.Buffer{}, &errb) }()
	if p := g.connectFrame(t); p.Token != "env-token" {
		t.Errorf("token %q, want the one from %s", p.Token, tokenEnv)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d, stderr %s", code, errb.String())
		}
	case <-time.After(wait):
		t.Fatal("run did not return after cancel")
	}
	g.wantGoingAway(t)
}

// TestBinarySIGTERM runs the binary (testkit.Binaries) and checks the operators' contract:
// SIGTERM closes the socket with 1001 and exits 0 within 5 s.
func TestBinarySIGTERM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on windows")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testkit.Binary(t, "cmd/skillgate-node")
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()

	// The version the binary prints is the one it sends in connect,
	// whatever the build stamped.
	vout, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := strings.Cut(strings.TrimPrefix(string(vout), "skillgate-node "), " (")

	ok, _ := protocol.NewRes("1", protocol.ConnectResult{Protocol: 1})
	g := newGateway(t, ok)
	cmd := exec.CommandContext(ctx, bin, "--gateway", g.srv.URL, "--id", "bin-node", "--path", t.TempDir())
	cmd.Env = append(os.Environ(), tokenEnv+"=")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if p := g.connectFrame(t); p.Node.ID != "bin-node" || p.Client != "skillgate-node/"+v || v == "" {
		t.Errorf("connect params %+v", p)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, errb.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("exit took %v after SIGTERM", d)
	}
	g.wantGoingAway(t)
}

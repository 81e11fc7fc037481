package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/protocol"
)

func writeExec(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestSession plays the DESIGN.md session against a real socket and checks
// every frame the node sends, byte for byte.
func TestSession(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("executable bits are a unix notion")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "bin")
	writeExec(t, filepath.Join(dir, "gh"))
	writeExec(t, filepath.Join(dir, "sub", "gh")) // reachable only as "sub/gh"
	writeExec(t, filepath.Join(root, "up"))       // reachable only as "../up"
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte("x"), 0o644); err != nil {
		t.Fatal(err) // not executable: does not count
	}
	if err := os.Mkdir(filepath.Join(dir, "jq"), 0o755); err != nil {
		t.Fatal(err) // a directory: does not count
	}

	const secretValue = "hunter2-secret-value"
	const askedValue = "asked-value-never-sent"
	t.Setenv("SKILLGATE_TEST_ASKED", askedValue)
	t.Setenv("SKILLGATE_TEST_EMPTY", "")
	t.Setenv("SKILLGATE_TEST_UNASKED_SECRET", secretValue)

	g := newFakeGateway(t, 0)
	var logs syncbuf.Buffer
	c := newTestClient(t, Config{
		Gateway: g.srv.URL + "/", // a trailing slash is fine
		ID:      "test-node",
		Path:    []string{dir},
		Recheck: 100 * time.Millisecond,
		Token:   "tok-very-secret",
	}, &logs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := runClient(ctx, c)

	gc := g.accept()
	gc.expect(`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"token":"tok-very-secret","client":"skillgate-node/` + Version + `",` +
		`"node":{"id":"test-node","os":"` + runtime.GOOS + `","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}}`)
	gc.sendRes("1", protocol.ConnectResult{Protocol: 1, Interest: protocol.Interest{
		Bins: []string{"gh", "tmux", "jq", "late", "sub/gh", "../up", "gh"},
		Env:  []string{"SKILLGATE_TEST_UNSET", "SKILLGATE_TEST_EMPTY", "SKILLGATE_TEST_ASKED"},
	}})
	gc.expect(`{"type":"req","id":"2","method":"facts.update","params":{"env":["SKILLGATE_TEST_ASKED"],` +
		`"hostBinStatus":{"../up":false,"gh":true,"jq":false,"late":false,"sub/gh":false,"tmux":false}}}`)
	gc.sendRes("2", nil)

	// Re-checks that find nothing new send nothing.
	gc.quiet(350 * time.Millisecond)

	// The node answers the gateway's pings while it waits.
	pctx, pcancel := context.WithTimeout(context.Background(), wait)
	if err := gc.c.Ping(pctx); err != nil {
		t.Fatalf("node did not answer a ping: %v", err)
	}
	pcancel()

	// A binary installed later shows up within the re-check interval.
	start := time.Now()
	writeExec(t, filepath.Join(dir, "late"))
	gc.expect(`{"type":"req","id":"3","method":"facts.update","params":{"env":["SKILLGATE_TEST_ASKED"],` +
		`"hostBinStatus":{"../up":false,"gh":true,"jq":false,"late":true,"sub/gh":false,"tmux":false}}}`)
	// Generous bound: shared CI machines are slow; the point is that it
	// comes without a restart, long before any other timer would fire.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("new binary reported after %v, want within a few re-checks of 100ms", d)
	}
	gc.sendRes("3", nil)

	// Every interest event gets a facts.update, changed or not.
	gc.sendEvt(protocol.Interest{Bins: []string{"gh"}, Env: []string{"SKILLGATE_TEST_ASKED"}})
	gc.expect(`{"type":"req","id":"4","method":"facts.update","params":{"env":["SKILLGATE_TEST_ASKED"],"hostBinStatus":{"gh":true}}}`)
	gc.sendEvt(protocol.Interest{Bins: []string{"gh"}, Env: []string{"SKILLGATE_TEST_ASKED"}})
	gc.expect(`{"type":"req","id":"5","method":"facts.update","params":{"env":["SKILLGATE_TEST_ASKED"],"hostBinStatus":{"gh":true}}}`)
	gc.sendEvt(protocol.Interest{})
	gc.expect(`{"type":"req","id":"6","method":"facts.update","params":{"env":[],"hostBinStatus":{}}}`)

	// Anything else is logged and not answered.
	req, _ := protocol.NewReq("g1", "node.exec", map[string]string{"cmd": "ls"})
	gc.send(req)
	gc.send([]byte(`not json`))
	gc.send([]byte(`{"type":"evt","event":"weather","payload":{}}`))
	gc.sendRes("99", nil)
	gc.send(protocol.NewErr("5", protocol.CodeBadRequest, "late complaint"))
	gc.quiet(300 * time.Millisecond)

	// Shutdown: close with 1001, Run returns nil promptly.
	cancel()
	if code := gc.closed(); code != websocket.StatusGoingAway {
		t.Errorf("close status %v, want StatusGoingAway (1001)", code)
	}
	if err := waitRun(t, errc, 3*time.Second); err != nil {
		t.Errorf("Run after cancel: %v, want nil", err)
	}

	sent := string(g.all())
	for _, secret := range []string{secretValue, askedValue, "SKILLGATE_TEST_UNASKED_SECRET", "SKILLGATE_TEST_EMPTY\"]", "SKILLGATE_TEST_UNSET\"]"} {
		if strings.Contains(sent, secret) {
			t.Errorf("the node sent %q", secret)
		}
	}
	l := logs.String()
	for _, secret := range []string{secretValue, askedValue, "tok-very-secret"} {
		if strings.Contains(l, secret) {
			t.Errorf("the node logged %q", secret)
		}
	}
	for _, want := range []string{"ignoring a request from the gateway", "ignoring a malformed frame", "ignoring an unknown event", "ignoring an answer to no pending request"} {
		if !strings.Contains(l, want) {
			t.Errorf("logs lack %q:\n%s", want, l)
		}
	}
}

func TestFatalErrors(t *testing.T) {
	for _, code := range []string{protocol.CodeUnauthorized, protocol.CodeInvalidFacts, protocol.CodeUnsupportedProtocol} {
		t.Run(code, func(t *testing.T) {
			g := newFakeGateway(t, 0)
			logs, errc, _ := startClient(t, Config{Gateway: g.srv.URL, ID: "n1", Path: []string{t.TempDir()}, Token: "wrong-token"})
			gc := g.accept()
			gc.recv()
			gc.send(protocol.NewErr("1", code, "no, because "+code))
			gc.c.Close(websocket.StatusPolicyViolation, code)

			err := waitRun(t, errc, wait)
			fe, ok := errors.AsType[*FatalError](err)
			if !ok {
				t.Fatalf("Run returned %v (%T), want *FatalError", err, err)
			}
			if fe.Code != code || fe.Message != "no, because "+code {
				t.Errorf("got %+v", fe)
			}
			g.noConnection(200 * time.Millisecond) // no retry
			if l := logs.String(); !strings.Contains(l, "no, because "+code) || strings.Contains(l, "wrong-token") {
				t.Errorf("logs should carry the message and never the token:\n%s", l)
			}
		})
	}
}

// TestUnsupportedProtocolAnswer: a gateway that answers with another
// protocol version is as final as an explicit refusal.
func TestUnsupportedProtocolAnswer(t *testing.T) {
	g := newFakeGateway(t, 0)
	_, errc, _ := startClient(t, Config{Gateway: g.srv.URL, ID: "n1", Path: []string{t.TempDir()}})
	gc := g.accept()
	gc.recv()
	gc.send([]byte(`{"type":"res","id":"1","ok":true,"payload":{"protocol":2,"interest":{}}}`))
	err := waitRun(t, errc, wait)
	if fe, ok := errors.AsType[*FatalError](err); !ok || fe.Code != protocol.CodeUnsupportedProtocol {
		t.Fatalf("Run returned %v, want a fatal unsupported_protocol", err)
	}
}

func TestReconnect(t *testing.T) {
	g := newFakeGateway(t, 0)
	logs, errc, cancel := startClient(t, Config{Gateway: g.srv.URL, ID: "n1", Path: []string{t.TempDir()}})

	// Dropped after a full handshake.
	gc := g.accept()
	gc.recv()
	gc.sendRes("1", protocol.ConnectResult{Protocol: 1})
	gc.expect(`{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{}}}`)
	gc.c.CloseNow()

	// Dropped before answering connect.
	gc = g.accept()
	if got := gc.recv(); !strings.Contains(got, `"method":"connect"`) {
		t.Fatalf("first frame after reconnect: %s", got)
	}
	gc.c.Close(websocket.StatusPolicyViolation, "replaced")

	// A non-final refusal of connect is retried too.
	gc = g.accept()
	gc.recv()
	gc.send(protocol.NewErr("1", protocol.CodeBadRequest, "hmm"))

	gc = g.accept()
	gc.recv()
	gc.sendRes("1", protocol.ConnectResult{Protocol: 1})
	gc.expect(`{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{}}}`)

	cancel()
	if err := waitRun(t, errc, 3*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "another node connected with the same id") {
		t.Errorf("a \"replaced\" close should hint at a duplicate id:\n%s", l)
	}
}

// TestReconnectAfterDialFailure: a gateway that is down at start is
// retried until it is up.
func TestReconnectAfterDialFailure(t *testing.T) {
	g := newFakeGateway(t, 0)
	var logs syncbuf.Buffer
	c := newTestClient(t, Config{Gateway: g.srv.URL + "/down", ID: "n1", Path: []string{t.TempDir()}}, &logs)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := waitRun(t, runClient(ctx, c), 3*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := strings.Count(logs.String(), "cannot connect to gateway; retrying"); n < 2 {
		t.Errorf("%d retries logged in 300ms with a 10–50ms backoff, want several:\n%s", n, logs.String())
	}
}

// TestShutdownHungGateway: a gateway that never answers the close frame
// does not hold the node past the grace period.
func TestShutdownHungGateway(t *testing.T) {
	g := newFakeGateway(t, 2) // reads connect and facts.update, then hangs
	_, errc, cancel := startClient(t, Config{Gateway: g.srv.URL, ID: "n1", Path: []string{t.TempDir()}})
	gc := g.accept()
	gc.recv()
	gc.sendRes("1", protocol.ConnectResult{Protocol: 1})
	gc.recv()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cancel()
	if err := waitRun(t, errc, 3*time.Second); err != nil { // DESIGN: exit within 5 s
		t.Fatalf("Run: %v (after %v)", err, time.Since(start))
	}
}

// TestPingTimeout: a gateway that stops answering pings is left and
// reconnected to.
func TestPingTimeout(t *testing.T) {
	g := newFakeGateway(t, 2)
	logs, errc, cancel := startClient(t, Config{Gateway: g.srv.URL, ID: "n1", Path: []string{t.TempDir()}}, func(c *Client) {
		c.pingInterval = 50 * time.Millisecond
		c.pingTimeout = 100 * time.Millisecond
	})
	gc := g.accept()
	gc.recv()
	gc.sendRes("1", protocol.ConnectResult{Protocol: 1})
	gc.recv()
	g.accept() // the node gave up on the hung connection
	cancel()
	if err := waitRun(t, errc, 3*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "gateway did not answer a ping") {
		t.Errorf("logs lack the ping failure:\n%s", l)
	}
}

func TestConnectTimeout(t *testing.T) {
	g := newFakeGateway(t, 0)
	logs, errc, cancel := startClient(t, Config{Gateway: g.srv.URL, ID: "n1", Path: []string{t.TempDir()}},
		func(c *Client) { c.connectTimeout = 100 * time.Millisecond })
	g.accept().recv() // never answered
	g.accept().recv()
	cancel()
	if err := waitRun(t, errc, 3*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "gateway did not answer connect within 100ms") {
		t.Errorf("logs lack the connect timeout:\n%s", l)
	}
}

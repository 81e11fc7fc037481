package gateway_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/protocol"
)

// TestNodeAuth checks shared and per-node tokens over raw connections (exact
// frames and close status) and with a real skillgate-node.
func TestNodeAuth(t *testing.T) {
	g := startGateway(t, gwOptions{
		files:     map[string]string{"skills/plain/SKILL.md": skillMD("plain", "No requirements.", "")},
		nodeToken: "shared-token",
		config: `{
  // per-node tokens bind a node id
  "gateway": {"nodeTokens": {"node-a": "token-a", "node-b": "token-b"}},
}`,
	})

	refused := []struct{ name, id, token string }{
		{"wrong token", "node-a", "not-the-token"},
		{"token of another node", "node-a", "token-b"},
		{"missing token", "node-a", ""},
		{"shared token for a node with its own token", "node-a", "shared-token"},
		{"per-node token of another node on an unlisted id", "node-c", "token-a"},
		{"missing token on an unlisted id", "node-c", ""},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			r := dialRaw(t, g)
			r.SendText(testkit.ConnectFrame("auth-1", c.id, c.token, protocol.Version, []string{"execution"}, baseline))
			f := r.ExpectErr("auth-1", protocol.CodeUnauthorized)
			if strings.Contains(f.Error.Message, "token-") || strings.Contains(f.Error.Message, "shared-token") {
				t.Errorf("the error message shows a token: %q", f.Error.Message)
			}
			r.ExpectClose(websocket.StatusPolicyViolation, "")
		})
	}
	if strings.Contains(g.Logs.String(), "token-a") || strings.Contains(g.Logs.String(), "token-b") ||
		strings.Contains(g.Logs.String(), "shared-token") || strings.Contains(g.Logs.String(), "not-the-token") {
		t.Errorf("gateway logs show a token")
	}

	t.Run("accepted", func(t *testing.T) {
		a := dialRaw(t, g)
		a.Connect("node-a", "token-a")
		a.Facts("f1", nil, nil)
		c := dialRaw(t, g)
		c.Connect("node-c", "shared-token")
		c.Facts("f1", nil, nil)
		g.waitNodes(t, "node-a,node-c")
	})

	t.Run("revoked on config reload", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Connect("node-d", "shared-token")
		r.Facts("f1", nil, nil)
		testkit.Eventually(t, waitFor, func() (string, bool) {
			ids := g.reportingNodeIDs(t)
			return ids, slices.Contains(strings.Split(ids, ","), "node-d")
		})
		// node-d gets a token of its own: the shared one no longer does.
		g.WriteConfig(t, `{"gateway": {"nodeTokens": {"node-a": "token-a", "node-b": "token-b", "node-d": "token-d"}}}`)
		g.Server.Reload()
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		testkit.Eventually(t, waitFor, func() (string, bool) {
			ids := g.reportingNodeIDs(t)
			return ids, !slices.Contains(strings.Split(ids, ","), "node-d")
		})
		again := dialRaw(t, g)
		again.Connect("node-d", "token-d")
	})

	t.Run("real node with a wrong token exits 1", func(t *testing.T) {
		p := startNode(t, g.URL, "node-b", testkit.BinDir(t), []string{"SKILLGATE_NODE_TOKEN=wrong-token-9f2c"})
		if code := p.Wait(t, waitFor); code != 1 {
			t.Fatalf("skillgate-node exited with %d, want 1; output:\n%s", code, p.Output())
		}
		if out := p.Output(); !strings.Contains(out, "unauthorized") || strings.Contains(out, "wrong-token-9f2c") {
			t.Errorf("node output should name the refusal (unauthorized) and not the token:\n%s", out)
		}
	})

	t.Run("real node with its token file connects", func(t *testing.T) {
		tf := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(tf, []byte("token-b\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		startNode(t, g.URL, "node-b", testkit.BinDir(t), nil, "--token-file", tf)
		testkit.Eventually(t, waitFor, func() (string, bool) {
			ids := g.reportingNodeIDs(t)
			return ids, slices.Contains(strings.Split(ids, ","), "node-b")
		})
	})
}

// TestBadInput sends what a real node never would and checks the exact
// answer and close status of each case, and that a healthy node and prompt
// builds are unaffected afterwards.
func TestBadInput(t *testing.T) {
	g := startGateway(t, gwOptions{
		files:          map[string]string{"skills/alpha/SKILL.md": skillMD("alpha", "Uses alpha-tool.", `{"bins": ["alpha-tool"]}`)},
		connectTimeout: 300 * time.Millisecond,
	})
	startNode(t, g.URL, "healthy", testkit.BinDir(t, "alpha-tool"), nil)
	want := block(eAlpha)
	g.waitPrompt(t, "main", want)
	healthy := func(t *testing.T) {
		t.Helper()
		ns, body := g.nodes(t)
		if !slices.ContainsFunc(ns, func(n nodeView) bool { return n.ID == "healthy" && n.FactsAt != nil && n.HostBinStatus["alpha-tool"] }) {
			t.Errorf("the healthy node is gone:\n%s", body)
		}
		if got := g.Prompt(t, "main"); got != want {
			t.Errorf("prompt after the bad connection:\n%s\nwant:\n%s", got, want)
		}
	}

	t.Run("malformed JSON before connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.SendText(`{"type":"req","id":"1","method":"connect",`)
		r.ExpectErr("", protocol.CodeBadRequest)
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		healthy(t)
	})
	t.Run("other method before connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.SendText(testkit.FactsFrame("7", nil, nil))
		r.ExpectErr("7", protocol.CodeNotConnected)
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		healthy(t)
	})
	t.Run("unknown method before connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.SendText(`{"type":"req","id":"x","method":"status"}`)
		r.ExpectErr("x", protocol.CodeNotConnected)
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		healthy(t)
	})
	t.Run("no connect within the timeout", func(t *testing.T) {
		r := dialRaw(t, g)
		start := time.Now()
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
			t.Errorf("closed after %v, want about the 300ms connect timeout", d)
		}
		healthy(t)
	})
	t.Run("binary frame before connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Send(websocket.MessageBinary, []byte(testkit.ConnectFrame("1", "bin-node", "", 1, []string{"execution"}, baseline)))
		r.ExpectErr("", protocol.CodeBadRequest)
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		healthy(t)
	})
	t.Run("invalid facts", func(t *testing.T) {
		r := dialRaw(t, g)
		r.SendText(testkit.ConnectFrame("1", "bad-facts", "", protocol.Version, []string{"execution"}, []string{"filesystem.read"}))
		f := r.ExpectErr("1", protocol.CodeInvalidFacts)
		if !strings.Contains(f.Error.Message, "capabilities") {
			t.Errorf("invalid_facts message %q does not name the field", f.Error.Message)
		}
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		healthy(t)
	})
	t.Run("unknown role", func(t *testing.T) {
		r := dialRaw(t, g)
		r.SendText(testkit.ConnectFrame("1", "bad-role", "", protocol.Version, []string{"gpu"}, baseline))
		r.ExpectErr("1", protocol.CodeInvalidFacts)
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		healthy(t)
	})
	t.Run("unsupported protocol", func(t *testing.T) {
		r := dialRaw(t, g)
		r.SendText(testkit.ConnectFrame("1", "future-node", "", 2, []string{"execution"}, baseline))
		r.ExpectErr("1", protocol.CodeUnsupportedProtocol)
		r.ExpectClose(websocket.StatusPolicyViolation, "")
		healthy(t)
	})
	t.Run("20 KiB frame before connect", func(t *testing.T) {
		// Unauthenticated peers get a small read limit, not 1 MiB.
		r := dialRaw(t, g)
		go r.Conn.Write(t.Context(), websocket.MessageText, []byte(`{"type":"req","id":"1","method":"connect","params":{"pad":"`+strings.Repeat("x", 20<<10)+`"}}`))
		r.ExpectClose(websocket.StatusMessageTooBig, "")
		healthy(t)
	})
	t.Run("oversize frame before connect", func(t *testing.T) {
		r := dialRaw(t, g)
		go r.Conn.Write(t.Context(), websocket.MessageText, oversizeFrame())
		r.ExpectClose(websocket.StatusMessageTooBig, "")
		healthy(t)
	})

	// After a successful connect.
	t.Run("malformed frame after connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Connect("after-1", "")
		r.SendText(`not json at all`)
		r.ExpectErr("", protocol.CodeBadRequest)
		r.SendText(`{"type":"req","method":"facts.update"}`) // no id
		r.ExpectErr("", protocol.CodeBadRequest)
		r.Facts("2", nil, map[string]bool{"alpha-tool": true})
		g.waitNodes(t, "after-1,healthy")
		healthy(t)
	})
	t.Run("malformed facts.update params", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Connect("after-2", "")
		r.SendText(`{"type":"req","id":"p","method":"facts.update","params":{"env":"ALPHA"}}`)
		r.ExpectErr("p", protocol.CodeBadRequest)
		r.Facts("q", nil, nil)
		healthy(t)
	})
	t.Run("unknown method after connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Connect("after-3", "")
		r.SendText(`{"type":"req","id":"u1","method":"node.reboot","params":{}}`)
		r.ExpectErr("u1", protocol.CodeUnknownMethod)
		r.Facts("u2", nil, nil)
		healthy(t)
	})
	t.Run("second connect after connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Connect("after-4", "")
		r.SendText(testkit.ConnectFrame("again", "after-4", "", protocol.Version, []string{"execution"}, baseline))
		r.ExpectErr("again", protocol.CodeBadRequest)
		r.Facts("f", nil, nil)
		healthy(t)
	})
	t.Run("oversize frame after connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Connect("after-5", "")
		r.Facts("f", nil, nil)
		go r.Conn.Write(t.Context(), websocket.MessageText, oversizeFrame())
		r.ExpectClose(websocket.StatusMessageTooBig, "")
		testkit.Eventually(t, waitFor, func() (string, bool) {
			ids := g.reportingNodeIDs(t)
			return ids, !strings.Contains(ids, "after-5")
		})
		healthy(t)
	})
	t.Run("frame of exactly 1 MiB is accepted", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Connect("after-exact", "")
		r.Send(websocket.MessageText, paddedFacts("exact", protocol.ReadLimit))
		r.ExpectOK("exact")
		r.Facts("next", nil, nil)
		healthy(t)
	})
	t.Run("oversize frames are counted", func(t *testing.T) {
		before := g.metric(t, "skillgate_node_frames_total", `kind="oversize"`)
		r := dialRaw(t, g)
		r.Connect("after-big", "")
		go r.Conn.Write(t.Context(), websocket.MessageText, oversizeFrame())
		r.ExpectClose(websocket.StatusMessageTooBig, "")
		testkit.Eventually(t, waitFor, func() (string, bool) {
			v := g.metric(t, "skillgate_node_frames_total", `kind="oversize"`)
			return fmt.Sprintf("oversize frames counted: %v (before: %v)", v, before), v == before+1
		})
		if !strings.Contains(g.Logs.String(), "over the read limit") {
			t.Errorf("no warning about the oversize frame in the gateway logs")
		}
	})
	t.Run("binary frame after connect", func(t *testing.T) {
		r := dialRaw(t, g)
		r.Connect("after-6", "")
		r.Facts("f", nil, nil)
		r.Send(websocket.MessageBinary, []byte(testkit.FactsFrame("b", nil, nil)))
		r.ExpectClose(websocket.StatusUnsupportedData, "")
		testkit.Eventually(t, waitFor, func() (string, bool) {
			ids := g.reportingNodeIDs(t)
			return ids, !strings.Contains(ids, "after-6")
		})
		healthy(t)
	})
	t.Run("unasked names are ignored", func(t *testing.T) {
		r := dialRaw(t, g)
		in := r.Connect("after-7", "")
		if !slices.Equal(in.Bins, []string{"alpha-tool"}) || len(in.Env) != 0 {
			t.Errorf("interest %+v, want bins [alpha-tool] and no env", in)
		}
		r.Facts("f", []string{"NOT_ASKED"}, map[string]bool{"alpha-tool": false, "not-asked": true})
		testkit.Eventually(t, waitFor, func() (string, bool) {
			ns, body := g.nodes(t)
			i := slices.IndexFunc(ns, func(n nodeView) bool { return n.ID == "after-7" })
			ok := i >= 0 && ns[i].FactsAt != nil && len(ns[i].Env) == 0 &&
				len(ns[i].HostBinStatus) == 1 && !ns[i].HostBinStatus["alpha-tool"]
			return body, ok
		})
		healthy(t)
	})
}

// oversizeFrame is a text frame one byte over the 1 MiB read limit.
func oversizeFrame() []byte { return paddedFacts("big", protocol.ReadLimit+1) }

// paddedFacts is a valid facts.update frame of exactly size bytes: an
// unknown "pad" member fills it up (unknown keys are ignored).
func paddedFacts(reqID string, size int) []byte {
	b := []byte(testkit.FactsFrame(reqID, nil, nil))
	b = b[:len(b)-1] // drop the closing brace
	pad := size - len(b) - len(`,"pad":""}`)
	out := append(b, []byte(`,"pad":"`+strings.Repeat("x", pad)+`"}`)...)
	if len(out) != size {
		panic(fmt.Sprintf("paddedFacts: %d bytes, want %d", len(out), size))
	}
	return out
}

// TestReplacement connects the same node id twice: the new connect is
// answered at once, even though the old peer is not reading, and the old
// socket is closed with 1008 "replaced".
func TestReplacement(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{"skills/alpha/SKILL.md": skillMD("alpha", "Uses alpha-tool.", `{"bins": ["alpha-tool"]}`)}})
	old := dialRaw(t, g)
	old.Connect("dup", "")
	old.Facts("f1", nil, map[string]bool{"alpha-tool": true})
	g.waitPrompt(t, "main", block(eAlpha))
	// old does not read from here on, until the new session is up.

	nu := dialRaw(t, g)
	start := time.Now()
	nu.Connect("dup", "")
	// Waiting on the old peer would take the 5 s close handshake timeout.
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the new connect took %v; it must not wait on the old peer", d)
	}
	// Until the new session reports facts, dup counts for nothing.
	ns, body := g.nodes(t)
	if len(ns) != 1 || ns[0].ID != "dup" || ns[0].FactsAt != nil {
		t.Errorf("GET /v1/nodes after the replacement: %s, want one dup without facts yet", body)
	}
	g.waitPrompt(t, "main", "")
	nu.Facts("f1", nil, map[string]bool{"alpha-tool": true})
	g.waitPrompt(t, "main", block(eAlpha))

	old.ExpectClose(websocket.StatusPolicyViolation, "replaced")

	// The old socket's end must not unregister the new session.
	time.Sleep(200 * time.Millisecond)
	ns, body = g.nodes(t)
	if len(ns) != 1 || ns[0].ID != "dup" || ns[0].FactsAt == nil {
		t.Fatalf("GET /v1/nodes: %s, want the new dup only", body)
	}
	if got := g.Prompt(t, "main"); got != block(eAlpha) {
		t.Errorf("prompt after the old socket closed:\n%s", got)
	}
	nu.Facts("f2", nil, map[string]bool{"alpha-tool": true})
}

// TestGatewayShutdownClosesNodes stops a gateway with a node connected: the
// node's socket must be closed with 1001 (going away), so that nodes can
// tell a restart from a network failure.
func TestGatewayShutdownClosesNodes(t *testing.T) {
	g := startGateway(t, gwOptions{})
	r := dialRaw(t, g)
	r.Connect("going", "")
	r.Facts("f", nil, nil)
	g.waitNodes(t, "going")
	go g.Stop()
	r.ExpectClose(websocket.StatusGoingAway, "")
}

// TestLogLinesHaveNoDuplicateKeys checks the gateway's JSON log lines after
// a session's whole life (connect, facts, refusal, disconnect): a key that
// appears twice in one line is ambiguous for log tooling (which "node"?).
func TestLogLinesHaveNoDuplicateKeys(t *testing.T) {
	g := startGateway(t, gwOptions{nodeToken: "tok",
		files: map[string]string{"skills/alpha/SKILL.md": skillMD("alpha", "Uses alpha-tool.", `{"bins": ["alpha-tool"]}`)}})
	r := dialRaw(t, g)
	r.Connect("dupkeys", "tok")
	r.Facts("f", []string{"UNASKED"}, map[string]bool{"alpha-tool": true})
	g.waitNodes(t, "dupkeys")
	r.Conn.Close(websocket.StatusNormalClosure, "bye")
	g.waitNodes(t, "")
	bad := dialRaw(t, g)
	bad.SendText(testkit.ConnectFrame("1", "dupkeys", "wrong", protocol.Version, []string{"execution"}, baseline))
	bad.ExpectErr("1", protocol.CodeUnauthorized)
	bad.ExpectClose(websocket.StatusPolicyViolation, "")
	testkit.Eventually(t, waitFor, func() (string, bool) {
		return g.Logs.String(), strings.Contains(g.Logs.String(), "node disconnected") && strings.Contains(g.Logs.String(), "node refused")
	})
	for _, line := range strings.Split(strings.TrimSpace(g.Logs.String()), "\n") {
		if dup := duplicateKey(line); dup != "" {
			t.Errorf("duplicate key %q in log line %s", dup, line)
		}
	}
}

// duplicateKey returns a top-level key that appears twice in a JSON object
// line, or "" (also for lines that are not JSON objects).
func duplicateKey(line string) string {
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		k, _ := tok.(string)
		if seen[k] {
			return k
		}
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return ""
		}
	}
	return ""
}

// TestNodeLimits: a gateway holds at most MaxNodes connected nodes (silent
// sockets do not count: see TestSilentSocketsCannotStarveNodes), and a
// node that floods facts.update is slowed down, not served at wire speed.
func TestNodeLimits(t *testing.T) {
	g := startGateway(t, gwOptions{maxNodes: 2, files: map[string]string{"skills/alpha/SKILL.md": skillMD("alpha", "Uses alpha-tool.", `{"bins": ["alpha-tool"]}`)}})
	a := dialRaw(t, g)
	a.Connect("a", "")
	b := dialRaw(t, g)
	b.Connect("b", "")
	silent := dialRaw(t, g) // a socket that never connects takes no slot
	_ = silent

	c := dialRaw(t, g)
	c.SendText(testkit.ConnectFrame("1", "c", "", 1, []string{"execution"}, baseline))
	c.ExpectErr("1", "unavailable")
	c.ExpectClose(1013, "gateway full")

	// Eleven updates cannot be processed in less than ten intervals.
	start := time.Now()
	for i := range 11 {
		a.Facts(fmt.Sprintf("f%d", i), nil, map[string]bool{"alpha-tool": i%2 == 0})
	}
	if d := time.Since(start); d < 10*50*time.Millisecond {
		t.Errorf("11 facts.update answered in %v; the gateway must pace them at least 50ms apart", d)
	}
	g.waitPrompt(t, "main", block(eAlpha))

	// The slot of a node that left is free again.
	b.Conn.CloseNow()
	testkit.Eventually(t, waitFor, func() (string, bool) {
		d := dialRaw(t, g)
		d.SendText(testkit.ConnectFrame("1", "d", "", 1, []string{"execution"}, baseline))
		f := d.Res()
		return fmt.Sprintf("%+v", f), *f.OK
	})
}

// TestSilentNodeIsDropped: a node that stops answering pings stops counting
// for prompt builds, without waiting for TCP to notice.
func TestSilentNodeIsDropped(t *testing.T) {
	g := startGateway(t, gwOptions{pingInterval: 200 * time.Millisecond,
		files: map[string]string{"skills/alpha/SKILL.md": skillMD("alpha", "Uses alpha-tool.", `{"bins": ["alpha-tool"]}`)}})
	r := dialRaw(t, g)
	r.Connect("quiet", "")
	r.Facts("f1", nil, map[string]bool{"alpha-tool": true})
	g.waitPrompt(t, "main", block(eAlpha))
	// r reads nothing from here on, so its library never answers a ping.
	g.waitNodes(t, "")
	g.waitPrompt(t, "main", "")
}

package gateway

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/store"
)

// TestReloadKeepsNodeAuthWhenExposed: on a gateway listening beyond
// loopback, a config reload that would leave no node token is rejected and
// the old tokens stay in force.
func TestReloadKeepsNodeAuthWhenExposed(t *testing.T) {
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "gw.hujson")
	write := func(s string) {
		if err := os.WriteFile(cfgPath, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"gateway": {"nodeTokens": {"n1": "secret"}}}`)
	s, err := New(Config{Store: st, ConfigPath: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	s.exposed.Store(true) // as Serve sets it for a non-loopback listener

	write(`{"gateway": {}}`)
	s.reloadConfig(true)
	if !s.tokenOK("n1", "secret") || s.tokenOK("intruder", "x") {
		t.Fatal("node auth changed by a reload that removed the last token")
	}
	if !strings.Contains(s.rejected, "leaves no node token") {
		t.Errorf("rejected = %q", s.rejected)
	}

	// On loopback the same reload is fine.
	s.exposed.Store(false)
	s.reloadConfig(true)
	if !s.tokenOK("intruder", "x") {
		t.Error("loopback gateway without tokens should accept any node")
	}
}

// configuredServer is a server (not serving) on an empty directory store
// with a config file the test rewrites and reloads by hand.
type configuredServer struct {
	*Server
	path string
	logs *syncbuf.Buffer
}

func newConfiguredServer(t *testing.T, cfg Config, content string) *configuredServer {
	t.Helper()
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &configuredServer{path: filepath.Join(t.TempDir(), "gw.hujson"), logs: &syncbuf.Buffer{}}
	c.write(t, content)
	cfg.Store, cfg.ConfigPath = st, c.path
	cfg.Logger = slog.New(slog.NewJSONHandler(c.logs, nil))
	if c.Server, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *configuredServer) write(t *testing.T, content string) {
	t.Helper()
	if err := os.WriteFile(c.path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reloadWith writes the config file and reloads it now.
func (c *configuredServer) reloadWith(t *testing.T, content string) {
	t.Helper()
	c.write(t, content)
	c.reloadConfig(true)
}

// wantSettingRecords checks that the records of the config's settings
// ("config: gateway.…", with their setting=) are exactly want.
func (c *configuredServer) wantSettingRecords(t *testing.T, want ...string) {
	t.Helper()
	if got := c.records(t, "config: gateway.", "setting"); !slices.Equal(got, want) {
		t.Errorf("log records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// records returns the log records whose message starts with prefix, as
// "LEVEL msg key=value…" for the keys given.
func (c *configuredServer) records(t *testing.T, prefix string, keys ...string) []string {
	t.Helper()
	var out []string
	for line := range strings.SplitSeq(strings.TrimSpace(c.logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		msg, _ := rec["msg"].(string)
		if !strings.HasPrefix(msg, prefix) {
			continue
		}
		s := fmt.Sprint(rec["level"], " ", msg)
		for _, k := range keys {
			s += fmt.Sprintf(" %s=%v", k, rec[k])
		}
		out = append(out, s)
	}
	return out
}

const (
	noNodeToken  = "no node token (gateway.nodeTokens is empty and SKILLGATE_NODE_TOKEN is unset)"
	noAgentToken = "no agent token (SKILLGATE_AGENT_TOKEN is unset and gateway.agentTokens is empty)"
	notInsecure  = "while the gateway listens beyond loopback and is not insecure (gateway.insecure or --insecure)"
)

// TestReloadAppliesInsecure: gateway.insecure follows the config file at
// every reload, under the rule Serve applies at start: beyond loopback,
// a config without both tokens is refused unless insecure.
func TestReloadAppliesInsecure(t *testing.T) {
	// No token at all: the gateway may listen beyond loopback only while
	// the file says insecure.
	c := newConfiguredServer(t, Config{}, `{"gateway": {"insecure": true}}`)
	if err := c.checkExposure("0.0.0.0:7780"); err != nil {
		t.Fatalf("start with gateway.insecure: %v", err)
	}
	c.exposed.Store(true) // as Serve sets it for that address
	c.reloadWith(t, `{"gateway": {}}`)
	if want := c.path + ": it leaves " + noNodeToken + " and " + noAgentToken + " " + notInsecure; c.rejected != want {
		t.Errorf("rejected = %q\nwant        %q", c.rejected, want)
	}
	if !c.pol.insecure {
		t.Error("a rejected reload turned insecure off")
	}

	// With an agent token, insecure may go once node tokens are set.
	c = newConfiguredServer(t, Config{AgentToken: "agent"}, `{"gateway": {"insecure": true}}`)
	if err := c.checkExposure("0.0.0.0:7780"); err != nil {
		t.Fatalf("start with gateway.insecure: %v", err)
	}
	c.exposed.Store(true)
	c.reloadWith(t, `{"gateway": {"nodeTokens": {"n1": "t1"}}}`)
	if c.rejected != "" || c.pol.insecure || !c.tokenOK("n1", "t1") || c.tokenOK("n2", "x") {
		t.Fatalf("reload to node tokens without insecure: rejected %q, insecure %v", c.rejected, c.pol.insecure)
	}
	// The rule of the start holds at every reload: no token, not insecure.
	c.reloadWith(t, `{"gateway": {}}`)
	if want := c.path + ": it leaves " + noNodeToken + " " + notInsecure; c.rejected != want {
		t.Errorf("rejected = %q\nwant        %q", c.rejected, want)
	}
	if !c.tokenOK("n1", "t1") || c.tokenOK("n2", "x") {
		t.Error("node auth changed by a rejected reload")
	}
	// Insecure again: accepted, with the warning of the start.
	c.reloadWith(t, `{"gateway": {"insecure": true}}`)
	if c.rejected != "" || !c.pol.insecure || !c.tokenOK("n2", "x") {
		t.Errorf("reload to insecure: rejected %q, insecure %v", c.rejected, c.pol.insecure)
	}
	got := c.records(t, "", "insecure", "addr")
	want := []string{
		"WARN INSECURE: listening beyond loopback without authentication; anyone who can reach this address can connect nodes or read skills insecure=<nil> addr=0.0.0.0:7780",
		"INFO config: gateway.insecure changed insecure=false addr=<nil>",
		"INFO config loaded insecure=<nil> addr=<nil>",
		"ERROR config rejected; the previous config stays in force insecure=<nil> addr=<nil>",
		"INFO config: gateway.insecure changed insecure=true addr=<nil>",
		"WARN INSECURE: listening beyond loopback without authentication; anyone who can reach this address can connect nodes or read skills insecure=<nil> addr=0.0.0.0:7780",
		"INFO config loaded insecure=<nil> addr=<nil>",
	}
	if !slices.Equal(got, want) {
		t.Errorf("log records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCommandLineWinsOverFile: a setting the command line gave (Flags)
// is not taken from the file, at start or at a reload.
func TestCommandLineWinsOverFile(t *testing.T) {
	file := `{"gateway": {"insecure": true, "maxNodes": 2}}`
	c := newConfiguredServer(t, Config{Flags: map[string]bool{"insecure": true, "maxNodes": true}, MaxNodes: 5}, file)
	want := "refusing to listen on 0.0.0.0:1 beyond loopback without a node token (SKILLGATE_NODE_TOKEN, --node-token-file or gateway.nodeTokens) and an agent token (SKILLGATE_AGENT_TOKEN, --agent-token-file or gateway.agentTokens): set them, listen on 127.0.0.1, or pass --insecure"
	if err := c.checkExposure("0.0.0.0:1"); err == nil || err.Error() != want {
		t.Errorf("checkExposure with --insecure=false = %v\nwant %s", err, want)
	}
	c.reloadWith(t, `{"gateway": {"insecure": true, "maxNodes": 3}}`)
	if c.pol.insecure || c.reg.max != 5 {
		t.Errorf("after a reload: insecure %v, maxNodes %d; want false, 5 (the command line's)", c.pol.insecure, c.reg.max)
	}

	c = newConfiguredServer(t, Config{MaxNodes: 5}, file)
	if err := c.checkExposure("0.0.0.0:1"); err != nil {
		t.Errorf("checkExposure with gateway.insecure and no flag: %v", err)
	}
	if c.reg.max != 2 {
		t.Errorf("maxNodes = %d, want the file's 2", c.reg.max)
	}
}

// TestReloadNamesRestartOnlySettings: a reload that changes a setting it
// cannot apply says which one, and that the command line wins over it
// when the command line gave it.
func TestReloadNamesRestartOnlySettings(t *testing.T) {
	c := newConfiguredServer(t, Config{Flags: map[string]bool{"poll": true}}, `{"gateway": {"listen": "127.0.0.1:1", "poll": "2s"}}`)
	c.reloadWith(t, `{"gateway": {"listen": "127.0.0.1:1", "poll": "2s"}}`)
	c.reloadWith(t, `{"gateway": {"listen": "127.0.0.1:2", "store": "/srv/skills", "poll": "3s"}}`)
	c.wantSettingRecords(t,
		"WARN config: gateway.listen changed; it takes effect at the next restart setting=gateway.listen",
		"WARN config: gateway.store changed; it takes effect at the next restart setting=gateway.store",
		"WARN config: gateway.poll changed; --poll on the command line wins over it setting=gateway.poll",
	)
}

// TestNewUsesTheFileAsRead: given the file serve read (Config.File), New
// does not read it again.
func TestNewUsesTheFileAsRead(t *testing.T) {
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gw.hujson")
	if err := os.WriteFile(path, []byte(`{"gateway": {"nodeTokens": {"n1": "t1"}, "maxNodes": 7}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ReadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`not even JSON`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, File: f})
	if err != nil {
		t.Fatalf("New with the file as read: %v", err)
	}
	if s.cfg.ConfigPath != path || !s.tokenOK("n1", "t1") || s.tokenOK("n2", "x") || s.reg.max != 7 {
		t.Errorf("New: ConfigPath %q, maxNodes %d; want %q, 7 and n1's token", s.cfg.ConfigPath, s.reg.max, path)
	}
	other := filepath.Join(t.TempDir(), "other.hujson")
	_, err = New(Config{Store: st, File: f, ConfigPath: other})
	if want := "gateway: Config.File was read from " + path + ", not ConfigPath " + other; err == nil || err.Error() != want {
		t.Errorf("New with another ConfigPath = %v, want %s", err, want)
	}
	_, err = New(Config{Store: st, ConfigPath: path})
	if err == nil || !strings.HasPrefix(err.Error(), "gateway config: "+path+":1:1: not valid JSON or HuJSON") {
		t.Errorf("New reading the file itself = %v, want it to read the bad content", err)
	}
}

// TestReloadAppliesMaxNodes: gateway.maxNodes follows the config file at
// every reload. A lowered cap disconnects no one; it refuses new nodes
// (unavailable, 1013) beyond it, still lets a connected id reconnect, and
// a file without it goes back to the default.
func TestReloadAppliesMaxNodes(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "gw.hujson")
	write := func(s string) {
		if err := os.WriteFile(cfgPath, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"gateway": {"maxNodes": 2}}`)
	g := startHard(t, Config{ConfigPath: cfgPath, MaxNodes: 4}, nil)
	socks := map[string]*websocket.Conn{}
	connect := func(id string) string {
		t.Helper()
		c, err := g.dial(t)
		if err != nil {
			t.Fatal(err)
		}
		wsWrite(c, fmt.Sprintf(`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"node":{"id":%q,"os":"linux","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}}`, id))
		f, err := wsReadRes(c)
		if err != nil {
			t.Fatalf("connect %s: %v", id, err)
		}
		if *f.OK {
			socks[id] = c
			return "ok"
		}
		_, _, err = c.Read(t.Context())
		return fmt.Sprintf("%s %d", f.Error.Code, websocket.CloseStatus(err))
	}
	connected := func() int {
		g.s.mu.RLock()
		defer g.s.mu.RUnlock()
		return len(g.s.reg.nodes)
	}
	steps := []struct {
		config string // "" keeps the file
		id     string
		want   string
	}{
		{"", "a", "ok"},
		{"", "b", "ok"},
		{"", "c", "unavailable 1013"},
		{`{"gateway": {"maxNodes": 3}}`, "c", "ok"},
		{`{"gateway": {"maxNodes": 1}}`, "d", "unavailable 1013"},
		{"", "a", "ok"},                // a connected id replaces itself on a full gateway
		{`{"gateway": {}}`, "d", "ok"}, // back to Config.MaxNodes: 4
		{"", "e", "unavailable 1013"},
	}
	for i, st := range steps {
		if st.config != "" {
			write(st.config)
			g.s.reloadConfig(true)
		}
		if got := connect(st.id); got != st.want {
			t.Fatalf("step %d: connect %s = %s, want %s (%d connected)", i, st.id, got, st.want, connected())
		}
		if i == 5 && connected() != 3 {
			t.Fatalf("%d nodes connected after lowering maxNodes to 1, want the 3 connected before", connected())
		}
	}
	// Every node kept through the reloads is still served.
	for _, id := range []string{"a", "b", "c", "d"} {
		wsWrite(socks[id], `{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{}}}`)
		if f, err := wsReadRes(socks[id]); err != nil || !*f.OK {
			t.Errorf("node %s after the reloads: %+v, %v", id, f, err)
		}
	}
}

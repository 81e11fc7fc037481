package gateway_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/store"
)

// TestSkillsFiltered: GET /v1/agents/{id}/skills says, per skill, how many
// connected hosts each host requirement rules out, in the pipeline's
// order, right after "hosts"; and it follows the hosts as they come and go.
func TestSkillsFiltered(t *testing.T) {
	dir := t.TempDir()
	for name, requires := range map[string]string{
		"mac-gh":   `{"bins": ["gh"], "os": ["osx"]}`,
		"win":      `{"os": ["windows"], "env": ["TOKEN"]}`,
		"plain":    ``,
		"disabled": `{"bins": ["gh"]}`,
	} {
		p := filepath.Join(dir, "skills", name, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(skillMD(name, "d", requires)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "gateway.hujson")
	if err := os.WriteFile(cfg, []byte(`{"skills": {"entries": {"disabled": {"enabled": false}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, gatewaytest.Options{NoWait: true, Config: gateway.Config{Store: st, ConfigPath: cfg, Poll: time.Hour}})

	skills := func() string {
		_, _, body := g.Get(t, "/v1/agents/main/skills", nil)
		return body
	}
	// filtered returns each skill's "hosts" and "filtered" members as
	// the answer writes them.
	filtered := func(body string) map[string]string {
		var rep struct {
			Skills []map[string]json.RawMessage `json:"skills"`
		}
		if err := json.Unmarshal([]byte(body), &rep); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, s := range rep.Skills {
			var name string
			json.Unmarshal(s["name"], &name)
			out[name] = `"hosts":` + string(s["hosts"]) + `,"filtered":` + string(s["filtered"])
			if !strings.Contains(body, out[name]) {
				t.Errorf("%s: %s is not in the answer as is:\n%s", name, out[name], body)
			}
		}
		return out
	}
	check := func(step string, want map[string]string) {
		t.Helper()
		got := filtered(skills())
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: %s: %s\nwant %s", step, name, got[name], w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: skills %v", step, got)
		}
	}

	check("no hosts", map[string]string{
		"disabled": `"hosts":[],"filtered":[]`,
		"mac-gh":   `"hosts":[],"filtered":[]`,
		"plain":    `"hosts":[],"filtered":[]`,
		"win":      `"hosts":[],"filtered":[]`,
	})

	conns := map[string]*websocket.Conn{}
	connect := func(id, osName string, env []string, bins map[string]bool) {
		r := testkit.DialNode(t, g.WSURL)
		conns[id] = r.Conn
		r.Host(protocol.HostFacts{ID: id, OS: osName, Roles: []string{"execution"}, Capabilities: protocol.BaselineCapabilities,
			Env: env, HostBinStatus: bins})
	}
	for i := range 3 {
		connect(fmt.Sprintf("lin-%d", i), "linux", []string{"TOKEN"}, map[string]bool{"gh": true})
	}
	connect("mac-0", "darwin", nil, map[string]bool{"gh": false})
	connect("mac-1", "macOS", nil, map[string]bool{"gh": true})
	check("five hosts", map[string]string{
		"disabled": `"hosts":[],"filtered":[]`,
		"mac-gh":   `"hosts":["mac-1"],"filtered":[{"requirement":"os","values":["darwin"],"hosts":3},{"requirement":"bins","values":["gh"],"hosts":1}]`,
		"plain":    `"hosts":[],"filtered":[]`,
		"win":      `"hosts":[],"filtered":[{"requirement":"os","values":["windows"],"hosts":5},{"requirement":"env","values":["TOKEN"],"hosts":0}]`,
	})

	// A host leaving drops the cached answer: the counts follow.
	conns["mac-1"].Close(websocket.StatusNormalClosure, "")
	testkit.Eventually(t, waitFor, func() (string, bool) {
		got := filtered(skills())["mac-gh"]
		return got, got == `"hosts":[],"filtered":[{"requirement":"os","values":["darwin"],"hosts":3},{"requirement":"bins","values":["gh"],"hosts":1}]`
	})
	check("mac-1 gone", map[string]string{
		"disabled": `"hosts":[],"filtered":[]`,
		"mac-gh":   `"hosts":[],"filtered":[{"requirement":"os","values":["darwin"],"hosts":3},{"requirement":"bins","values":["gh"],"hosts":1}]`,
		"plain":    `"hosts":[],"filtered":[]`,
		"win":      `"hosts":[],"filtered":[{"requirement":"os","values":["windows"],"hosts":4},{"requirement":"env","values":["TOKEN"],"hosts":0}]`,
	})
}

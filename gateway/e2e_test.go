package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/internal/testkit"
)

// The skills of TestPromptFollowsNodesSkillsAndConfig, all global.
var e2eSkills = map[string]string{
	"skills/alpha/SKILL.md":     skillMD("alpha", "Uses alpha-tool.", `{"bins": ["alpha-tool"]}`),
	"skills/always-on/SKILL.md": alwaysMD("always-on", "Always offered."),
	"skills/beta/SKILL.md":      skillMD("beta", "Uses beta-tool.", `{"bins": ["beta-tool"]}`),
	// alpha-tool is on node A, COMBO_KEY on node B: never on one host.
	"skills/combo/SKILL.md": skillMD("combo", "Needs alpha-tool and COMBO_KEY on one host.", `{"bins": ["alpha-tool"], "env": ["COMBO_KEY"]}`),
	"skills/gamma/SKILL.md": skillMD("gamma", "Needs COMBO_KEY.", `{"env": ["COMBO_KEY"]}`),
	"skills/plain/SKILL.md": skillMD("plain", "No requirements.", ""),
}

var (
	eAlpha    = global("alpha", "Uses alpha-tool.")
	eAlwaysOn = entry{name: "always-on", desc: "Always offered.", location: "skills/always-on/SKILL.md", always: true}
	eBeta     = global("beta", "Uses beta-tool.")
	eGamma    = global("gamma", "Needs COMBO_KEY.")
	ePlain    = global("plain", "No requirements.")
)

// TestPromptFollowsNodesSkillsAndConfig drives one MinIO-backed gateway
// with two real skillgate-node processes through node connects, a binary
// installed later, SKILL.md puts, changes and deletes, a config file that
// disables a skill, and node disconnects, asserting the exact block after
// each step.
func TestPromptFollowsNodesSkillsAndConfig(t *testing.T) {
	g := startGateway(t, gwOptions{files: e2eSkills})

	// No node: only the always skill and the one without requirements.
	g.waitPrompt(t, "main", block(eAlwaysOn, ePlain))

	dirA := testkit.BinDir(t, "alpha-tool", "eps-tool")
	dirB := testkit.BinDir(t, "unrelated-tool")
	nodeA := startNode(t, g.URL, "node-a", dirA, nil)
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, ePlain))

	nodeB := startNode(t, g.URL, "node-b", dirB, []string{"COMBO_KEY=set"})
	g.waitNodes(t, "node-a,node-b")
	// gamma joins; combo does not: its bin is on A, its env on B.
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, eGamma, ePlain))
	combo := skillReport(t, g, "main", "combo")
	if combo.Eligible || combo.Stage != "runtime" || !slices.Equal(combo.Reasons, []string{"requires bins: alpha-tool"}) || len(combo.Hosts) != 0 {
		t.Errorf("combo: %+v, want ineligible at runtime with reasons [requires bins: alpha-tool] (env filters first) and no hosts", combo)
	}

	// A binary installed on B later shows within the re-check interval,
	// without restarting anything.
	testkit.AddBin(t, dirB, "beta-tool")
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, eBeta, eGamma, ePlain))
	ns, _ := g.nodes(t)
	if len(ns) != 2 || !ns[1].HostBinStatus["beta-tool"] || ns[1].HostBinStatus["alpha-tool"] {
		t.Errorf("nodes after installing beta-tool on node-b: %+v", ns)
	}

	// SKILL.md put, changed, deleted.
	g.Put(t, "skills/delta/SKILL.md", skillMD("delta", "Delta one.", ""))
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, eBeta, global("delta", "Delta one."), eGamma, ePlain))
	g.Put(t, "skills/delta/SKILL.md", skillMD("delta", "Delta two.", ""))
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, eBeta, global("delta", "Delta two."), eGamma, ePlain))
	g.Delete(t, "skills/delta/SKILL.md")
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, eBeta, eGamma, ePlain))

	// A new skill needing a binary nobody was asked about: the gateway
	// widens its interest (evt interest), node A answers, the skill shows.
	g.Put(t, "skills/epsilon/SKILL.md", skillMD("epsilon", "Uses eps-tool.", `{"bins": ["eps-tool"]}`))
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, eBeta, global("epsilon", "Uses eps-tool."), eGamma, ePlain))
	g.Delete(t, "skills/epsilon/SKILL.md")
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, eBeta, eGamma, ePlain))

	// The config file disables alpha (HuJSON: comments, trailing commas).
	g.WriteConfig(t, `// written by the test
{
  "skills": {
    "entries": {
      "alpha": {"enabled": false}, // off for everyone
    },
  },
}`)
	g.Server.Reload()
	g.waitPrompt(t, "main", block(eAlwaysOn, eBeta, eGamma, ePlain))
	alpha := skillReport(t, g, "main", "alpha")
	if alpha.Stage != "config" || !slices.Equal(alpha.Reasons, []string{"disabled by skills.entries policy"}) {
		t.Errorf("alpha after disabling: %+v", alpha)
	}
	g.WriteConfig(t, `{}`)
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, eBeta, eGamma, ePlain))

	// Disconnects.
	nodeB.Kill(t)
	g.waitPrompt(t, "main", block(eAlpha, eAlwaysOn, ePlain))
	g.waitNodes(t, "node-a")
	nodeA.Kill(t)
	g.waitPrompt(t, "main", block(eAlwaysOn, ePlain))
	g.waitNodes(t, "")
}

// TestConfigReloadOnRequest checks that Reload re-reads the config file at
// once, even when the next poll is far away.
func TestConfigReloadOnRequest(t *testing.T) {
	g := startGateway(t, gwOptions{
		files: map[string]string{
			"skills/plain/SKILL.md": skillMD("plain", "No requirements.", ""),
			"skills/other/SKILL.md": skillMD("other", "Another one.", ""),
		},
		poll: time.Hour,
	})
	both := block(global("other", "Another one."), ePlain)
	g.waitPrompt(t, "main", both)
	g.WriteConfig(t, `{"skills": {"entries": {"plain": {"enabled": false}}}}`)
	time.Sleep(300 * time.Millisecond)
	if got := g.Prompt(t, "main"); got != both {
		t.Fatalf("config applied before Reload with a 1h poll:\n%s", got)
	}
	g.Server.Reload()
	g.waitPrompt(t, "main", block(global("other", "Another one.")))
}

// skillReportJSON is one skill of GET /v1/agents/{id}/skills.
type skillReportJSON struct {
	Name     string   `json:"name"`
	Dir      string   `json:"dir"`
	Location string   `json:"location"`
	ReadPath string   `json:"read_path"`
	Scope    string   `json:"scope"`
	Always   bool     `json:"always"`
	Eligible bool     `json:"eligible"`
	Stage    string   `json:"stage"`
	Reasons  []string `json:"reasons"`
	Hosts    []string `json:"hosts"`
	Prompt   string   `json:"prompt"`
	// Governance is decoded as the gateway's own type: the test asserts
	// on its values, not on its declaration.
	Governance *eligibility.Governance `json:"governance"`
}

func skillReport(t *testing.T, g *gw, agent, name string) skillReportJSON {
	t.Helper()
	var r struct {
		Skills []skillReportJSON `json:"skills"`
	}
	body := g.GetJSON(t, "/v1/agents/"+agent+"/skills", &r)
	for _, s := range r.Skills {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("skill %s not in the report:\n%s", name, body)
	return skillReportJSON{}
}

// TestNodeReportsOnlyAskedEnvNames runs a real node with a secret in its
// environment that no skill asks for, an asked variable with a value, and
// an asked variable set to "": the gateway must learn exactly the asked,
// non-empty name, and no env value or unasked name may show in the API or in
// either side's logs.
func TestNodeReportsOnlyAskedEnvNames(t *testing.T) {
	const (
		secretName  = "SECRET_THING"
		secretValue = "hunter2"
		askedValue  = "wx-value-5c1e9a" // a distinctive value of WEATHER_API_KEY
	)
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/weather/SKILL.md": skillMD("weather", "Weather forecasts.", `{"env": ["WEATHER_API_KEY"]}`),
		"skills/empty/SKILL.md":   skillMD("empty", "Needs EMPTY_KEY.", `{"env": ["EMPTY_KEY"]}`),
	}})
	n := startNode(t, g.URL, "env-node", testkit.BinDir(t), []string{
		secretName + "=" + secretValue,
		"WEATHER_API_KEY=" + askedValue,
		"EMPTY_KEY=",
	})
	g.waitNodes(t, "env-node")
	g.waitPrompt(t, "main", block(global("weather", "Weather forecasts.")))

	ns, body := g.nodes(t)
	if len(ns) != 1 || !slices.Equal(ns[0].Env, []string{"WEATHER_API_KEY"}) {
		t.Errorf("GET /v1/nodes env: %+v, want exactly [WEATHER_API_KEY]\n%s", ns, body)
	}
	if len(ns) == 1 && len(ns[0].HostBinStatus) != 0 {
		t.Errorf("hostBinStatus %v, want {} (no bins asked)", ns[0].HostBinStatus)
	}
	for _, leak := range []string{secretName, secretValue, askedValue} {
		if strings.Contains(body, leak) {
			t.Errorf("GET /v1/nodes shows %q:\n%s", leak, body)
		}
		if strings.Contains(g.Logs.String(), leak) {
			t.Errorf("gateway logs show %q", leak)
		}
		if strings.Contains(n.Output(), leak) {
			t.Errorf("node logs show %q", leak)
		}
	}
	_, _, skills := g.Get(t, "/v1/agents/main/skills", nil)
	for _, leak := range []string{secretName, secretValue, askedValue} {
		if strings.Contains(skills, leak) {
			t.Errorf("GET skills shows %q", leak)
		}
	}
}

// TestStorageOutageKeepsLastSnapshot stops MinIO under a running gateway:
// prompt builds keep the last good block and /readyz says 503 with an
// error; after a restart /readyz is 200 again and a change made after the
// restart becomes visible.
func TestStorageOutageKeepsLastSnapshot(t *testing.T) {
	m := miniotest.Start(t) // its own server: the shared one must stay up
	g := startGateway(t, gwOptions{minio: m, files: map[string]string{
		"skills/plain/SKILL.md": skillMD("plain", "No requirements.", ""),
	}})
	startNode(t, g.URL, "node-a", testkit.BinDir(t), nil)
	want := block(ePlain)
	g.waitPrompt(t, "main", want)
	g.waitNodes(t, "node-a")

	m.Stop()
	testkit.Eventually(t, waitFor, func() (string, bool) {
		code, _, body := g.Get(t, "/readyz", nil)
		var r struct {
			Ready bool   `json:"ready"`
			Error string `json:"error"`
		}
		json.Unmarshal([]byte(body), &r)
		// MinIO stopped: nothing answers on its port.
		return fmt.Sprint(code, " ", body), code == http.StatusServiceUnavailable && !r.Ready &&
			r.Error == "storage failing, serving the last good snapshot: cannot reach the storage endpoint"
	})
	if logs := g.Logs.String(); !strings.Contains(logs, `"msg":"storage failing; serving the last good snapshot"`) ||
		!strings.Contains(logs, `"cause":"cannot reach the storage endpoint `+m.Endpoint+`: dial tcp`) {
		t.Errorf("the outage is not logged with its cause:\n%s", logs)
	}
	for range 5 {
		if got := g.Prompt(t, "main"); got != want {
			t.Fatalf("prompt during the outage:\n%s\nwant the last good block:\n%s", got, want)
		}
		if got := g.Prompt(t, "nobody-seen-before"); got != want {
			t.Fatalf("prompt of a new agent during the outage:\n%s\nwant:\n%s", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, _, body := g.Get(t, "/healthz", nil); code != http.StatusOK {
		t.Errorf("/healthz during the outage: %d %s", code, body)
	}
	g.waitNodes(t, "node-a")

	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, waitFor, func() (string, bool) {
		code, _, body := g.Get(t, "/readyz", nil)
		return fmt.Sprint(code, " ", body), code == http.StatusOK
	})
	g.Put(t, "skills/after/SKILL.md", skillMD("after", "Added after the restart.", ""))
	g.waitPrompt(t, "main", block(global("after", "Added after the restart."), ePlain))
}

// TestSteadyStatePromptBuildsMakeNoStorageRequest checks the performance
// contract: once the snapshot settled, prompt builds are served from the
// cache without any storage read.
func TestSteadyStatePromptBuildsMakeNoStorageRequest(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/alpha/SKILL.md":            skillMD("alpha", "Uses alpha-tool.", `{"bins": ["alpha-tool"]}`),
		"skills/plain/SKILL.md":            skillMD("plain", "No requirements.", ""),
		"agents/main/skills/mine/SKILL.md": skillMD("mine", "Main only.", ""),
	}})
	startNode(t, g.URL, "node-a", testkit.BinDir(t, "alpha-tool"), nil)
	want := block(entry{name: "mine", desc: "Main only.", location: "agents/main/skills/mine/SKILL.md"}, eAlpha, ePlain)
	g.waitPrompt(t, "main", want)
	time.Sleep(600 * time.Millisecond) // a few polls and node re-checks

	gets := g.metric(t, "skillgate_store_requests_total", `op="get"`)
	lists := g.metric(t, "skillgate_store_requests_total", `op="list"`)
	hits := g.metric(t, "skillgate_prompt_builds_total", `cache="hit"`)
	for i := range 50 {
		if got := g.Prompt(t, "main"); got != want {
			t.Fatalf("prompt build %d:\n%s\nwant:\n%s", i, got, want)
		}
	}
	getsAfter := g.metric(t, "skillgate_store_requests_total", `op="get"`)
	hitsAfter := g.metric(t, "skillgate_prompt_builds_total", `cache="hit"`)
	if getsAfter != gets {
		t.Errorf("store get requests went from %v to %v during 50 steady-state prompt builds", gets, getsAfter)
	}
	if hitsAfter-hits < 49 {
		t.Errorf("prompt build cache hits grew by %v, want ≥ 49", hitsAfter-hits)
	}
	if lists == 0 {
		t.Errorf("no list request counted: is skillgate_store_requests_total wired?")
	}
}

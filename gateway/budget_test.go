package gateway_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
)

// TestPromptBudget drives the budget through the config file and the
// request: the block never exceeds it, ends with the note when anything
// was cut, and a request may only lower the budget.
func TestPromptBudget(t *testing.T) {
	files := map[string]string{"skills/aaa-always/SKILL.md": alwaysMD("aaa-always", "Always here.")}
	for i := range 40 {
		files[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = skillMD(fmt.Sprintf("s%02d", i), strings.Repeat("A long description. ", 12), "")
	}
	g := startGateway(t, gwOptions{files: files, config: `{
		"gateway": {"prompt": {"maxChars": 6000, "maxSkills": 30}},
		"agents": {"small": {"prompt": {"maxChars": 2000}}},
		"skills": {"entries": {"s39": {"priority": 5}}}}`})
	code, hdr, body := g.Get(t, "/v1/agents/main/prompt", nil)
	if code != 200 || len(body) > 6000 || !strings.Contains(body, `<note omitted="11" shortened="`) || !strings.HasSuffix(body, "</note>\n</available_skills>") {
		t.Fatalf("main: %d, %d bytes:\n%s", code, len(body), body)
	}
	// Priority order: the always skill, then s39 (priority 5), then by name.
	if i, j, k := strings.Index(body, `name="aaa-always"`), strings.Index(body, `name="s39"`), strings.Index(body, `name="s00"`); !(i >= 0 && i < j && j < k) {
		t.Errorf("order: aaa-always at %d, s39 at %d, s00 at %d", i, j, k)
	}
	etag := hdr.Get("ETag")

	// The agent's own budget, and a request lowering it further.
	_, _, small := g.Get(t, "/v1/agents/small/prompt", nil)
	_, _, smaller := g.Get(t, "/v1/agents/small/prompt?maxChars=1000&maxSkills=3", nil)
	if len(small) > 2000 || len(smaller) > 1000 || len(smaller) >= len(small) || strings.Count(smaller, "<skill ") > 3 {
		t.Errorf("small %d bytes, lowered %d bytes with %d skills", len(small), len(smaller), strings.Count(smaller, "<skill "))
	}
	// Above the configured budget: clamped, the same block.
	if _, h, b := g.Get(t, "/v1/agents/main/prompt?maxChars=999999&maxSkills=1000", nil); b != body || h.Get("ETag") != etag {
		t.Errorf("a raised budget changed the block (%d bytes, ETag %s)", len(b), h.Get("ETag"))
	}
	for _, q := range []string{"maxChars=abc", "maxSkills=0", "maxChars=-5"} {
		if code, _, b := g.Get(t, "/v1/agents/main/prompt?"+q, nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", q, code, b)
		}
	}
	// Each skill's fit is in /skills.
	if r := skillReport(t, g, "main", "aaa-always"); r.Prompt == "" || r.Prompt == "omitted" {
		t.Errorf("aaa-always fit %q", r.Prompt)
	}
	if r := skillReport(t, g, "main", "s38"); r.Prompt != "omitted" {
		t.Errorf("s38 fit %q, want omitted (past maxSkills)", r.Prompt)
	}

	// Always skills alone over the budget: all emitted, logged and counted.
	g.WriteConfig(t, `{"gateway": {"prompt": {"maxChars": 100}}}`)
	g.Server.Reload()
	testkit.Eventually(t, waitFor, func() (string, bool) {
		b := g.Prompt(t, "main")
		return b, strings.Contains(b, `name="aaa-always"`) && !strings.Contains(b, `name="s00"`)
	})
	if n := g.metric(t, "skillgate_prompt_over_budget_total"); n != 1 {
		t.Errorf("over_budget_total = %v, want 1", n)
	}
	if !strings.Contains(g.Logs.String(), "prompt budget: the always skills alone exceed it") {
		t.Error("no warn log of the always skills over the budget")
	}
}

// TestPromptHostsHint: gateway.prompt.hosts "names" lists the matching
// hosts of each skill with host requirements, and follows node events.
func TestPromptHostsHint(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/tool/SKILL.md":  skillMD("tool", "Needs the-tool.", `{"bins": ["the-tool"]}`),
		"skills/plain/SKILL.md": skillMD("plain", "Plain.", ""),
	}, config: `{"gateway": {"prompt": {"hosts": "names"}}}`})
	dirA, dirB := testkit.BinDir(t, "the-tool"), testkit.BinDir(t, "other")
	startNode(t, g.URL, "node-a", dirA, nil)
	startNode(t, g.URL, "node-b", dirB, nil)
	g.waitNodes(t, "node-a,node-b")
	testkit.Eventually(t, waitFor, func() (string, bool) {
		b := g.Prompt(t, "main")
		return b, strings.Contains(b, "<read_path>skills/tool/SKILL.md</read_path>\n    <hosts count=\"1\">node-a</hosts>\n  </skill>")
	})
	if b := g.Prompt(t, "main"); strings.Contains(b, "skills/plain/SKILL.md</read_path>\n    <hosts") {
		t.Errorf("a skill without host requirements got a hosts hint:\n%s", b)
	}
	testkit.AddBin(t, dirB, "the-tool") // node-b now matches too: the block changes
	testkit.Eventually(t, waitFor, func() (string, bool) {
		b := g.Prompt(t, "main")
		return b, strings.Contains(b, `<hosts count="2">node-a, node-b</hosts>`)
	})
}

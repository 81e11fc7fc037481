package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/skillgate/skillgate/gateway"
)

// TestSkillSearch: /skills?eligible=true&q=…&limit=N ranks the agent's
// skills by relevance, with the same skill objects plus a score.
func TestSkillSearch(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/github/SKILL.md":    skillMD("github", "Interact with GitHub using the gh CLI: issues and pull requests.", ""),
		"skills/summarize/SKILL.md": skillMD("summarize", "Summarize web pages and GitHub issues.", ""),
		"skills/weather/SKILL.md":   skillMD("weather", "Current weather and forecasts.", ""),
		"skills/gh-local/SKILL.md":  skillMD("gh-local", "GitHub issues offline.", `{"bins": ["nowhere-tool"]}`),
	}})
	search := func(q string) gateway.SearchAnswer {
		t.Helper()
		code, _, body := g.get(t, "/v1/agents/main/skills?"+q, nil)
		if code != http.StatusOK {
			t.Fatalf("search %s: %d %s", q, code, body)
		}
		var a gateway.SearchAnswer
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatalf("search %s: %v\n%s", q, err, body)
		}
		return a
	}
	names := func(a gateway.SearchAnswer) []string {
		var out []string
		for _, s := range a.Skills {
			out = append(out, s.Name)
		}
		return out
	}
	a := search("eligible=true&q=github+issues")
	if got := names(a); len(got) != 2 || got[0] != "github" || got[1] != "summarize" {
		t.Errorf("eligible github issues: %v, want [github summarize] (gh-local is not eligible)", got)
	}
	if len(a.Skills) == 2 && (a.Skills[0].Score == nil || a.Skills[1].Score == nil || *a.Skills[0].Score <= *a.Skills[1].Score) {
		t.Errorf("scores not descending: %+v", a.Skills)
	}
	if a.Agent != "main" || a.Query != "github issues" || !a.Skills[0].Eligible || a.Skills[0].Location != "skills/github/SKILL.md" {
		t.Errorf("answer %+v", a)
	}
	if got := names(search("q=github+issues&limit=1")); len(got) != 1 || got[0] != "gh-local" && got[0] != "github" {
		t.Errorf("limit=1: %v", got)
	}
	if got := names(search("eligible=false")); len(got) != 1 || got[0] != "gh-local" {
		t.Errorf("eligible=false: %v, want [gh-local]", got)
	}
	if got := names(search("q=nothing-matches")); len(got) != 0 {
		t.Errorf("no match: %v", got)
	}
	for _, q := range []string{"limit=0", "limit=x", "eligible=maybe"} {
		if code, _, body := g.get(t, "/v1/agents/main/skills?"+q, nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", q, code, body)
		}
	}
	// Without a search parameter: the plain answer.
	if code, _, body := g.get(t, "/v1/agents/main/skills?q=", nil); code != 200 || !json.Valid([]byte(body)) || len(body) < 100 {
		t.Errorf("empty q: %d %s", code, body)
	}
}

package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
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
		code, _, body := g.Get(t, "/v1/agents/main/skills?"+q, nil)
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
		if code, _, body := g.Get(t, "/v1/agents/main/skills?"+q, nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", q, code, body)
		}
	}
	// Without a search parameter: the plain answer.
	if code, _, body := g.Get(t, "/v1/agents/main/skills?q=", nil); code != 200 || !json.Valid([]byte(body)) || len(body) < 100 {
		t.Errorf("empty q: %d %s", code, body)
	}
}

// TestSearchScope (T6, T7, O1): a skill outside the agent's scope does not
// exist for its search, not even in the ranking's statistics (a score
// moved with the words of scoped-out descriptions: a word-by-word oracle),
// and /skills shows no homepage of it; q is bounded.
func TestSearchScope(t *testing.T) {
	md := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\nhomepage: https://example.com/" + name + "\n---\n# " + name + "\n"
	}
	files := map[string]string{
		"skills/git-notes/SKILL.md": md("git-notes", "Notes in git about the release."),
		"skills/git-tags/SKILL.md":  md("git-tags", "Tags of a release."),
	}
	scoped := map[string]string{
		"skills/secret-plan/SKILL.md": md("secret-plan", "Merger release codename falcon."),
	}
	for k, v := range files {
		scoped[k] = v
	}
	cfg := `{"agents": {"ops": {"skills": {"allow": ["git-*"]}}}}`
	score := func(g *gw, q string) []string {
		t.Helper()
		code, _, body := g.Get(t, "/v1/agents/ops/skills?q="+q, nil)
		var a gateway.SearchAnswer
		if err := json.Unmarshal([]byte(body), &a); code != http.StatusOK || err != nil {
			t.Fatalf("search %s: %d %s", q, code, body)
		}
		var out []string
		for _, s := range a.Skills {
			out = append(out, fmt.Sprintf("%s=%.9f", s.Name, *s.Score))
		}
		return out
	}
	with := startGateway(t, gwOptions{files: scoped, config: cfg})
	without := startGateway(t, gwOptions{files: files, config: cfg})
	with.waitPrompt(t, "ops", block(global("git-notes", "Notes in git about the release."), global("git-tags", "Tags of a release.")))
	without.waitPrompt(t, "ops", block(global("git-notes", "Notes in git about the release."), global("git-tags", "Tags of a release.")))
	for _, q := range []string{"release", "release+falcon", "falcon", "secret", "notes+release"} {
		if a, b := score(with, q), score(without, q); !slices.Equal(a, b) {
			t.Errorf("q=%s: scores %v with a scoped-out skill, %v without it", q, a, b)
		}
	}
	if r := skillReport(t, with, "ops", "secret-plan"); r.Stage != "config" {
		t.Fatalf("secret-plan for ops: stage %q", r.Stage)
	}
	_, _, body := with.Get(t, "/v1/agents/ops/skills", nil)
	if strings.Contains(body, "example.com/secret-plan") || !strings.Contains(body, "example.com/git-notes") {
		t.Errorf("/skills of ops shows the scoped-out skill's homepage, or not the others':\n%s", body)
	}

	// q is bounded in bytes and words.
	for q, code := range map[string]int{
		strings.Repeat("word+", 32):                  http.StatusOK,
		strings.Repeat("word+", 33):                  http.StatusBadRequest,
		strings.Repeat("a", gateway.MaxQueryBytes):   http.StatusOK,
		strings.Repeat("a", gateway.MaxQueryBytes+1): http.StatusBadRequest,
	} {
		got, _, body := with.Get(t, "/v1/agents/ops/skills?q="+q, nil)
		if got != code {
			t.Errorf("q of %d bytes: %d %s, want %d", len(q), got, body, code)
		}
		if code == http.StatusBadRequest && body != `{"error":"q: at most 512 bytes and 32 words"}`+"\n" {
			t.Errorf("q of %d bytes: body %s", len(q), body)
		}
	}
}

package gateway_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit"
)

// depReport is the part of a /skills skill object the dependency and
// version tests read.
type depReport struct {
	Name     string          `json:"name"`
	Version  *string         `json:"version"`
	Shadows  json.RawMessage `json:"shadows"`
	Eligible bool            `json:"eligible"`
	Stage    string          `json:"stage"`
	Reasons  []string        `json:"reasons"`
}

// depReports returns an agent's /skills answer by skill name.
func depReports(t *testing.T, g *gw, agent string) map[string]depReport {
	t.Helper()
	code, _, body := g.Get(t, "/v1/agents/"+agent+"/skills", nil)
	if code != http.StatusOK {
		t.Fatalf("GET skills: %d %s", code, body)
	}
	var r struct {
		Skills []depReport `json:"skills"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]depReport{}
	for _, s := range r.Skills {
		out[s.Name] = s
	}
	return out
}

// verdict is a report as "" (offered) or "stage: reasons".
func (r depReport) verdict() string {
	if r.Eligible {
		return ""
	}
	return r.Stage + ": " + strings.Join(r.Reasons, "; ")
}

// TestDependencyFlipsWithItsDependants: a node event that makes a skill
// eligible makes the skills that depend on it eligible in the same update:
// one block change, answered to a waiting long poll at once, and no second
// change after it; and the reverse when the binary goes.
func TestDependencyFlipsWithItsDependants(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/plain/SKILL.md":   skillMD("plain", "Plain.", ""),
		"skills/base/SKILL.md":    skillMD("base", "Needs dep-tool.", `{"bins": ["dep-tool"]}`),
		"skills/top/SKILL.md":     skillMD("top", "Builds on base.", `{"skills": ["base"]}`),
		"skills/either/SKILL.md":  skillMD("either", "Builds on base or nope.", `{"anySkills": ["nope", "base"]}`),
		"skills/chain/SKILL.md":   skillMD("chain", "Builds on top.", `{"skills": ["top"]}`),
		"skills/loop-b/SKILL.md":  skillMD("loop-b", "Needs loop-a.", `{"skills": ["loop-a"]}`),
		"skills/loop-a/SKILL.md":  skillMD("loop-a", "Needs loop-b.", `{"skills": ["loop-b"], "bins": ["dep-tool"]}`),
		"skills/on-loop/SKILL.md": skillMD("on-loop", "Needs loop-b.", `{"skills": ["loop-b"]}`),
	}})
	dir := testkit.BinDir(t, "unrelated")
	startNode(t, g.URL, "n1", dir, nil)
	g.waitNodes(t, "n1")

	before := block(global("plain", "Plain."))
	g.waitPrompt(t, "main", before)
	cycle := "requirements: invalid requirement: dependency cycle loop-a -> loop-b -> loop-a"
	want := map[string]string{
		"plain": "", "base": "runtime: requires bins: dep-tool",
		"top": "requirements: requires skills: base", "either": "requirements: requires anySkills: nope, base",
		"chain":  "requirements: requires skills: top",
		"loop-a": "runtime: requires bins: dep-tool", "loop-b": cycle, "on-loop": "requirements: requires skills: loop-b",
	}
	check := func(want map[string]string) {
		t.Helper()
		got := map[string]string{}
		for name, r := range depReports(t, g, "main") {
			got[name] = r.verdict()
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("verdicts:\n got %q\nwant %q", got, want)
		}
	}
	check(want)

	after := block(global("plain", "Plain."), global("base", "Needs dep-tool."), global("top", "Builds on base."),
		global("either", "Builds on base or nope."), global("chain", "Builds on top."))
	for _, step := range []struct {
		name        string
		change      func()
		from, to    string
		wantReports map[string]string
	}{
		{"the binary comes", func() { testkit.AddBin(t, dir, "dep-tool") }, before, after, map[string]string{
			"plain": "", "base": "", "top": "", "either": "", "chain": "",
			"loop-a": cycle, "loop-b": cycle, "on-loop": "requirements: requires skills: loop-b",
		}},
		{"the binary goes", func() {
			if err := os.Remove(filepath.Join(dir, "dep-tool")); err != nil {
				t.Fatal(err)
			}
		}, after, before, want},
	} {
		_, hdr, body := g.Get(t, "/v1/agents/main/prompt", nil)
		if body != step.from {
			t.Fatalf("%s: prompt before:\n%s", step.name, body)
		}
		etag := hdr.Get("ETag")
		res := make(chan poll, 1)
		go func() { res <- g.pollPrompt(t, "main", etag, "30s") }()
		time.Sleep(300 * time.Millisecond) // the poll is waiting
		step.change()
		p := <-res
		if p.code != http.StatusOK || p.body != step.to {
			t.Fatalf("%s: the long poll woke with %d:\n%s\nwant the dependency and its dependants at once:\n%s", step.name, p.code, p.body, step.to)
		}
		// No second change follows: the dependants came in the same one.
		if again := g.pollPrompt(t, "main", p.etag, "1s"); again.code != http.StatusNotModified {
			t.Errorf("%s: a second change followed: %d\n%s", step.name, again.code, again.body)
		}
		check(step.wantReports)
	}
	// The log says why, once per change, with the stage.
	logs := g.Logs.String()
	for _, want := range []string{
		`"msg":"skill disabled: requires skills: base","agent":"main","skill":"top"`,
		`"msg":"skill enabled","agent":"main","skill":"top"`,
		`"msg":"skill disabled: invalid requirement: dependency cycle loop-a -> loop-b -> loop-a","agent":"main","skill":"loop-a"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s", want)
		}
	}
	if n := strings.Count(logs, `"msg":"skill enabled","agent":"main","skill":"top"`); n != 1 {
		t.Errorf("top enabled logged %d times, want once", n)
	}
}

// TestVersionsAndShadows: the version of each skill and the global skill an
// agent-local one shadows are reported; a skills.entries version
// constraint excludes at stage config, always or not.
func TestVersionsAndShadows(t *testing.T) {
	g := startGateway(t, gwOptions{
		files: map[string]string{
			"skills/tool/SKILL.md":                  "---\nname: tool\ndescription: Tool.\nversion: 1.10\n---\n",
			"agents/a1/skills/tool/SKILL.md":        "---\nname: tool\ndescription: Mine.\nmetadata: {\"openclaw\": {\"version\": \"v2.0.0\"}}\n---\n",
			"skills/unversioned/SKILL.md":           skillMD("unversioned", "None.", ""),
			"agents/a1/skills/unversioned/SKILL.md": skillMD("unversioned", "Mine too.", ""),
			"skills/pinned/SKILL.md":                "---\nname: pinned\ndescription: Pinned.\nalways: true\nversion: 0.9.0\n---\n",
			"skills/none/SKILL.md":                  "---\nname: none\ndescription: No version.\n---\n",
		},
		config: `{"skills": {"entries": {"pinned": {"version": ">=1.0 <2"}, "none": {"version": "^1"}, "tool": {"version": "~1.10"}}}}`,
	})
	mainView := depReports(t, g, "main")
	if v := mainView["tool"].Version; v == nil || *v != "1.10" || mainView["tool"].Shadows != nil || !mainView["tool"].Eligible {
		t.Errorf("main's tool: %+v", mainView["tool"])
	}
	if r := mainView["unversioned"]; r.Version != nil {
		t.Errorf("a skill without a version has \"version\": %q", *r.Version)
	}
	if got := mainView["pinned"].verdict(); got != "config: version 0.9.0 does not satisfy >=1.0 <2" {
		t.Errorf("pinned: %q", got)
	}
	if got := mainView["none"].verdict(); got != "config: version (none) does not satisfy ^1" {
		t.Errorf("none: %q", got)
	}

	local := depReports(t, g, "a1")
	r := local["tool"]
	if r.Version == nil || *r.Version != "v2.0.0" || string(r.Shadows) != `{"location":"skills/tool/SKILL.md","version":"1.10"}` {
		t.Errorf("a1's tool: version %v shadows %s", r.Version, r.Shadows)
	}
	// The constraint reads the agent-local skill's own version.
	if got := r.verdict(); got != "config: version v2.0.0 does not satisfy ~1.10" {
		t.Errorf("a1's tool: %q", got)
	}
	if s := local["unversioned"].Shadows; string(s) != `{"location":"skills/unversioned/SKILL.md"}` {
		t.Errorf("a1's unversioned shadows %s", s)
	}
}

package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
)

// TestAgentTokens: a per-agent token reads only its agent's endpoints;
// the admin token reads everything; a token may be configured as its
// SHA-256.
func TestAgentTokens(t *testing.T) {
	sum := sha256.Sum256([]byte("tok-a2"))
	g := startGateway(t, gwOptions{
		files:      map[string]string{"skills/plain/SKILL.md": skillMD("plain", "No requirements.", "")},
		agentToken: "admin-tok",
		config:     `{"gateway": {"agentTokens": {"a1": "tok-a1", "a2": "sha256:` + hex.EncodeToString(sum[:]) + `"}}}`,
	})
	g.Token = ""
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	tests := []struct {
		path, token string
		code        int
	}{
		{"/v1/agents/a1/prompt", "tok-a1", 200},
		{"/v1/agents/a1/skills", "tok-a1", 200},
		{"/v1/agents/a1/read?path=skills/plain/SKILL.md", "tok-a1", 200},
		{"/v1/agents/a2/prompt", "tok-a1", 403},
		{"/v1/agents/main/prompt", "tok-a1", 403},
		{"/v1/agents/a2/prompt", "tok-a2", 200},
		{"/v1/agents/a2/prompt", "sha256:" + hex.EncodeToString(sum[:]), 403}, // the hash is not the token
		{"/v1/nodes", "tok-a1", 403},
		{"/v1/governance", "tok-a2", 403},
		{"/v1/agents/a2/prompt", "admin-tok", 200},
		{"/v1/nodes", "admin-tok", 200},
		{"/v1/governance", "admin-tok", 200},
		{"/v1/agents/a1/prompt", "", 401},
	}
	for _, tc := range tests {
		var hdr http.Header
		if tc.token != "" {
			hdr = bearer(tc.token)
		}
		code, _, body := g.Get(t, tc.path, hdr)
		if code != tc.code {
			t.Errorf("%s with %q: %d %s, want %d", tc.path, tc.token, code, body, tc.code)
		}
		if code == 403 && body != `{"error":"forbidden"}`+"\n" {
			t.Errorf("%s with %q: body %q, want {\"error\":\"forbidden\"}", tc.path, tc.token, body)
		}
	}
}

// TestAgentScope: agents.<id>.skills keeps an agent to its skills: the
// others are stage config for it, and not readable.
func TestAgentScope(t *testing.T) {
	g := startGateway(t, gwOptions{
		files: map[string]string{
			"skills/github/SKILL.md":       skillMD("github", "GitHub.", ""),
			"skills/github-admin/SKILL.md": skillMD("github-admin", "Admin.", ""),
			"skills/plain/SKILL.md":        skillMD("plain", "Plain.", ""),
		},
		config: `{"agents": {"ops": {"skills": {"allow": ["git*"], "deny": ["*-admin"]}}}}`,
	})
	g.waitPrompt(t, "ops", block(global("github", "GitHub.")))
	g.waitPrompt(t, "main", block(global("github", "GitHub."), global("github-admin", "Admin."), global("plain", "Plain.")))
	for _, name := range []string{"plain", "github-admin"} {
		r := skillReport(t, g, "ops", name)
		if r.Eligible || r.Stage != "config" || len(r.Reasons) != 1 || r.Reasons[0] != "not in this agent's skill scope" {
			t.Errorf("ops %s: eligible %v stage %q reasons %q, want config [not in this agent's skill scope]", name, r.Eligible, r.Stage, r.Reasons)
		}
	}
	if code, _, body := g.Get(t, "/v1/agents/ops/read?path=skills/plain/SKILL.md", nil); code != http.StatusNotFound {
		t.Errorf("ops reading plain: %d %s, want 404", code, body)
	}
	if code, _, _ := g.Get(t, "/v1/agents/main/read?path=skills/plain/SKILL.md", nil); code != http.StatusOK {
		t.Errorf("main reading plain: %d, want 200", code)
	}
}

// TestAgentSettingsRejected: bad budgets, globs, tokens and unknown keys
// are refused with a message naming the key.
func TestAgentSettingsRejected(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"gateway": {"prompt": {"maxChars": 0}}}`, `:1:25: gateway.prompt.maxChars: must be a positive whole number, got the number 0`},
		{`{"gateway": {"prompt": {"maxSkills": "10"}}}`, `:1:25: gateway.prompt.maxSkills: must be a positive whole number, got the string "10"`},
		{`{"gateway": {"prompt": {"maxChars": 1.5}}}`, `:1:25: gateway.prompt.maxChars: must be a positive whole number, got the number 1.5`},
		{`{"gateway": {"prompt": {"hosts": "all"}}}`, `:1:25: gateway.prompt.hosts: must be one of "none", "count", "names", got "all"`},
		{`{"gateway": {"prompt": {"maxchars": 10}}}`, `:1:25: gateway.prompt.maxchars: unknown setting; did you mean gateway.prompt.maxChars? (known: maxChars, maxSkills, hosts)`},
		{`{"gateway": {"prompt": {"limit": 10}}}`, `:1:25: gateway.prompt.limit: unknown setting (known: maxChars, maxSkills, hosts)`},
		{`{"agents": {"a1": {"prompt": {"maxSkills": -1}}}}`, `:1:31: agents.a1.prompt.maxSkills: must be a positive whole number, got the number -1`},
		{`{"agents": {"a1": {"prompt": {"hosts": "count"}}}}`, `:1:31: agents.a1.prompt.hosts: unknown setting (known: maxChars, maxSkills)`},
		{`{"agents": {"a1": {"skills": {"allow": ["[a-"]}}}}`, `:1:41: agents.a1.skills.allow[0]: "[a-" does not compile: syntax error in pattern`},
		{`{"agents": {"a1": {"skils": {}}}}`, `:1:20: agents.a1.skils: unknown key; did you mean agents.a1.skills?`},
		{`{"agents": {"a/b": {}}}`, `:1:13: agents.a/b: agent id "a/b" contains a slash or backslash`},
		{`{"gateway": {"agentTokens": {"a1": ""}}}`, `:1:30: gateway.agentTokens.a1: must be a non-empty string, got the string ""`},
		{`{"gateway": {"nodeTokens": {"n1": "sha256:abc"}}}`, `:1:29: gateway.nodeTokens.n1: "sha256:" must be followed by the 64 hex digits`},
	} {
		path := filepath.Join(t.TempDir(), "gw.hujson")
		if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := gateway.ReadConfigFile(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.file, err, tc.want)
		}
	}
}

// TestOpenClawConfig: an OpenClaw-shaped config, with keys of OpenClaw's
// and of the operator's everywhere, drives the agents' scopes in /prompt,
// /skills, search and /read; skills.limits.maxSkillsPromptChars is the
// block budget, applied at reload; a typo or a wrong type is refused at
// reload and the config in force stays.
func TestOpenClawConfig(t *testing.T) {
	const cfg = `{
	  // OpenClaw's own config, as it is
	  "meta": {"lastTouchedVersion": "2026.6.1"},
	  "myTeam": {"oncall": ["ana"]},
	  "gateway": {"port": 18789, "bind": "loopback", "auth": {"mode": "token", "token": "x"}, "region": "eu"},
	  "agents": {
	    "defaults": {"skills": ["github", "notes"], "model": "anthropic/claude", "workspace": "~/w"},
	    "list": [
	      {"id": "main", "default": true, "skills": ["github", "plain"], "model": {"primary": "m"}},
	      {"id": "quiet", "skills": []},
	      {"id": "inherits", "name": "Inherits", "team": "core"}
	    ]
	  },
	  "skills": {"allowBundled": ["gemini"], "load": {"watch": true},
	             "entries": {"notes": {"apiKey": {"source": "env", "id": "K"}, "env": {"K": "v"}, "mine": 1}}}
	}`
	g := startGateway(t, gwOptions{
		files: map[string]string{
			"skills/github/SKILL.md": skillMD("github", "GitHub.", ""),
			"skills/notes/SKILL.md":  skillMD("notes", "Notes.", ""),
			"skills/plain/SKILL.md":  skillMD("plain", "Plain.", ""),
		},
		config: cfg,
	})
	both := block(global("github", "GitHub."), global("notes", "Notes."))
	g.waitPrompt(t, "main", block(global("github", "GitHub."), global("plain", "Plain.")))
	g.waitPrompt(t, "quiet", "")
	g.waitPrompt(t, "inherits", both)
	g.waitPrompt(t, "unlisted", both)
	if r := skillReport(t, g, "main", "notes"); r.Eligible || r.Stage != "config" || len(r.Reasons) != 1 || r.Reasons[0] != "not in this agent's skill scope" {
		t.Errorf("main notes: %+v, want config: not in this agent's skill scope", r)
	}
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/v1/agents/main/read?path=skills/notes/SKILL.md", 404},
		{"/v1/agents/main/read?path=skills/plain/SKILL.md", 200},
		{"/v1/agents/quiet/read?path=skills/github/SKILL.md", 404},
		{"/v1/agents/unlisted/read?path=skills/notes/SKILL.md", 200},
		{"/v1/agents/unlisted/read?path=skills/plain/SKILL.md", 404},
	} {
		if code, _, body := g.Get(t, tc.path, nil); code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.path, code, body, tc.code)
		}
	}
	for agent, want := range map[string]string{"main": "", "inherits": "notes"} {
		code, _, body := g.Get(t, "/v1/agents/"+agent+"/skills?eligible=true&q=notes", nil)
		var res struct{ Skills []struct{ Name string } }
		if err := json.Unmarshal([]byte(body), &res); code != 200 || err != nil {
			t.Fatalf("search of %s: %d %s", agent, code, body)
		}
		var names []string
		for _, s := range res.Skills {
			names = append(names, s.Name)
		}
		if strings.Join(names, ",") != want {
			t.Errorf("search of %s for notes = %v, want %q", agent, names, want)
		}
	}

	// OpenClaw's prompt budget, applied at reload: one byte short of the
	// whole block shortens it.
	limited := strings.Replace(cfg, `"allowBundled"`, `"limits": {"maxSkillsPromptChars": `+strconv.Itoa(len(both)-1)+`}, "allowBundled"`, 1)
	g.WriteConfig(t, limited)
	testkit.Eventually(t, waitFor, func() (string, bool) {
		got := g.Prompt(t, "inherits")
		return got, got != both && len(got) <= len(both)-1 && strings.Contains(got, "<note ")
	})

	// A typo and a wrong type are refused; the config in force stays.
	for _, tc := range []struct{ from, to, log string }{
		{`"region": "eu"`, `"promt": {}`, `gateway.promt: unknown key; did you mean gateway.prompt?`},
		{`"mine": 1`, `"enabled": "no"`, `skills.entries.notes.enabled: must be true or false, got the string \"no\"`},
	} {
		g.WriteConfig(t, strings.Replace(strings.Replace(limited, tc.from, tc.to, 1), `"skills": []`, `"skills": ["github"]`, 1))
		testkit.Eventually(t, waitFor, func() (string, bool) {
			logs := g.Logs.String()
			return "logs lack " + tc.log + ":\n" + logs, strings.Contains(logs, tc.log)
		})
		g.waitPrompt(t, "quiet", "")
	}
}

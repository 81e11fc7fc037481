package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway"
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
	g.token = ""
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
		code, _, body := g.get(t, tc.path, hdr)
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
	if code, _, body := g.get(t, "/v1/agents/ops/read?path=skills/plain/SKILL.md", nil); code != http.StatusNotFound {
		t.Errorf("ops reading plain: %d %s, want 404", code, body)
	}
	if code, _, _ := g.get(t, "/v1/agents/main/read?path=skills/plain/SKILL.md", nil); code != http.StatusOK {
		t.Errorf("main reading plain: %d, want 200", code)
	}
}

// TestAgentSettingsRejected: bad budgets, globs, tokens and unknown keys
// are refused with a message naming the key.
func TestAgentSettingsRejected(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"gateway": {"prompt": {"maxChars": 0}}}`, `gateway.prompt.maxChars: must be a positive whole number, got 0`},
		{`{"gateway": {"prompt": {"maxSkills": "10"}}}`, `gateway.prompt.maxSkills: must be a positive whole number, got 10`},
		{`{"gateway": {"prompt": {"maxChars": 1.5}}}`, `gateway.prompt.maxChars: must be a positive whole number, got 1.5`},
		{`{"gateway": {"prompt": {"hosts": "all"}}}`, `gateway.prompt.hosts: must be "none", "count" or "names", got all`},
		{`{"gateway": {"prompt": {"maxchars": 10}}}`, `gateway.prompt.maxchars: unknown setting (known: maxChars, maxSkills, hosts)`},
		{`{"agents": {"a1": {"prompt": {"maxSkills": -1}}}}`, `agents.a1.prompt.maxSkills: must be a positive whole number, got -1`},
		{`{"agents": {"a1": {"prompt": {"hosts": "count"}}}}`, `agents.a1.prompt.hosts: unknown setting (known: maxChars, maxSkills)`},
		{`{"agents": {"a1": {"skills": {"allow": ["[a-"]}}}}`, `agents.a1.skills.allow[0]: "[a-" does not compile: syntax error in pattern`},
		{`{"agents": {"a1": {"skils": {}}}}`, `agents.a1.skils: unknown setting (known: prompt, skills)`},
		{`{"agents": {"a/b": {}}}`, `agents.a/b: agent id "a/b" contains a slash or backslash`},
		{`{"gateway": {"agentTokens": {"a1": ""}}}`, `gateway.agentTokens.a1: must be a non-empty string`},
		{`{"gateway": {"nodeTokens": {"n1": "sha256:abc"}}}`, `gateway.nodeTokens.n1: "sha256:" must be followed by the 64 hex digits`},
	} {
		path := filepath.Join(t.TempDir(), "gw.hujson")
		if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := gateway.ReadConfigFile(path)
		if err == nil || !strings.Contains(err.Error(), path+": "+tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.file, err, tc.want)
		}
	}
}

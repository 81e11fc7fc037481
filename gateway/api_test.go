package gateway_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
)

// apiFiles is the bucket of TestAgentAPI.
var apiFiles = map[string]string{
	"skills/x/SKILL.md":                   skillMD("x", "Global x.", ""),
	"skills/x/notes.txt":                  "global notes",
	"skills/x/only-global.txt":            "only in the global x",
	"skills/big/SKILL.md":                 skillMD("big", "Has a big file.", ""),
	"skills/big/huge.bin":                 strings.Repeat("b", 256<<10+1),
	"skills/big/limit.bin":                strings.Repeat("l", 256<<10),
	"skills/needs/SKILL.md":               skillMD("needs", "Needs nope-tool.", `{"bins": ["nope-tool"]}`),
	"skills/deep/a/b/SKILL.md":            skillMD("deep", "Not a skill.", ""),
	"agents/main/skills/x/SKILL.md":       skillMD("x", "Main x.", ""),
	"agents/main/skills/x/notes.txt":      "main notes",
	"agents/main/skills/mine/SKILL.md":    skillMD("mine", "Main only.", ""),
	"agents/other/skills/secret/SKILL.md": skillMD("secret", "Other only.", ""),
	"agents/other/skills/secret/data.txt": "other's secret",
	"agents/other/skills/x/SKILL.md":      skillMD("x", "Other x.", ""),
	"agents/other/skills/x/notes.txt":     "other notes",
}

// TestAgentAPI covers the HTTP API of DESIGN.md: agent ids, the agent's
// view, read paths and their limits, the skills report and the node list.
func TestAgentAPI(t *testing.T) {
	g := startGateway(t, gwOptions{files: apiFiles})
	// big's file over 256 KiB is not scanned: the operator approves it as it
	// is (TestUnscannedFilesHoldTheSkill has the rest).
	if q := governanceQueue(t, g); len(q.Skills) != 1 || q.Skills[0].Dir != "big" || q.Skills[0].Reason != "quarantined by governance: unscanned files" {
		t.Fatalf("review queue = %+v, want big, quarantined for unscanned files", q)
	} else {
		g.WriteConfig(t, `{"skills": {"entries": {"big": {"approve": "`+q.Skills[0].Governance.Digest+`"}}}}`)
	}

	mainBlock := block(
		entry{name: "mine", desc: "Main only.", location: "agents/main/skills/mine/SKILL.md"},
		entry{name: "x", desc: "Main x.", location: "agents/main/skills/x/SKILL.md"},
		global("big", "Has a big file."),
	)
	globalBlock := block(global("big", "Has a big file."), global("x", "Global x."))

	t.Run("prompt", func(t *testing.T) {
		g.waitPrompt(t, "main", mainBlock)
		if got := g.Prompt(t, "never-seen-agent"); got != globalBlock {
			t.Errorf("unknown agent:\n%s\nwant the global skills:\n%s", got, globalBlock)
		}
		if got := g.Prompt(t, "other"); !strings.Contains(got, "agents/other/skills/secret/SKILL.md") || strings.Contains(got, "agents/main/") {
			t.Errorf("other's block:\n%s", got)
		}
	})

	t.Run("bad agent ids", func(t *testing.T) {
		for _, id := range []string{
			"..%2Fx",
			"%2E%2E",
			"a%5Cb",
			strings.Repeat("a", 129),
			"bad%01id",
			"del%7Fid",
			"new%0Aline",
			"", // /v1/agents//prompt: empty, not redirected
		} {
			for _, what := range []string{"prompt", "skills", "read?path=skills/x/SKILL.md"} {
				code, hdr, body := g.Get(t, "/v1/agents/"+id+"/"+what, nil)
				if code != http.StatusBadRequest {
					t.Errorf("agent id %q, %s: %d %s, want 400", id, what, code, body)
					continue
				}
				checkJSONError(t, hdr, body)
			}
		}
		// 128 bytes is still fine.
		if code, _, body := g.Get(t, "/v1/agents/"+strings.Repeat("a", 128)+"/prompt", nil); code != http.StatusOK || body != globalBlock {
			t.Errorf("a 128-byte agent id: %d %q", code, body)
		}
	})

	read := func(agent, p string) (int, http.Header, string) {
		t.Helper()
		return g.Get(t, "/v1/agents/"+agent+"/read?path="+url.QueryEscape(p), nil)
	}

	t.Run("read: agent-local first, then global", func(t *testing.T) {
		for _, c := range []struct{ agent, path, want string }{
			{"main", "skills/x/notes.txt", "main notes"},
			{"other", "skills/x/notes.txt", "other notes"},
			{"nobody", "skills/x/notes.txt", "global notes"},
			{"main", "skills/x/SKILL.md", apiFiles["agents/main/skills/x/SKILL.md"]},
			{"nobody", "skills/x/SKILL.md", apiFiles["skills/x/SKILL.md"]},
			{"main", "skills/big/limit.bin", apiFiles["skills/big/limit.bin"]},
			{"other", "skills/secret/data.txt", "other's secret"},
			{"main", "skills/needs/SKILL.md", apiFiles["skills/needs/SKILL.md"]}, // ineligible skills are readable too
		} {
			code, _, body := read(c.agent, c.path)
			if code != http.StatusOK || body != c.want {
				t.Errorf("%s reads %s: %d %.80q, want 200 %.80q", c.agent, c.path, code, body, c.want)
			}
		}
	})

	t.Run("read: bad paths", func(t *testing.T) {
		for _, p := range []string{
			"",
			"skills/../agents/other/skills/secret/data.txt",
			"skills/x/../../agents/other/skills/x/notes.txt",
			"/etc/passwd",
			"/skills/x/notes.txt",
			"skills/x/..",
			"skills/x/.",
			"skills/x/./notes.txt",
			"skills/x//notes.txt",
			"skills/x/",
			"skills/x",
			"skills",
			`skills\x\notes.txt`,
			`skills/x\..\..\agents/other/skills/secret/data.txt`,
			"skills/x/notes\x00.txt",
			"skills/x/notes\x7f.txt",
			"skills/x/\nnotes.txt",
			"agents/other/skills/secret/data.txt",
			"agents/main/skills/x/notes.txt",
			"../skills/x/notes.txt",
			"skills/" + strings.Repeat("d", 129) + "/SKILL.md",
			"skills/x/" + strings.Repeat("a", 1100),
		} {
			code, hdr, body := read("main", p)
			if code != http.StatusBadRequest {
				t.Errorf("path %.60q: %d %.200s, want 400", p, code, body)
				continue
			}
			checkJSONError(t, hdr, body)
		}
	})

	t.Run("read: not in the agent's view", func(t *testing.T) {
		for _, c := range []struct{ agent, path string }{
			{"main", "skills/x/nope.txt"},
			{"main", "skills/x/only-global.txt"}, // main's x shadows the global directory
			{"main", "skills/secret/data.txt"},   // another agent's skill
			{"main", "skills/secret/SKILL.md"},
			{"nobody", "skills/secret/data.txt"},
			{"nobody", "skills/mine/SKILL.md"},
			{"main", "skills/nope/SKILL.md"},
			{"main", "skills/deep/a/b/SKILL.md"}, // not a skill
		} {
			code, hdr, body := read(c.agent, c.path)
			if code != http.StatusNotFound {
				t.Errorf("%s reads %s: %d %.80q, want 404", c.agent, c.path, code, body)
				continue
			}
			checkJSONError(t, hdr, body)
			if strings.Contains(body, "other's secret") {
				t.Errorf("%s reads %s: the body shows another agent's file", c.agent, c.path)
			}
		}
	})

	t.Run("read: over 256 KiB", func(t *testing.T) {
		code, hdr, body := read("main", "skills/big/huge.bin")
		if code != http.StatusRequestEntityTooLarge {
			t.Fatalf("%d %.80q, want 413", code, body)
		}
		checkJSONError(t, hdr, body)
	})

	t.Run("request headers over 64 KiB", func(t *testing.T) {
		// A fresh connection per request: net/http's header limit is
		// looser on reused connections.
		status := func(headerBytes int) int {
			t.Helper()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, g.URL+"/v1/agents/main/prompt", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Big", strings.Repeat("h", headerBytes))
			c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%d bytes of headers: %v", headerBytes, err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if code := status(60 << 10); code != http.StatusOK {
			t.Errorf("60 KiB of headers: %d, want 200", code)
		}
		if code := status(100 << 10); code != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("100 KiB of headers: %d, want 431", code)
		}
		if code := status(65 << 10); code != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("65 KiB of headers: %d, want 431", code)
		}
	})

	t.Run("skills report has exactly the eval --json fields", func(t *testing.T) {
		code, hdr, body := g.Get(t, "/v1/agents/main/skills", nil)
		if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
			t.Fatalf("%d %s %s", code, hdr.Get("Content-Type"), body)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &top); err != nil {
			t.Fatal(err)
		}
		if keys := slices.Sorted(maps.Keys(top)); !slices.Equal(keys, []string{"agent", "diagnostics", "prompt", "skills"}) {
			t.Errorf("top-level keys %v", keys)
		}
		var agent, prompt string
		json.Unmarshal(top["agent"], &agent)
		json.Unmarshal(top["prompt"], &prompt)
		if agent != "main" || prompt != mainBlock {
			t.Errorf("agent %q prompt:\n%s\nwant:\n%s", agent, prompt, mainBlock)
		}
		var skills []map[string]json.RawMessage
		if err := json.Unmarshal(top["skills"], &skills); err != nil {
			t.Fatal(err)
		}
		wantKeys := []string{"always", "dir", "eligible", "filtered", "governance", "hosts", "location", "name", "read_path", "reasons", "scope", "stage"}
		var names []string
		for _, s := range skills {
			want := wantKeys
			if string(s["eligible"]) == "true" { // how it fits the block: offered skills only
				want = slices.Insert(slices.Clone(wantKeys), slices.Index(wantKeys, "read_path"), "prompt")
			}
			if string(s["location"]) == `"agents/main/skills/x/SKILL.md"` { // it shadows the global x
				want = slices.Insert(slices.Clone(want), slices.Index(want, "stage"), "shadows")
				if string(s["shadows"]) != `{"location":"skills/x/SKILL.md"}` {
					t.Errorf("x shadows %s", s["shadows"])
				}
			}
			if keys := slices.Sorted(maps.Keys(s)); !slices.Equal(keys, want) {
				t.Errorf("skill keys %v, want %v", keys, want)
			}
			for _, k := range []string{"hosts", "reasons"} {
				if string(s[k]) == "null" {
					t.Errorf("skill %s: %s is null, want a list", s["name"], k)
				}
			}
			var n string
			json.Unmarshal(s["location"], &n)
			names = append(names, n)
		}
		wantLocs := []string{"agents/main/skills/mine/SKILL.md", "agents/main/skills/x/SKILL.md", "skills/big/SKILL.md", "skills/needs/SKILL.md"}
		if !slices.Equal(names, wantLocs) {
			t.Errorf("skills %v, want %v (agent-local first, shadowed global x left out)", names, wantLocs)
		}
		x := skillReport(t, g, "main", "x")
		if x.Dir != "x" || x.Location != "agents/main/skills/x/SKILL.md" || x.ReadPath != "skills/x/SKILL.md" || x.Scope != "agent" ||
			x.Always || !x.Eligible || x.Stage != "" || len(x.Reasons) != 0 || len(x.Hosts) != 0 {
			t.Errorf("x: %+v", x)
		}
		needs := skillReport(t, g, "main", "needs")
		if needs.Eligible || needs.Stage != "runtime" || !slices.Equal(needs.Reasons, []string{"no connected hosts"}) || needs.Scope != "global" {
			t.Errorf("needs: %+v", needs)
		}
		var diags []map[string]json.RawMessage
		if err := json.Unmarshal(top["diagnostics"], &diags); err != nil {
			t.Fatalf("diagnostics: %v: %s", err, top["diagnostics"])
		}
		found := false
		for _, d := range diags {
			if keys := slices.Sorted(maps.Keys(d)); !slices.Equal(keys, []string{"level", "location", "message"}) {
				t.Errorf("diagnostic keys %v", keys)
			}
			if string(d["location"]) == `"skills/deep/a/b/SKILL.md"` {
				found = true
			}
		}
		if !found {
			t.Errorf("no diagnostic for the deeper key skills/deep/a/b/SKILL.md: %s", top["diagnostics"])
		}
		if strings.Contains(string(top["diagnostics"]), "agents/other/") {
			t.Errorf("main's diagnostics show another agent's keys: %s", top["diagnostics"])
		}
	})

	t.Run("nodes sorted, factsAt null before facts", func(t *testing.T) {
		before := time.Now().UTC().Add(-time.Second)
		z := dialRaw(t, g)
		z.Connect("zeta", "")
		a := dialRaw(t, g)
		a.Connect("alpha-node", "")
		a.Facts("f1", nil, map[string]bool{"nope-tool": true})
		m := dialRaw(t, g)
		m.Connect("mid", "")
		m.Facts("f1", nil, nil)
		var ns []nodeView
		var body string
		testkit.Eventually(t, waitFor, func() (string, bool) {
			ns, body = g.nodes(t)
			return body, len(ns) == 3
		})
		ids := []string{ns[0].ID, ns[1].ID, ns[2].ID}
		if !slices.Equal(ids, []string{"alpha-node", "mid", "zeta"}) {
			t.Errorf("ids %v, want sorted", ids)
		}
		var raw struct {
			Nodes []map[string]json.RawMessage `json:"nodes"`
		}
		json.Unmarshal([]byte(body), &raw)
		wantKeys := []string{"capabilities", "connectedAt", "env", "factsAt", "hostBinStatus", "id", "os", "replica", "roles"}
		for _, n := range raw.Nodes {
			if keys := slices.Sorted(maps.Keys(n)); !slices.Equal(keys, wantKeys) {
				t.Errorf("node keys %v, want %v", keys, wantKeys)
			}
			if r := string(n["replica"]); r != strconv.Quote(gateway.DefaultReplica()) {
				t.Errorf("replica %s, want %q (the host name, without a cluster)", r, gateway.DefaultReplica())
			}
		}
		for _, n := range ns {
			ct, err := time.Parse(time.RFC3339, n.ConnectedAt)
			if err != nil || ct.Before(before.Truncate(time.Second)) || ct.After(time.Now().Add(time.Second)) {
				t.Errorf("%s connectedAt %q: %v", n.ID, n.ConnectedAt, err)
			}
			if n.ID == "zeta" {
				if n.FactsAt != nil {
					t.Errorf("zeta sent no facts.update, factsAt = %q, want null", *n.FactsAt)
				}
				if n.Env == nil || n.HostBinStatus == nil {
					t.Errorf("zeta env/hostBinStatus null: %s", body)
				}
				continue
			}
			if n.FactsAt == nil {
				t.Errorf("%s factsAt null after facts.update", n.ID)
			} else if _, err := time.Parse(time.RFC3339, *n.FactsAt); err != nil {
				t.Errorf("%s factsAt %q: %v", n.ID, *n.FactsAt, err)
			}
		}
		// alpha-node has nope-tool: needs becomes eligible for every agent.
		g.waitPrompt(t, "nobody", block(global("big", "Has a big file."), global("needs", "Needs nope-tool."), global("x", "Global x.")))
		if h := skillReport(t, g, "main", "needs").Hosts; !slices.Equal(h, []string{"alpha-node"}) {
			t.Errorf("needs hosts %v, want [alpha-node]", h)
		}
	})

	t.Run("deleting an agent-local skill unshadows the global one", func(t *testing.T) {
		g.Delete(t, "agents/main/skills/x/SKILL.md")
		g.waitPrompt(t, "main", block(
			entry{name: "mine", desc: "Main only.", location: "agents/main/skills/mine/SKILL.md"},
			global("big", "Has a big file."), global("x", "Global x."))) // the raw nodes of the last subtest are gone
		if code, _, body := read("main", "skills/x/notes.txt"); code != http.StatusOK || body != "global notes" {
			t.Errorf("main reads skills/x/notes.txt after its x went: %d %q, want the global file", code, body)
		}
	})

	t.Run("unknown endpoint", func(t *testing.T) {
		code, hdr, body := g.Get(t, "/v1/agents/main/nothing", nil)
		if code != http.StatusNotFound {
			t.Errorf("%d %s", code, body)
		}
		checkJSONError(t, hdr, body)
	})
}

// TestEmptyPrompt checks that a prompt build with nothing eligible answers
// 200 with an empty body.
func TestEmptyPrompt(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/needs/SKILL.md": skillMD("needs", "Needs nope-tool.", `{"bins": ["nope-tool"]}`),
	}})
	for _, agent := range []string{"main", "anyone"} {
		code, hdr, body := g.Get(t, "/v1/agents/"+agent+"/prompt", nil)
		if code != http.StatusOK || body != "" {
			t.Errorf("%s: %d %q, want 200 and an empty body", agent, code, body)
		}
		if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type %q", ct)
		}
	}
}

// TestAgentAuth checks the bearer token of /v1 and that the probes and
// metrics stay open.
func TestAgentAuth(t *testing.T) {
	g := startGateway(t, gwOptions{
		files:      map[string]string{"skills/plain/SKILL.md": skillMD("plain", "No requirements.", "")},
		agentToken: "agent-token-3d7b",
	})
	g.Token = "" // send headers by hand
	for _, p := range []string{"/v1/agents/main/prompt", "/v1/agents/main/skills", "/v1/agents/main/read?path=skills/plain/SKILL.md", "/v1/nodes",
		"/v1/governance", "/v1/agents/..%2Fx/prompt"} {
		code, hdr, body := g.Get(t, p, nil)
		if code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d %s, want 401", p, code, body)
		} else {
			checkJSONError(t, hdr, body)
		}
		for _, auth := range []string{"Bearer wrong", "Bearer agent-token-3d7", "Bearer agent-token-3d7bX"} {
			code, hdr, body = g.Get(t, p, http.Header{"Authorization": {auth}})
			if code != http.StatusForbidden {
				t.Errorf("%s with %q: %d %s, want 403", p, auth, code, body)
			} else {
				checkJSONError(t, hdr, body)
			}
		}
	}
	ok := http.Header{"Authorization": {"Bearer agent-token-3d7b"}}
	if code, _, body := g.Get(t, "/v1/agents/main/prompt", ok); code != http.StatusOK || body != block(ePlain) {
		t.Errorf("with the token: %d %q", code, body)
	}
	for _, p := range []string{"/v1/agents/main/skills", "/v1/agents/main/read?path=skills/plain/SKILL.md", "/v1/nodes", "/v1/governance"} {
		if code, _, body := g.Get(t, p, ok); code != http.StatusOK {
			t.Errorf("%s with the token: %d %s", p, code, body)
		}
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, _, body := g.Get(t, p, nil); code != http.StatusOK {
			t.Errorf("%s without a token: %d %.200s, want 200 (open)", p, code, body)
		}
	}
	if strings.Contains(g.Logs.String(), "agent-token-3d7b") {
		t.Errorf("gateway logs show the agent token")
	}
	t.Run("auth scheme is case-insensitive", func(t *testing.T) {
		// RFC 7235 §2.1: the auth scheme is case-insensitive.
		for _, auth := range []string{"bearer agent-token-3d7b", "BEARER agent-token-3d7b"} {
			if code, _, body := g.Get(t, "/v1/nodes", http.Header{"Authorization": {auth}}); code != http.StatusOK {
				t.Errorf("%q: %d %s, want 200", auth, code, body)
			}
		}
	})
}

// checkJSONError checks an error answer: JSON {"error": "…"}.
func checkJSONError(t *testing.T, hdr http.Header, body string) {
	t.Helper()
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type %q, want application/json; body %.200q", ct, body)
		return
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Errorf("error body is not JSON: %v: %.200q", err, body)
		return
	}
	if msg, ok := e["error"].(string); !ok || msg == "" || len(e) != 1 {
		t.Errorf("error body %.200q, want exactly {\"error\": \"…\"}", body)
	}
}

// TestReadInert (C3): a skill's HTML, XHTML, SVG or XML is served as
// plain text, and every /read answer forbids scripts, subresources and
// other origins, so that a skill's file cannot act on the gateway's origin
// (on a tokenless gateway a skill's page registered a node and changed an
// agent's prompt).
func TestReadInert(t *testing.T) {
	const page = "<html><script>fetch('/v1/nodes')</script></html>"
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/doc/SKILL.md":   skillMD("doc", "Docs.", ""),
		"skills/doc/page.html":  page,
		"skills/doc/page.htm":   page,
		"skills/doc/page.xhtml": page,
		"skills/doc/pic.svg":    `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
		"skills/doc/feed.xml":   `<?xml-stylesheet href="x.xsl"?><a/>`,
		"skills/doc/sniffed":    page,
		"skills/doc/notes.txt":  "plain",
		"skills/doc/tool.py":    "print(1)\n",
	}})
	g.waitPrompt(t, "main", block(global("doc", "Docs.")))
	for file, want := range map[string]string{
		"page.html":  "text/plain; charset=utf-8",
		"page.htm":   "text/plain; charset=utf-8",
		"page.xhtml": "text/plain; charset=utf-8",
		"pic.svg":    "text/plain; charset=utf-8",
		"feed.xml":   "text/plain; charset=utf-8",
		"sniffed":    "text/plain; charset=utf-8",
		"notes.txt":  "text/plain; charset=utf-8",
		"SKILL.md":   "text/markdown; charset=utf-8",
	} {
		code, hdr, body := g.Get(t, "/v1/agents/main/read?path=skills/doc/"+file, nil)
		if code != http.StatusOK {
			t.Errorf("%s: %d %s", file, code, body)
			continue
		}
		if got := hdr.Get("Content-Type"); got != want {
			t.Errorf("%s: Content-Type %q, want %q", file, got, want)
		}
		for h, v := range map[string]string{
			"Content-Security-Policy":      "sandbox; default-src 'none'",
			"Cross-Origin-Resource-Policy": "same-origin",
			"X-Content-Type-Options":       "nosniff",
		} {
			if got := hdr.Get(h); got != v {
				t.Errorf("%s: %s %q, want %q", file, h, got, v)
			}
		}
	}
}

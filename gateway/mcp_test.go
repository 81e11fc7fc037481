package gateway_test

// The MCP endpoint driven by MCP clients nobody here wrote: the official Go
// SDK's client (in this process) and the official TypeScript SDK's
// (testdata/mcp/client.mjs, run with node), against a real gateway on MinIO
// with a real skillgate-node process.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillgate/skillgate/internal/mcptest"
	"github.com/skillgate/skillgate/internal/testkit"
)

// The fixture's tokens and skills.
const (
	mcpAdminToken = "admin-token-for-mcp"
	mcpMainToken  = "main-token-for-mcp"
	mcpOtherToken = "other-token-for-mcp"
	notesMD       = "---\nname: notes\ndescription: Keeps notes in markdown files.\nversion: 1.10\n---\n\n# notes\n\nWrite notes with `scripts/run.sh`.\n"
	notesScript   = "#!/bin/sh\necho notes\n"
)

// mcpFixture is a gateway whose agent main may use notes (no
// requirements) and github (needs the binary gh, which no host has until a
// node with it connects), but not tool (held by governance), hidden (out of
// its scope) nor secret (agent other's own skill).
func mcpFixture(t *testing.T, config, adminToken string) *gw {
	t.Helper()
	if config == "" {
		config = `{"gateway": {"agentTokens": {"main": "` + mcpMainToken + `", "other": "` + mcpOtherToken + `"}},
			"agents": {"main": {"skills": {"deny": ["hidden"]}}, "nobody": {"skills": []}}}`
	}
	return startGateway(t, gwOptions{agentToken: adminToken, config: config, files: map[string]string{
		"skills/notes/SKILL.md":               notesMD,
		"skills/notes/scripts/run.sh":         notesScript,
		"skills/github/SKILL.md":              skillMD("github", "Works with GitHub issues and pull requests.", `{"bins": ["gh"]}`),
		"skills/tool/SKILL.md":                toolEvilMD,
		"skills/hidden/SKILL.md":              skillMD("hidden", "Not for main.", ""),
		"agents/other/skills/secret/SKILL.md": skillMD("secret", "Agent other's own skill.", ""),
	}})
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// goClient connects the Go SDK's client to the gateway's /mcp (query is
// its query string, "" for none) with token; changed, when not nil, gets a
// value at each notifications/resources/list_changed.
func goClient(t *testing.T, g *gw, token, query string, changed chan<- struct{}) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if changed != nil {
		opts.ResourceListChangedHandler = func(context.Context, *sdk.ResourceListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, opts)
	url := g.URL + "/mcp"
	if query != "" {
		url += "?" + query
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and returns its result.
func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s %v: %v", name, args, err)
	}
	return res
}

// resultText is the text of a result's content.
func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structuredContent.
func structured[T any](t *testing.T, res *sdk.CallToolResult) T {
	t.Helper()
	var v T
	b, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil || res.IsError {
		t.Fatalf("structuredContent %s (isError %v, text %q): %v", b, res.IsError, resultText(res), err)
	}
	return v
}

type mcpSkill struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	ReadPath    string   `json:"read_path"`
	Location    string   `json:"location"`
	Version     string   `json:"version"`
	Score       *float64 `json:"score"`
	Hosts       *struct {
		Count int      `json:"count"`
		IDs   []string `json:"ids"`
	} `json:"hosts"`
}

type mcpSkills struct {
	Skills []mcpSkill `json:"skills"`
}

type mcpFile struct {
	Name     string `json:"name"`
	ReadPath string `json:"read_path"`
	Text     string `json:"text"`
}

func names(skills []mcpSkill) string {
	var n []string
	for _, s := range skills {
		n = append(n, s.Name)
	}
	return strings.Join(n, ",")
}

// TestMCPGoClient drives every tool, a resource, the prompt and list_changed
// with the Go SDK's client.
func TestMCPGoClient(t *testing.T) {
	g := mcpFixture(t, "", mcpAdminToken)
	changed := make(chan struct{}, 16)
	cs := goClient(t, g, mcpMainToken, "", changed)
	ctx := t.Context()

	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.ListChanged || caps.Tools == nil || caps.Prompts == nil {
		t.Errorf("capabilities %+v: want tools, prompts and resources with listChanged", caps)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var toolNames []string
	for _, tl := range tools.Tools {
		toolNames = append(toolNames, tl.Name)
		if tl.InputSchema == nil || tl.OutputSchema == nil {
			t.Errorf("tool %s: input schema %v, output schema %v: want both", tl.Name, tl.InputSchema, tl.OutputSchema)
		}
	}
	slices.Sort(toolNames)
	if got := strings.Join(toolNames, ","); got != "list_skills,load_skill,read_skill_file,search_skills" {
		t.Errorf("tools = %s", got)
	}

	// list_skills: only notes before a host with gh connects.
	list := structured[mcpSkills](t, callTool(t, cs, "list_skills", nil))
	if len(list.Skills) != 1 || list.Skills[0] != (mcpSkill{Name: "notes", Description: "Keeps notes in markdown files.",
		ReadPath: "skills/notes/SKILL.md", Location: "skills/notes/SKILL.md", Version: "1.10"}) {
		t.Errorf("list_skills = %+v, want notes only", list.Skills)
	}

	// search_skills: the ranking of /skills?eligible=true&q=…
	res := callTool(t, cs, "search_skills", map[string]any{"query": "markdown notes"})
	found := structured[mcpSkills](t, res)
	code, _, body := g.Get(t, "/v1/agents/main/skills?eligible=true&q=markdown+notes&limit=10", nil)
	var httpSearch struct {
		Skills []struct {
			Score *float64 `json:"score"`
		} `json:"skills"`
	}
	if err := json.Unmarshal([]byte(body), &httpSearch); code != http.StatusOK || err != nil {
		t.Fatalf("GET /skills?q=: %d %s", code, body)
	}
	if len(found.Skills) != 1 || found.Skills[0].Name != "notes" || found.Skills[0].Score == nil || len(httpSearch.Skills) != 1 ||
		*found.Skills[0].Score != *httpSearch.Skills[0].Score || found.Skills[0].Description != "Keeps notes in markdown files." ||
		found.Skills[0].Version != "1.10" {
		t.Errorf("search_skills = %+v, want notes with the score of /skills?q= (%+v)", found.Skills, httpSearch.Skills)
	}
	if !json.Valid([]byte(resultText(res))) {
		t.Errorf("search_skills text content %q: want the structured result as JSON", resultText(res))
	}
	for _, bad := range []map[string]any{{"query": ""}, {"query": "notes", "limit": -1}, {"query": strings.Repeat("word ", 40)}} {
		if r := callTool(t, cs, "search_skills", bad); !r.IsError || resultText(r) == "" {
			t.Errorf("search_skills %v: isError %v %q, want an error saying why", bad, r.IsError, resultText(r))
		}
	}

	// load_skill and read_skill_file: /read's bytes.
	_, _, readMD := g.Get(t, "/v1/agents/main/read?path=skills/notes/SKILL.md", nil)
	for _, name := range []string{"notes", "skills/notes/SKILL.md"} { // by name, by location
		res = callTool(t, cs, "load_skill", map[string]any{"name": name})
		if f := structured[mcpFile](t, res); f != (mcpFile{Name: "notes", ReadPath: "skills/notes/SKILL.md", Text: readMD}) || resultText(res) != readMD || readMD != notesMD {
			t.Errorf("load_skill %s = %+v, text %q; want /read's %q", name, f, resultText(res), readMD)
		}
	}
	_, _, readScript := g.Get(t, "/v1/agents/main/read?path=skills/notes/scripts/run.sh", nil)
	res = callTool(t, cs, "read_skill_file", map[string]any{"name": "notes", "path": "scripts/run.sh"})
	if f := structured[mcpFile](t, res); f.Text != readScript || readScript != notesScript || f.ReadPath != "skills/notes/scripts/run.sh" {
		t.Errorf("read_skill_file = %+v, want /read's %q", f, readScript)
	}
	for _, p := range []string{"../github/SKILL.md", "/etc/passwd", "nosuch.txt", ""} {
		if r := callTool(t, cs, "read_skill_file", map[string]any{"name": "notes", "path": p}); !r.IsError || resultText(r) == "" {
			t.Errorf("read_skill_file path %q: isError %v %q, want an error", p, r.IsError, resultText(r))
		}
	}

	// Held, ineligible, out of scope, another agent's, unknown: one answer.
	for _, name := range []string{"tool", "github", "hidden", "secret", "nosuch"} {
		for _, tool := range []string{"load_skill", "read_skill_file"} {
			args := map[string]any{"name": name}
			if tool == "read_skill_file" {
				args["path"] = "SKILL.md"
			}
			r := callTool(t, cs, tool, args)
			if want := "skill " + name + " is not available to agent main"; !r.IsError || resultText(r) != want || r.StructuredContent != nil {
				t.Errorf("%s %s: isError %v text %q structured %v, want the error %q", tool, name, r.IsError, resultText(r), r.StructuredContent, want)
			}
		}
	}

	// Resources: every eligible skill's SKILL.md.
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != 1 || rl.Resources[0].URI != "skill://main/skills/notes/SKILL.md" || rl.Resources[0].MIMEType != "text/markdown" || rl.Resources[0].Name != "notes" {
		t.Errorf("resources/list = %+v", rl.Resources)
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://main/skills/notes/SKILL.md"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != readMD || rr.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("resources/read = %+v, %v; want %q", rr, err, readMD)
	}
	for _, uri := range []string{"skill://main/skills/tool/SKILL.md", "skill://main/skills/github/SKILL.md",
		"skill://other/skills/secret/SKILL.md", "skill://main/skills/hidden/SKILL.md"} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || !strings.HasSuffix(werr.Message, "is not available to agent main") {
			t.Errorf("resources/read %s: %v, want the not-available error", uri, err)
		}
	}

	// The prompt: the budgeted block, as GET …/prompt serves it.
	pr, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "available_skills"})
	want := g.Prompt(t, "main")
	if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Role != "user" || pr.Messages[0].Content.(*sdk.TextContent).Text != want {
		t.Errorf("prompts/get = %+v, %v; want one user message %q", pr, err, want)
	}

	// A node with gh connects: github becomes eligible and the session is told.
	startNode(t, g.URL, "mcp-node-1", testkit.BinDir(t, "gh"), nil)
	select {
	case <-changed:
	case <-time.After(waitFor):
		t.Fatal("no notifications/resources/list_changed within 10 s of a node making github eligible")
	}
	list = structured[mcpSkills](t, callTool(t, cs, "list_skills", nil))
	if names(list.Skills) != "github,notes" || list.Skills[0].Hosts == nil || list.Skills[0].Hosts.Count != 1 || list.Skills[0].Version != "" || list.Skills[1].Version != "1.10" ||
		!slices.Equal(list.Skills[0].Hosts.IDs, []string{"mcp-node-1"}) || list.Skills[1].Hosts != nil {
		t.Errorf("list_skills after the node = %+v, want github (hosts 1: mcp-node-1) and notes (no hosts)", list.Skills)
	}
	if r := callTool(t, cs, "load_skill", map[string]any{"name": "github"}); r.IsError {
		t.Errorf("load_skill github once eligible: %q", resultText(r))
	}
	if rl, err = cs.ListResources(ctx, nil); err != nil || len(rl.Resources) != 2 {
		t.Errorf("resources/list after the node: %+v, %v", rl, err)
	}
}

// mcpPost POSTs body to url as an MCP client does, with the headers hdr
// ("Host" sets the request's host), and returns the status, headers and
// body.
func mcpPost(t *testing.T, url, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestMCPAuth checks who may open whose session.
func TestMCPAuth(t *testing.T) {
	g := mcpFixture(t, "", mcpAdminToken)
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	post := func(query, token, session string) (int, string) {
		hdr := map[string]string{}
		if token != "" {
			hdr["Authorization"] = "Bearer " + token
		}
		if session != "" {
			hdr["Mcp-Session-Id"] = session
		}
		code, _, body := mcpPost(t, g.URL+"/mcp"+query, initBody, hdr)
		return code, body
	}
	for _, c := range []struct {
		query, token string
		code         int
		body         string
	}{
		{"", "", http.StatusUnauthorized, "missing bearer token"},
		{"", "wrong", http.StatusForbidden, "forbidden"},
		{"", mcpAdminToken, http.StatusForbidden, "the admin token names the agent: /mcp?agent=ID"},
		{"?agent=other", mcpMainToken, http.StatusForbidden, "forbidden"},
		{"?agent=bad/id", mcpAdminToken, http.StatusBadRequest, "agent id"},
		{"?agent=main", mcpMainToken, http.StatusOK, `"serverInfo"`},
		{"?agent=other", mcpAdminToken, http.StatusOK, `"serverInfo"`},
		{"", mcpOtherToken, http.StatusOK, `"serverInfo"`},
	} {
		if code, body := post(c.query, c.token, ""); code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("POST /mcp%s with token %q: %d %s, want %d with %q", c.query, c.token, code, body, c.code, c.body)
		}
	}

	// The admin token reaches any agent; an agent token only its own.
	other := goClient(t, g, mcpAdminToken, "agent=other", nil)
	if list := structured[mcpSkills](t, callTool(t, other, "list_skills", nil)); names(list.Skills) != "secret,hidden,notes" {
		t.Errorf("admin as other: list_skills = %s, want secret,hidden,notes", names(list.Skills))
	}
	if r := callTool(t, other, "load_skill", map[string]any{"name": "secret"}); r.IsError {
		t.Errorf("admin as other: load_skill secret: %q", resultText(r))
	}
	// An agent with no skill: empty lists, an empty block.
	nobody := goClient(t, g, mcpAdminToken, "agent=nobody", nil)
	if list := structured[mcpSkills](t, callTool(t, nobody, "list_skills", nil)); list.Skills == nil || len(list.Skills) != 0 {
		t.Errorf("nobody: list_skills = %+v, want []", list.Skills)
	}
	if pr, err := nobody.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "available_skills"}); err != nil ||
		len(pr.Messages) != 1 || pr.Messages[0].Content.(*sdk.TextContent).Text != "" {
		t.Errorf("nobody: prompts/get = %+v, %v; want one empty user message", pr, err)
	}
	// Bad arguments say what is wrong.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"load_skill", map[string]any{"name": 5}, "argument name: must be a string, got number"},
		{"load_skill", map[string]any{"nam": "notes"}, `unknown argument "nam"`},
		{"search_skills", map[string]any{"query": "x", "limit": "ten"}, "argument limit: must be a whole number, got string"},
	} {
		if r := callTool(t, nobody, c.tool, c.args); !r.IsError || resultText(r) != c.want {
			t.Errorf("%s %v: %q, want the error %q", c.tool, c.args, resultText(r), c.want)
		}
	}
	main := goClient(t, g, mcpMainToken, "", nil)
	if r := callTool(t, main, "load_skill", map[string]any{"name": "secret"}); resultText(r) != "skill secret is not available to agent main" {
		t.Errorf("main: load_skill secret: %q", resultText(r))
	}
	// Another agent's token cannot use main's session.
	if code, body := post("", mcpOtherToken, main.ID()); code != http.StatusForbidden || !strings.Contains(body, "is not a session of agent other") {
		t.Errorf("other's token on main's session: %d %s, want 403", code, body)
	}
}

// TestMCPSessionBounds: gateway.mcp.maxSessions and idleTimeout.
func TestMCPSessionBounds(t *testing.T) {
	g := mcpFixture(t, `{"gateway": {"agentTokens": {"main": "`+mcpMainToken+`"}, "mcp": {"maxSessions": 2, "idleTimeout": "1s"}}}`, mcpAdminToken)
	a := goClient(t, g, mcpMainToken, "", nil)
	goClient(t, g, mcpMainToken, "", nil)
	c := sdk.NewClient(&sdk.Implementation{Name: "third", Version: "1"}, nil)
	_, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: g.URL + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{mcpMainToken, http.DefaultTransport}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "429") && !strings.Contains(err.Error(), "Too Many") && !strings.Contains(err.Error(), "too many MCP sessions") {
		t.Errorf("a third session: %v, want 429 too many MCP sessions", err)
	}
	// An open notification stream is not idle: a still works after 2 s.
	time.Sleep(2 * time.Second)
	if r := callTool(t, a, "list_skills", nil); r.IsError {
		t.Errorf("session with its stream open, after the idle timeout: %q", resultText(r))
	}
	// A session without a stream or a request for 1 s is closed.
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	a.Close()
	var sid string
	testkit.Eventually(t, waitFor, func() (string, bool) {
		code, h, _ := mcpPost(t, g.URL+"/mcp", initBody, map[string]string{"Authorization": "Bearer " + mcpMainToken})
		sid = h.Get("Mcp-Session-Id")
		return fmt.Sprint(code), code == http.StatusOK
	})
	testkit.Eventually(t, waitFor, func() (string, bool) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, g.URL+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+mcpMainToken)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		time.Sleep(1500 * time.Millisecond) // idle for longer than the timeout
		resp, err := httpClient.Do(req)
		if err != nil {
			return err.Error(), false
		}
		resp.Body.Close()
		return fmt.Sprint("ping on an idle session: ", resp.StatusCode), resp.StatusCode == http.StatusNotFound
	})
}

// TestMCPTypeScriptHTTP drives /mcp with the official TypeScript SDK's
// client over Streamable HTTP, list_changed included.
func TestMCPTypeScriptHTTP(t *testing.T) {
	g := mcpFixture(t, "", mcpAdminToken)
	cfg := mcptest.Scenario()
	cfg["transport"], cfg["url"], cfg["token"] = "http", g.URL+"/mcp", mcpMainToken
	c := mcptest.Start(t, cfg)
	got := c.Until("ready")
	_, _, readMD := g.Get(t, "/v1/agents/main/read?path=skills/notes/SKILL.md", nil)
	_, _, readScript := g.Get(t, "/v1/agents/main/read?path=skills/notes/scripts/run.sh", nil)
	mcptest.Check(t, got, readMD, readScript, g.Prompt(t, "main"))

	startNode(t, g.URL, "mcp-node-ts", testkit.BinDir(t, "gh"), nil)
	mcptest.CheckChanged(t, c.Until("done"))
	if err := c.Wait(); err != nil {
		t.Errorf("client.mjs: %v", err)
	}
}

// TestMCPWithoutTokens: ?agent= names the agent, loopback Host names only,
// no cross-origin browser requests, bodies bounded.
func TestMCPWithoutTokens(t *testing.T) {
	g := mcpFixture(t, "{}", "")
	post := func(query, body string, hdr map[string]string) (int, string) {
		code, _, b := mcpPost(t, g.URL+"/mcp"+query, body, hdr)
		return code, b
	}
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` +
		strings.Repeat("x", 70<<10) + `","version":"1"}}}`
	for _, c := range []struct {
		query, body string
		hdr         map[string]string
		code        int
		want        string
	}{
		{"", initBody, nil, http.StatusBadRequest, "name the agent: /mcp?agent=ID"},
		{"?agent=main", initBody, map[string]string{"Host": "evil.example"}, http.StatusForbidden, "not accepted"},
		{"?agent=main", initBody, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, "cross-origin"},
		{"?agent=main", big, nil, http.StatusRequestEntityTooLarge, "exceeds 65536 bytes"},
		{"?agent=main", initBody, nil, http.StatusOK, `"serverInfo"`},
	} {
		if code, body := post(c.query, c.body, c.hdr); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("POST /mcp%s %v: %d %.200s, want %d with %q", c.query, c.hdr, code, body, c.code, c.want)
		}
	}
	cs := goClient(t, g, "", "agent=main", nil)
	if list := structured[mcpSkills](t, callTool(t, cs, "list_skills", nil)); names(list.Skills) != "hidden,notes" {
		t.Errorf("list_skills without tokens: %s", names(list.Skills))
	}
}

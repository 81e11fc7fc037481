package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/protocol"
)

// The four request kinds of `skillgate-fleet mcp`, in schedule order.
var mcpKinds = []string{"read", "skills?q", "load_skill", "search_skills"}

// mcpResult is the report of `skillgate-fleet mcp`.
type mcpResult struct {
	Gateway    string                 `json:"gateway"`
	Agent      string                 `json:"agent"`
	Skill      string                 `json:"skill"`
	ReadPath   string                 `json:"readPath"`
	Query      string                 `json:"query"`
	TargetRate float64                `json:"targetRate"` // requests per second, all kinds together
	Seconds    float64                `json:"seconds"`
	Scheduled  int64                  `json:"scheduled"`
	Late       int64                  `json:"late"`
	Dropped    int64                  `json:"dropped"`
	Kinds      map[string]*mcpKindRes `json:"kinds"`
	// Ratios of the MCP path to the plain HTTP one: load_skill to /read and
	// search_skills to /skills?q=, at p50 and p99.
	Ratios map[string]float64 `json:"ratios"`
}

// mcpKindRes is one request kind's figures.
type mcpKindRes struct {
	Requests   int          `json:"requests"`
	Errors     int          `json:"errors"`
	FirstError string       `json:"firstError,omitempty"`
	Latency    latencyStats `json:"latency"`

	mu  sync.Mutex
	lat []time.Duration
}

func (k *mcpKindRes) record(lat time.Duration, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.Requests++
	if err != nil {
		k.Errors++
		if k.FirstError == "" {
			k.FirstError = err.Error()
		}
		return
	}
	if len(k.lat) < maxSamples {
		k.lat = append(k.lat, lat)
	}
}

// cmdMCP is `skillgate-fleet mcp`: the MCP tools beside the HTTP API they
// stand for, in one open-loop run: GET …/read and tools/call load_skill of
// one skill, GET …/skills?eligible=true&q=…&limit=10 and tools/call
// search_skills of one query, interleaved on one fixed schedule.
func cmdMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate-fleet mcp", stderr)
	gw := fs.String("gateway", "", "gateway base URL, e.g. http://127.0.0.1:7780")
	agent := fs.String("agent", "main", "the agent whose skills are read and searched")
	skillName := fs.String("skill", "", "the skill read by /read and load_skill (default: the agent's first eligible skill)")
	query := fs.String("query", "", "the search of /skills?q= and search_skills (default: the skill's name)")
	rateFlag := fs.String("rate", "400/s", "requests per second, the four kinds together, on a fixed schedule")
	c := fs.Int("c", 32, "the most requests in flight (and waiting for a worker)")
	duration := fs.Duration("duration", 15*time.Second, "how long to send requests")
	tokenFile := fs.String("token-file", "", "file holding the bearer token (default: $"+agentTokenEnv+")")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	base, err := gatewayBase("gateway", *gw)
	if err != nil {
		return err
	}
	if err := protocol.ValidateID(*agent); err != nil {
		return cli.Usagef("--agent: agent id %v", err)
	}
	rate, err := parseRate("rate", *rateFlag)
	if err != nil {
		return err
	}
	switch {
	case rate <= 0 || rate > maxRate:
		return cli.Usagef("--rate: %s is out of range (more than 0, at most %d/s)", *rateFlag, maxRate)
	case *c < 1 || *c > maxWorkers:
		return cli.Usagef("-c: %d is out of range (1…%d)", *c, maxWorkers)
	case *duration <= 0:
		return cli.Usagef("--duration: must be positive, e.g. 15s")
	}
	token, err := readToken("token-file", *tokenFile, agentTokenEnv)
	if err != nil {
		return err
	}
	tr := &http.Transport{MaxIdleConns: 4 * *c, MaxIdleConnsPerHost: 2 * *c, IdleConnTimeout: 90 * time.Second, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: cli.BearerTransport{Token: token, Base: tr}, Timeout: requestTimeout}

	// MCP sessions: a few, shared by the workers (a session takes
	// concurrent calls).
	endpoint := base.String() + "/mcp?agent=" + url.QueryEscape(*agent)
	sessions, err := openMCPSessions(ctx, client, endpoint, min(*c, 4))
	if err != nil {
		return err
	}
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	res := &mcpResult{Gateway: base.String(), Agent: *agent, TargetRate: rate, Kinds: map[string]*mcpKindRes{}}
	if err := res.pickSkill(ctx, sessions[0], *skillName, *query); err != nil {
		return err
	}
	agentURL := base.String() + "/v1/agents/" + url.PathEscape(*agent)
	s := &mcpSender{
		client: client, sessions: sessions, skill: res.Skill, query: res.Query,
		readURL:   agentURL + "/read?path=" + url.QueryEscape(res.ReadPath),
		searchURL: agentURL + "/skills?eligible=true&limit=10&q=" + url.QueryEscape(res.Query),
	}
	if err := res.run(ctx, s, rate, *duration, *c); err != nil {
		return err
	}
	errs := res.summarize()
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		res.print(stdout)
	}
	if errs > 0 {
		return fmt.Errorf("%d requests failed", errs)
	}
	return nil
}

// run warms up, then sends requests on the open-loop schedule for the
// duration with at most c in flight, and records each kind's figures.
func (res *mcpResult) run(ctx context.Context, s *mcpSender, rate float64, duration time.Duration, c int) error {
	for _, k := range mcpKinds {
		res.Kinds[k] = &mcpKindRes{}
	}
	// Warm up: connections, caches, schemas.
	for i := range int64(8 * len(mcpKinds)) {
		if err := s.send(ctx, i); err != nil {
			return fmt.Errorf("warm-up %s: %w", mcpKinds[i%int64(len(mcpKinds))], err)
		}
	}
	// The schedule: request i is due at start + i/rate, kind i mod 4.
	o, took := openSchedule(ctx, rate, duration, c, func(int) func(due) {
		return func(r due) {
			err := s.send(ctx, r.i)
			if ctx.Err() != nil {
				return
			}
			res.Kinds[mcpKinds[r.i%int64(len(mcpKinds))]].record(time.Since(r.at), err)
		}
	})
	res.Scheduled, res.Late, res.Dropped, res.Seconds = o.Scheduled, o.Late, o.Dropped, took.Seconds()
	return nil
}

// openMCPSessions opens n MCP sessions with the endpoint; on an error, it
// closes those it opened.
func openMCPSessions(ctx context.Context, client *http.Client, endpoint string, n int) ([]*sdk.ClientSession, error) {
	sessions := make([]*sdk.ClientSession, 0, n)
	for range n {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "skillgate-fleet", Version: "1"}, nil).Connect(cctx,
			&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client, DisableStandaloneSSE: true}, nil)
		cancel()
		if err != nil {
			for _, cs := range sessions {
				cs.Close()
			}
			return nil, fmt.Errorf("MCP session with %s: %w", endpoint, err)
		}
		sessions = append(sessions, cs)
	}
	return sessions, nil
}

// pickSkill sets the skill the run reads (name, or the agent's first
// eligible one, from list_skills) and the query it searches (query, or
// the skill's name in words).
func (res *mcpResult) pickSkill(ctx context.Context, cs *sdk.ClientSession, name, query string) error {
	list, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_skills", Arguments: map[string]any{}})
	if err != nil || list.IsError {
		return fmt.Errorf("list_skills: %v %v", err, list)
	}
	var listed struct {
		Skills []struct {
			Name     string `json:"name"`
			ReadPath string `json:"read_path"`
		} `json:"skills"`
	}
	b, _ := json.Marshal(list.StructuredContent)
	json.Unmarshal(b, &listed)
	for _, s := range listed.Skills {
		if name == "" || s.Name == name {
			res.Skill, res.ReadPath = s.Name, s.ReadPath
			break
		}
	}
	if res.Skill == "" {
		return fmt.Errorf("agent %s has no eligible skill %q to read", res.Agent, name)
	}
	res.Query = query
	if res.Query == "" {
		res.Query = strings.NewReplacer("-", " ", "_", " ").Replace(res.Skill)
	}
	return nil
}

// mcpSender sends the run's requests: request i is of kind i mod 4, on
// session i mod the sessions.
type mcpSender struct {
	client             *http.Client
	sessions           []*sdk.ClientSession
	readURL, searchURL string
	skill, query       string
}

func (s *mcpSender) send(ctx context.Context, i int64) error {
	cs := s.sessions[i%int64(len(s.sessions))]
	switch mcpKinds[i%int64(len(mcpKinds))] {
	case "read":
		return s.get(ctx, s.readURL)
	case "skills?q":
		return s.get(ctx, s.searchURL)
	case "load_skill":
		return callTool(ctx, cs, "load_skill", map[string]any{"name": s.skill})
	default:
		return callTool(ctx, cs, "search_skills", map[string]any{"query": s.query, "limit": 10})
	}
}

// get GETs u, reads the answer and fails on any status but 200.
func (s *mcpSender) get(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return err
}

// callTool calls an MCP tool; an error answer is an error.
func callTool(ctx context.Context, cs *sdk.ClientSession, name string, args map[string]any) error {
	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err == nil && r.IsError {
		err = fmt.Errorf("%s: %v", name, r.Content)
	}
	return err
}

// summarize computes each kind's latencies and the MCP/HTTP ratios, and
// returns the failed requests.
func (res *mcpResult) summarize() (errs int) {
	for _, k := range res.Kinds {
		k.Latency = summarize(k.lat)
		errs += k.Errors
	}
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	res.Ratios = map[string]float64{
		"load_skill/read p50":        ratio(res.Kinds["load_skill"].Latency.P50, res.Kinds["read"].Latency.P50),
		"load_skill/read p99":        ratio(res.Kinds["load_skill"].Latency.P99, res.Kinds["read"].Latency.P99),
		"search_skills/skills?q p50": ratio(res.Kinds["search_skills"].Latency.P50, res.Kinds["skills?q"].Latency.P50),
		"search_skills/skills?q p99": ratio(res.Kinds["search_skills"].Latency.P99, res.Kinds["skills?q"].Latency.P99),
	}
	return errs
}

// print prints the report for a terminal.
func (res *mcpResult) print(w io.Writer) {
	fmt.Fprintf(w, "mcp vs http, agent %s, skill %s, query %q: %d requests due at %.0f/s over %.1f s (%d late, %d dropped)\n",
		res.Agent, res.Skill, res.Query, res.Scheduled, res.TargetRate, res.Seconds, res.Late, res.Dropped)
	for _, k := range mcpKinds {
		fmt.Fprintf(w, "  %-14s %s, %d errors\n", k, res.Kinds[k].Latency, res.Kinds[k].Errors)
	}
	for _, k := range []string{"load_skill/read p50", "load_skill/read p99", "search_skills/skills?q p50", "search_skills/skills?q p99"} {
		fmt.Fprintf(w, "  %-28s %.2fx\n", k, res.Ratios[k])
	}
}

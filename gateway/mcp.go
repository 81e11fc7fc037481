package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillgate/skillgate/api"
	"github.com/skillgate/skillgate/internal/search"
	"github.com/skillgate/skillgate/mcp"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
)

// The MCP endpoint (/mcp) is package mcp's Streamable HTTP handler over
// mcpBackend, this file: the gateway authenticates the request and names
// its agent, and answers the tools from the same state, caches and code
// paths as the HTTP API (the prompt view, searchSkills, handleRead).

// mcpEndpoint makes the MCP handler and returns the /mcp route: the bearer
// token of the HTTP API names the agent, and the store must be loaded.
func (s *Server) mcpEndpoint() http.Handler {
	s.mcp = mcp.NewHandler(mcpBackend{s}, mcp.Options{
		Name:    "skillgate",
		Version: s.cfg.Version,
		Logger:  s.log,
		Limits: func() (int, time.Duration) {
			m := s.now.Load().pol.settings.MCP
			return m.MaxSessions, m.IdleTimeout
		},
	})
	serve := s.needSnapshot(func(w http.ResponseWriter, r *http.Request) {
		s.mcp.ServeAgent(w, r, r.PathValue("agentId"))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agentID, ok := s.mcpAgent(w, r)
		if !ok {
			return
		}
		r.SetPathValue("agentId", agentID)
		serve(w, r)
	})
}

// mcpAgent authenticates a request to /mcp and returns its agent, or
// answers it (401, 403, 400) and reports false. An agent's token is its
// agent (?agent= may name it, and no other); the admin token names the
// agent with ?agent=ID; without tokens ?agent=ID names it (the gateway then
// answers loopback names only).
func (s *Server) mcpAgent(w http.ResponseWriter, r *http.Request) (string, bool) {
	var named string
	if r.URL.RawQuery != "" {
		named = r.URL.Query().Get("agent")
	}
	agentID := named
	if a := s.auth.Load(); a.agentAuthed() {
		got, ok := bearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="skillgate"`)
			writeError(w, http.StatusUnauthorized, "missing bearer token: send Authorization: Bearer <the agent's token> (or $SKILLGATE_AGENT_TOKEN with /mcp?agent=ID)")
			return "", false
		}
		admin := a.admin != "" && tokenMatches(got, a.admin)
		switch {
		case named != "":
			if !a.admits(got, named, false) {
				writeError(w, http.StatusForbidden, "forbidden")
				return "", false
			}
		case admin:
			writeError(w, http.StatusForbidden, "the admin token names the agent: /mcp?agent=ID")
			return "", false
		default:
			owners := a.tokenAgents(got)
			switch len(owners) {
			case 0:
				writeError(w, http.StatusForbidden, "forbidden")
				return "", false
			case 1:
				agentID = owners[0]
			default:
				writeError(w, http.StatusForbidden, "this token opens several agents: name one with /mcp?agent=ID")
				return "", false
			}
		}
	} else if named == "" {
		writeError(w, http.StatusBadRequest, "name the agent: /mcp?agent=ID")
		return "", false
	}
	if err := skill.ValidateID(agentID); err != nil {
		writeError(w, http.StatusBadRequest, "agent id "+err.Error())
		return "", false
	}
	return agentID, true
}

// tokenAgents returns the agents whose gateway.agentTokens entry token
// is, each compared in constant time.
func (a *authState) tokenAgents(token string) []string {
	var out []string
	for id, want := range a.agents {
		if tokenMatches(token, want) {
			out = append(out, id)
		}
	}
	return out
}

// mcpBackend answers package mcp from the gateway's state.
type mcpBackend struct{ s *Server }

// Skills implements mcp.Backend: the offered skills of the agent's prompt
// view (cached per view), in the block's order; with hosts, evaluated
// against the hosts now.
func (b mcpBackend) Skills(_ context.Context, agentID string, hosts bool) ([]mcp.Skill, error) {
	s := b.s
	var entries []promptbuild.Entry
	if !hosts {
		entries = s.promptView(agentID).entries
	} else {
		s.mu.RLock()
		_, prepared, offers := s.offersLocked(agentID)
		for i, p := range prepared {
			if offers.Offered[i] {
				entries = append(entries, report.Entry(p, HostsNames, func() []string { return s.matchingHostsLocked(p) }))
			}
		}
		s.mu.RUnlock()
	}
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return promptbuild.Compare(&entries[i], &entries[j]) })
	s.mu.RLock()
	all := s.snap.all
	s.mu.RUnlock()
	out := make([]mcp.Skill, len(entries))
	for k, i := range order {
		e := &entries[i]
		out[k] = mcp.Skill{Name: e.Name, Description: e.Description, ReadPath: e.ReadPath, Location: e.Location, Version: versionAt(all, e.Location)}
		if hosts && e.Hosts != nil {
			out[k].Hosts = &mcp.Hosts{Count: e.Hosts.Count, IDs: slices.Clone(e.Hosts.Names[:min(len(e.Hosts.Names), mcp.MaxHostIDs)])}
		}
	}
	return out, nil
}

// skillAt returns the skill stored at key in all (sorted by key), or nil.
func skillAt(all []*skill.Skill, key string) *skill.Skill {
	if j, ok := slices.BinarySearchFunc(all, key, func(sk *skill.Skill, k string) int { return strings.Compare(sk.Key, k) }); ok {
		return all[j]
	}
	return nil
}

// versionAt returns the version of the skill stored at key in all, or "":
// the listings report it, the block does not (its entries do not carry it).
func versionAt(all []*skill.Skill, key string) string {
	if sk := skillAt(all, key); sk != nil {
		return sk.Version
	}
	return ""
}

// Search implements mcp.Backend: GET …/skills?eligible=true&q=…&limit=…,
// bounded like it.
func (b mcpBackend) Search(ctx context.Context, agentID, query string, limit int) ([]mcp.Skill, error) {
	s := b.s
	if len(query) > MaxQueryBytes || len(search.Terms(query)) > MaxQueryTerms {
		return nil, errors.New("query: at most " + strconv.Itoa(MaxQueryBytes) + " bytes and " + strconv.Itoa(MaxQueryTerms) + " words")
	}
	t := time.NewTimer(searchWait)
	defer t.Stop()
	select {
	case s.searches <- struct{}{}:
	case <-t.C:
		return nil, errors.New("too many searches in flight; retry in a second")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	eligible := true
	ans := s.searchSkills(agentID, searchRequest{ok: true, q: query, eligible: &eligible, limit: limit})
	<-s.searches
	out := make([]mcp.Skill, len(ans.Skills))
	s.mu.RLock()
	all := s.snap.all
	s.mu.RUnlock()
	for i, r := range ans.Skills {
		out[i] = mcp.Skill{Name: r.Name, ReadPath: r.ReadPath, Location: r.Location, Version: r.Version}
		if sk := skillAt(all, r.Location); sk != nil {
			out[i].Description = sk.Description
		}
		if r.Score != nil {
			out[i].Score = *r.Score
		}
		if len(r.Filtered) > 0 { // host requirements: the filter chain ran
			out[i].Hosts = &mcp.Hosts{Count: len(r.Hosts), IDs: slices.Clone(r.Hosts[:min(len(r.Hosts), mcp.MaxHostIDs)])}
		}
	}
	return out, nil
}

// ReadFile implements mcp.Backend: the eligible skill name designates (by
// name, then directory, then location, as skills.entries keys match), and
// its file at path, as /read serves it.
func (b mcpBackend) ReadFile(ctx context.Context, agentID, name, path string) (mcp.File, error) {
	switch {
	case strings.HasPrefix(path, "/"):
		return mcp.File{}, errors.New("path: must be relative to the skill directory, like scripts/run.sh")
	case len(path) > MaxReadPathLen:
		return mcp.File{}, errors.New("path: longer than 1024 bytes")
	}
	e := b.find(agentID, name)
	if e == nil {
		return mcp.File{}, mcp.ErrNotAvailable
	}
	dir := strings.TrimSuffix(strings.TrimPrefix(e.ReadPath, skill.GlobalPrefix), "/SKILL.md")
	return b.read(ctx, agentID, e.Name, skill.GlobalPrefix+dir+"/"+path)
}

// find returns the entry of the agent's offered skill that name
// designates, or nil: from the prompt view, cached per generation.
func (b mcpBackend) find(agentID, name string) *promptbuild.Entry {
	entries := b.s.promptView(agentID).entries
	for i := range entries {
		if entries[i].Name == name {
			return &entries[i]
		}
	}
	if name != "" && !strings.Contains(name, "/") {
		for i := range entries {
			if entries[i].ReadPath == skill.GlobalPrefix+name+"/SKILL.md" {
				return &entries[i]
			}
		}
	}
	for i := range entries {
		if entries[i].Location == name {
			return &entries[i]
		}
	}
	return nil
}

// ReadPath implements mcp.Backend.
func (b mcpBackend) ReadPath(ctx context.Context, agentID, readPath string) (mcp.File, error) {
	s := b.s
	dir, _, err := checkReadPath(readPath)
	if err != nil {
		return mcp.File{}, errors.New("path: " + err.Error())
	}
	// Offered or not is the agent's view's verdict, dependencies included:
	// the prompt view holds it, cached per generation.
	offered := s.promptView(agentID).eligible
	s.mu.RLock()
	sk, ok := s.snap.findDir(agentID, dir)
	s.mu.RUnlock()
	ok = ok && offered[sk.Key]
	if !ok {
		return mcp.File{}, mcp.ErrNotAvailable
	}
	return b.read(ctx, agentID, sk.Name, readPath)
}

// read returns a file of sk at readPath exactly as GET /v1/agents/{id}/read
// answers it: the handler itself serves the request, in memory.
func (b mcpBackend) read(ctx context.Context, agentID, name, readPath string) (mcp.File, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"/v1/agents/"+url.PathEscape(agentID)+"/read?path="+url.QueryEscape(readPath), nil)
	if err != nil {
		return mcp.File{}, err
	}
	r.SetPathValue("agentId", agentID)
	var rec recorder
	b.s.needSnapshot(b.s.handleRead)(&rec, r)
	switch rec.code {
	case 0, http.StatusOK:
		return mcp.File{Name: name, ReadPath: readPath, Body: rec.body.Bytes()}, nil
	case http.StatusForbidden: // held by governance since the look
		return mcp.File{}, mcp.ErrNotAvailable
	}
	var e api.Error
	json.Unmarshal(rec.body.Bytes(), &e)
	if rec.code == http.StatusNotFound && strings.HasPrefix(e.Error, "no skill directory") {
		return mcp.File{}, mcp.ErrNotAvailable // gone since the look
	}
	if e.Error == "" {
		e.Error = readPath + ": " + http.StatusText(rec.code)
	}
	return mcp.File{}, errors.New(e.Error)
}

// recorder is an in-memory http.ResponseWriter.
type recorder struct {
	hdr  http.Header
	code int
	body bytes.Buffer
}

func (r *recorder) Header() http.Header {
	if r.hdr == nil {
		r.hdr = http.Header{}
	}
	return r.hdr
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}

// Prompt implements mcp.Backend: the block GET …/prompt answers.
func (b mcpBackend) Prompt(_ context.Context, agentID string) (string, error) {
	return b.s.promptView(agentID).prompt, nil
}

// Subscribe implements mcp.Backend with the change feed that wakes long
// polls: it fires when the agent's view may have changed.
func (b mcpBackend) Subscribe(agentID string) func(context.Context) error {
	all, view := b.s.feed.subscribe(viewKey(b.s.now.Load(), agentID))
	return func(ctx context.Context) error {
		select {
		case <-all:
		case <-view:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
}

var _ mcp.Backend = mcpBackend{}

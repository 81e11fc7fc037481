package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillgate/skillgate/store"
)

// BenchmarkMCP compares the MCP tools with the HTTP endpoints they stand
// for, each request over loopback HTTP from a real client (net/http, the
// Go SDK's client), on a gateway with 1,000 skills without requirements:
// GET …/read with tools/call load_skill, GET …/skills?q= with tools/call
// search_skills.
func BenchmarkMCP(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		name := fmt.Sprintf("s%04d", i)
		p := filepath.Join(dir, "skills", name, "SKILL.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: A synthetic skill "+name+" with a description of typical length for the benchmark.\n---\n\n# "+name+"\n\nSteps of the skill, a few lines of them.\n"), 0o644)
	}
	st, err := store.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	s.refreshStore(b.Context())
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	defer s.Close()
	client := ts.Client()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(),
		&sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp?agent=main", HTTPClient: client, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	get := func(b *testing.B, u string) {
		resp, err := client.Get(ts.URL + u)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %s", u, resp.Status)
		}
	}
	call := func(b *testing.B, name string, args map[string]any) {
		r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || r.IsError {
			b.Fatalf("%s: %v %v", name, err, r)
		}
	}
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			get(b, "/v1/agents/main/read?path=skills/s0500/SKILL.md")
		}
	})
	b.Run("load_skill", func(b *testing.B) {
		for b.Loop() {
			call(b, "load_skill", map[string]any{"name": "s0500"})
		}
	})
	b.Run("skills?q", func(b *testing.B) {
		for b.Loop() {
			get(b, "/v1/agents/main/skills?eligible=true&limit=10&q=s0500")
		}
	})
	b.Run("search_skills", func(b *testing.B) {
		for b.Loop() {
			call(b, "search_skills", map[string]any{"query": "s0500", "limit": 10})
		}
	})
}

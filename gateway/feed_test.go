package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit"
)

// poll is one GET of a prompt with If-None-Match and wait, and its answer.
type poll struct {
	code    int
	etag    string
	body    string
	elapsed time.Duration
}

func (g *gw) pollPrompt(t *testing.T, agent, etag, wait string) poll {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, g.URL+"/v1/agents/"+agent+"/prompt?wait="+wait, nil)
	if err != nil {
		t.Error(err)
		return poll{}
	}
	req.Header.Set("If-None-Match", etag)
	start := time.Now()
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Error(err)
		return poll{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return poll{resp.StatusCode, resp.Header.Get("ETag"), string(b), time.Since(start)}
}

// TestPromptETagAndLongPoll: every block has a strong ETag; a matching
// If-None-Match is a 304; a long poll returns as soon as its agent's
// block changes, and the polls of agents whose block did not change end
// with a 304 when their wait does.
func TestPromptETagAndLongPoll(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/plain/SKILL.md":           skillMD("plain", "Plain.", ""),
		"agents/a1/skills/loc/SKILL.md":   skillMD("loc", "Needs loc-tool.", `{"bins": ["loc-tool"]}`),
		"agents/a2/skills/other/SKILL.md": skillMD("other", "Other.", ""),
	}})
	dir := testkit.BinDir(t, "unrelated")
	startNode(t, g.URL, "n1", dir, nil)
	g.waitNodes(t, "n1")

	code, hdr, body := g.Get(t, "/v1/agents/a1/prompt", nil)
	etag := hdr.Get("ETag")
	if code != 200 || !strings.HasPrefix(etag, `"`) || len(etag) != 34 || hdr.Get("Cache-Control") != "no-cache" || strings.Contains(body, `<skill name="loc">`) {
		t.Fatalf("a1 prompt: %d ETag %q Cache-Control %q\n%s", code, etag, hdr.Get("Cache-Control"), body)
	}
	if _, hdr2, _ := g.Get(t, "/v1/agents/a1/prompt", nil); hdr2.Get("ETag") != etag {
		t.Errorf("same block, ETag %q then %q", etag, hdr2.Get("ETag"))
	}
	code, hdr, body = g.Get(t, "/v1/agents/a1/prompt", http.Header{"If-None-Match": {etag}})
	if code != http.StatusNotModified || body != "" || hdr.Get("ETag") != etag {
		t.Errorf("If-None-Match: %d %q ETag %q, want 304 without a body", code, body, hdr.Get("ETag"))
	}
	if code, _, body := g.Get(t, "/v1/agents/a1/prompt", http.Header{"If-None-Match": {`"other", ` + etag}}); code != http.StatusNotModified {
		t.Errorf("If-None-Match list: %d %q, want 304", code, body)
	}
	if code, _, _ := g.Get(t, "/v1/agents/a1/prompt", http.Header{"If-None-Match": {`"stale"`}}); code != 200 {
		t.Errorf("stale If-None-Match: %d, want 200", code)
	}
	if code, _, body := g.Get(t, "/v1/agents/a1/prompt?wait=soon", nil); code != http.StatusBadRequest {
		t.Errorf("wait=soon: %d %s, want 400", code, body)
	}
	_, hdrA2, _ := g.Get(t, "/v1/agents/a2/prompt", nil)
	_, hdrMain, _ := g.Get(t, "/v1/agents/main/prompt", nil)

	results := make(chan [2]any, 3)
	for _, p := range []struct{ agent, etag, wait string }{
		{"a1", etag, "30s"}, {"a2", hdrA2.Get("ETag"), "2s"}, {"main", hdrMain.Get("ETag"), "2s"},
	} {
		go func() { results <- [2]any{p.agent, g.pollPrompt(t, p.agent, p.etag, p.wait)} }()
	}
	time.Sleep(300 * time.Millisecond) // the polls are waiting
	testkit.AddBin(t, dir, "loc-tool") // flips a1's local skill only

	got := map[string]poll{}
	var order []string
	for range 3 {
		r := <-results
		got[r[0].(string)] = r[1].(poll)
		order = append(order, r[0].(string))
	}
	a1 := got["a1"]
	if a1.code != 200 || !strings.Contains(a1.body, `<skill name="loc">`) || a1.etag == etag || a1.etag == "" {
		t.Errorf("a1's long poll: %d ETag %q\n%s", a1.code, a1.etag, a1.body)
	}
	if order[0] != "a1" {
		t.Errorf("answer order %v: a1's poll must return at the change, before the others' waits end", order)
	}
	for _, agent := range []string{"a2", "main"} {
		if p := got[agent]; p.code != http.StatusNotModified || p.body != "" || p.elapsed < 2*time.Second {
			t.Errorf("%s's long poll: %d after %v %q, want 304 when its 2s wait ended", agent, p.code, p.elapsed, p.body)
		}
	}

	// A long poll whose client leaves ends with it.
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.URL+"/v1/agents/a1/prompt?wait=5m", nil)
	req.Header.Set("If-None-Match", a1.etag)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Error("a long poll on an unchanged block answered before its client left")
	}
}

package gateway_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/tlstest"
)

// waitingPoll is a long poll started by pollOnce: done is closed when it is
// answered, with code (-1: the request failed).
type waitingPoll struct {
	done chan struct{}
	code int
}

// pollOnce starts a long poll of main's block with token (none: "").
func pollOnce(ctx context.Context, t *testing.T, c *http.Client, base, token, etag string) *waitingPoll {
	t.Helper()
	p := &waitingPoll{done: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/agents/main/prompt?wait=1m", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", etag)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	go func() {
		defer close(p.done)
		resp, err := c.Do(req)
		if err != nil {
			p.code = -1
			return
		}
		resp.Body.Close()
		p.code = resp.StatusCode
	}()
	return p
}

// answeredWithin waits up to d for polls to be answered and returns the
// codes of those answered, in the polls' order (the others are waiting).
func answeredWithin(polls []*waitingPoll, d time.Duration) (codes []int) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for _, p := range polls {
		select {
		case <-p.done:
		case <-ctx.Done():
		}
	}
	for _, p := range polls {
		select {
		case <-p.done:
			codes = append(codes, p.code)
		default:
		}
	}
	return codes
}

// TestLongPollLimits (L1, L4): one token cannot park more long polls than
// gateway.maxLongPollsPerToken, nor all of them more than
// gateway.maxLongPolls; past them a poll is answered 429 at once with
// Retry-After, and a poll that ends gives its place back.
func TestLongPollLimits(t *testing.T) {
	g := startGateway(t, gwOptions{
		files:      map[string]string{"skills/plain/SKILL.md": skillMD("plain", "Plain.", "")},
		agentToken: "admin",
		config:     `{"gateway": {"maxLongPolls": 5, "maxLongPollsPerToken": 3, "agentTokens": {"main": "tok-main"}}}`,
	})
	g.waitPrompt(t, "main", block(global("plain", "Plain.")))
	_, hdr, _ := g.Get(t, "/v1/agents/main/prompt", nil)
	etag := hdr.Get("ETag")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0}}

	var admin []*waitingPoll
	for range 3 {
		admin = append(admin, pollOnce(ctx, t, client, g.URL, "admin", etag))
	}
	time.Sleep(300 * time.Millisecond) // parked
	if got := answeredWithin(admin, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("the first 3 polls of a token were answered %v, want them waiting", got)
	}
	// The token's 4th: 429 at once.
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/v1/agents/main/prompt?wait=1m", nil)
	req.Header.Set("If-None-Match", etag)
	req.Header.Set("Authorization", "Bearer admin")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "5" {
		t.Errorf("a token's 4th long poll: %d Retry-After %q, want 429 and 5", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// A plain request of the same token is served.
	if code, _, body := g.Get(t, "/v1/agents/main/prompt", nil); code != http.StatusOK {
		t.Errorf("a prompt without wait: %d %s", code, body)
	}
	// Another token: 2 more fit the total of 5, the 3rd does not.
	other := []*waitingPoll{pollOnce(ctx, t, client, g.URL, "tok-main", etag), pollOnce(ctx, t, client, g.URL, "tok-main", etag)}
	time.Sleep(300 * time.Millisecond)
	if got := answeredWithin(other, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("another token's polls were answered %v, want them waiting", got)
	}
	if got := answeredWithin([]*waitingPoll{pollOnce(ctx, t, client, g.URL, "tok-main", etag)}, 2*time.Second); len(got) != 1 || got[0] != http.StatusTooManyRequests {
		t.Errorf("the 6th poll in all: %v, want 429", got)
	}
	if m := g.metric(t, "skillgate_long_polls"); m != 5 {
		t.Errorf("skillgate_long_polls = %v, want 5", m)
	}
	// A change answers the waiting ones and frees their places.
	g.Put(t, "skills/other/SKILL.md", skillMD("other", "Other.", ""))
	if got := answeredWithin(append(admin, other...), 10*time.Second); fmt.Sprint(got) != "[200 200 200 200 200]" {
		t.Errorf("the 5 waiting polls answered %v after a change, want 200 each", got)
	}
	testkit.Eventually(t, waitFor, func() (string, bool) {
		m := g.metric(t, "skillgate_long_polls")
		return fmt.Sprintf("skillgate_long_polls = %v, want 0", m), m == 0
	})
}

// TestLongPollLimitsHTTP2 (L2): over HTTP/2 one client's long polls, each
// a stream of one connection, count in the same bounds.
func TestLongPollLimitsHTTP2(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "skillgate test CA")
	cert, key := ca.Leaf(t, tlstest.LeafOptions{}).Write(t, dir, "gateway")
	cfgPath := filepath.Join(dir, "gw.hujson")
	tlstest.WriteFile(t, cfgPath, []byte(`{"gateway": {"maxLongPollsPerToken": 10}}`))
	g := startTLSGateway(t, map[string]string{"skills/plain/SKILL.md": skillMD("plain", "Plain.", "")},
		gateway.Config{TLSCert: cert, TLSKey: key, ConfigPath: cfgPath}, ca.Pool())
	base := g.URL
	var dials atomic.Int32
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.Pool()},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	resp, err := client.Get(base + "/v1/agents/main/prompt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("protocol %s, want HTTP/2", resp.Proto)
	}
	etag := resp.Header.Get("ETag")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var polls []*waitingPoll
	for i := range 30 {
		// Without tokens a client is its address, whatever bearer token
		// it makes up.
		polls = append(polls, pollOnce(ctx, t, client, base, fmt.Sprint("made-up-", i), etag))
	}
	got := answeredWithin(polls, 3*time.Second)
	n429 := strings.Count(fmt.Sprint(got), "429")
	if len(got) != 20 || n429 != 20 {
		t.Errorf("30 HTTP/2 long polls from one client: answered %v, want 20 answered 429 and 10 waiting", got)
	}
	if d := dials.Load(); d != 1 {
		t.Errorf("%d connections dialed, want 1 (the polls as streams of one)", d)
	}
}

// TestSilentConnections (L7): sockets that never send a byte cannot use
// up the gateway: past a bound per address the oldest is closed, and each
// is closed after the first-byte timeout, while requests keep being
// answered.
func TestSilentConnections(t *testing.T) {
	g := startGateway(t, gwOptions{
		files:         map[string]string{"skills/plain/SKILL.md": skillMD("plain", "Plain.", "")},
		firstByte:     time.Second,
		silentPerAddr: 20,
	})
	g.waitPrompt(t, "main", block(global("plain", "Plain.")))
	addr := strings.TrimPrefix(g.URL, "http://")
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 60 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	// A request still gets in.
	if code, _, body := g.Get(t, "/v1/agents/main/prompt", nil); code != http.StatusOK {
		t.Fatalf("a prompt among 60 silent sockets: %d %s", code, body)
	}
	// The oldest 40 were closed by the gateway at once; the last 20 after
	// the first-byte timeout.
	closed := func(c net.Conn, within time.Duration) bool {
		c.SetReadDeadline(time.Now().Add(within))
		var b [1]byte
		_, err := c.Read(b[:])
		var ne net.Error
		return err != nil && !(errorAs(err, &ne) && ne.Timeout())
	}
	for i, c := range idle[:40] {
		if !closed(c, 200*time.Millisecond) {
			t.Errorf("silent socket %d (of the oldest 40) is still open", i)
			break
		}
	}
	if closed(idle[59], 200*time.Millisecond) {
		t.Error("the newest silent socket was closed at once")
	}
	for i, c := range idle[40:] {
		if !closed(c, 3*time.Second) {
			t.Errorf("silent socket %d is open after the first-byte timeout", 40+i)
			break
		}
	}
	if m := g.metric(t, "skillgate_connections_open"); m > 2 {
		t.Errorf("skillgate_connections_open = %v after the silent sockets went", m)
	}
}

func errorAs(err error, target *net.Error) bool { return errors.As(err, target) }

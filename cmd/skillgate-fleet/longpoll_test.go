package main

// `longpoll` against a real in-process gateway on loopback, over a store
// written by `skills --probe`. Every wait is bounded: the command's own
// flip timeout, and the test's context.

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
)

// runLongPoll runs `longpoll` with args, bounded by waitFor.
func runLongPoll(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitFor)
	defer cancel()
	return runCmd(ctx, append([]string{"longpoll"}, args...)...)
}

// TestLongPoll: 200 long polls over two agents, two flips; every waiter
// is answered in each flip, with the probe skill in the block when it
// appeared and without it when it went, each on its own connection.
func TestLongPoll(t *testing.T) {
	const n = 200
	base := startGateway(t, makeStore(t, 300), gateway.Config{})
	ready := filepath.Join(t.TempDir(), "ready")

	code, out, errOut := runLongPoll(t, "--gateway", base, "-n", itoa(n), "--agents", "main,a2", "--wait", "1m",
		"--flips", "2", "--ready-file", ready, "--json")
	if code != 0 {
		t.Fatalf("longpoll: exit %d\n%s\n%s", code, out, errOut)
	}
	var r longpollResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	if r.Waiters != n || strings.Join(r.Agents, ",") != "main,a2" || r.WaitSeconds != 60 || r.Gateway != base {
		t.Errorf("report header: %+v", r)
	}
	// Every request dialed its connection or reused one: the gateway
	// closes a parked poll's connection with its answer, while a re-poll
	// that arrives after the flip is answered at once and keeps it.
	if want := int64(n * (1 + 2)); r.Connections+r.ReusedConnections != want || r.Connections < n {
		t.Errorf("%d connections dialed and %d reused for %d long polls and their re-polls after 2 flips; want %d together, at least %d dialed",
			r.Connections, r.ReusedConnections, n, want, n)
	}
	if r.OpenSeconds <= 0 || r.FileLimit == 0 {
		t.Errorf("openSeconds %v, rlimitNofile %d", r.OpenSeconds, r.FileLimit)
	}
	if len(r.Flips) != 2 {
		t.Fatalf("%d flips in the report, want 2:\n%s", len(r.Flips), out)
	}
	for i, want := range []struct{ skill, from string }{{"appear", "facts.update"}, {"go", "close"}} {
		f := r.Flips[i]
		if f.Flip != i+1 || f.Skill != want.skill || f.From != want.from {
			t.Errorf("flip %d: %+v; want %s from %s", i+1, f, want.skill, want.from)
		}
		if f.Answered != n || f.Wrong != 0 || f.Missed != 0 || f.Latency.Count != n {
			t.Errorf("flip %d (%s): answered %d, wrong %d, missed %d, %d samples; want all %d answered with the marker %s",
				f.Flip, f.Skill, f.Answered, f.Wrong, f.Missed, f.Latency.Count, n, map[bool]string{true: "present", false: "absent"}[i == 0])
		}
		if f.Latency.P50 <= 0 || f.LastMs != f.Latency.Max || f.Latency.P99 > f.LastMs {
			t.Errorf("flip %d latency %+v, last %v", f.Flip, f.Latency, f.LastMs)
		}
	}
	if r.Latency.Count != 2*n || r.Latency.Max != max(r.Flips[0].LastMs, r.Flips[1].LastMs) || r.LastP50Ms <= 0 || r.LastMaxMs != r.Latency.Max {
		t.Errorf("over all flips: latency %+v, last p50 %v max %v", r.Latency, r.LastP50Ms, r.LastMaxMs)
	}
	if r.Errors != 0 || r.Missed != 0 || r.NotModified != 0 || r.Non200 != 0 || r.TransportErrors != 0 || r.MarkerErrors != 0 || r.Unexpected != 0 || len(r.ErrorKinds) != 0 {
		t.Errorf("errors: %s", out)
	}
	// The ready file was written, before the flips.
	var rf struct {
		Waiters int `json:"waiters"`
	}
	if b, err := os.ReadFile(ready); err != nil || json.Unmarshal(b, &rf) != nil || rf.Waiters != n {
		t.Errorf("ready file: %q, %v", b, err)
	}
	// The last flip took the skill away, and the probe node is gone.
	if strings.Contains(getPrompt(t, base, "main"), `<skill name="`+probeSkill+`">`) {
		t.Error("the probe skill is still in the prompt after the last flip")
	}
	if nodes := getNodes(t, base); len(nodes) != 0 {
		t.Errorf("%d nodes connected after the run", len(nodes))
	}

	// The text report says the same.
	code, out, errOut = runLongPoll(t, "--gateway", base, "-n", "10", "--flips", "1", "--wait", "1m")
	if code != 0 || !strings.Contains(out, "flip 1  appear 10/10 answered (0 wrong, 0 missed), from facts.update") || !strings.Contains(out, "errors       0") {
		t.Errorf("text report: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestLongPollNotModified: long polls whose wait ends before the flip are
// answered 304, counted as errors (exit 1), and re-poll: the flip still
// reaches every waiter.
func TestLongPollNotModified(t *testing.T) {
	const n = 20
	base := startGateway(t, makeStore(t, 50), gateway.Config{})
	code, out, errOut := runLongPoll(t, "--gateway", base, "-n", itoa(n), "--wait", "200ms", "--hold", "700ms", "--flips", "1", "--json")
	if code != 1 || !strings.Contains(errOut, "raise --wait") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var r longpollResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	if r.NotModified < n || r.Errors != r.NotModified || len(r.Flips) != 1 || r.Flips[0].Answered != n {
		t.Errorf("304s %d, errors %d, flips %+v; want at least %d 304s, the only errors, and every waiter answered", r.NotModified, r.Errors, r.Flips, n)
	}
	if len(r.ErrorKinds) != 1 || r.ErrorKinds[0].Kind != "304" {
		t.Errorf("error kinds %+v", r.ErrorKinds)
	}
}

// TestLongPollRefuses: a store without the probe skill, an agent that does
// not see it, a probe skill already eligible: exit 1 before any long poll,
// saying why.
func TestLongPollRefuses(t *testing.T) {
	noProbe := t.TempDir()
	if code, _, errOut := runCmd(context.Background(), "skills", "--out", noProbe, "-n", "20"); code != 0 {
		t.Fatalf("skills: %s", errOut)
	}
	base := startGateway(t, noProbe, gateway.Config{})
	code, _, errOut := runLongPoll(t, "--gateway", base, "-n", "5")
	if code != 1 || !strings.Contains(errOut, "agent main has no skill "+probeSkill) || !strings.Contains(errOut, "skills --probe") {
		t.Errorf("no probe skill: exit %d: %s", code, errOut)
	}

	cfg := filepath.Join(t.TempDir(), "gw.hujson")
	if err := os.WriteFile(cfg, []byte(`{"agents": {"a2": {"skills": {"deny": ["`+probeSkill+`"]}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base = startGateway(t, makeStore(t, 20), gateway.Config{ConfigPath: cfg})
	code, _, errOut = runLongPoll(t, "--gateway", base, "-n", "5", "--agents", "main,a2")
	if code != 1 || !strings.Contains(errOut, "agent a2 does not see skill "+probeSkill) {
		t.Errorf("agent out of scope: exit %d: %s", code, errOut)
	}

	// While a long poll run holds the probe node (an odd number of
	// flips ends with it connected until the run ends), nothing else
	// can be checked; instead, a fleet probe node connected by hand.
	lp := newLongPoller(longpollOptions{base: mustURL(t, base), wsURL: "ws" + strings.TrimPrefix(base, "http") + "/v1/nodes/connect", n: 1, agents: []string{"main"}}, io.Discard)
	p, in, err := lp.connectProbe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.close("longpoll flip")
	if err := p.sendFacts(in); err != nil {
		t.Fatal(err)
	}
	testkit.Until(t, waitFor, "the probe skill offered", func() bool { return strings.Contains(getPrompt(t, base, "main"), `<skill name="`+probeSkill+`">`) })
	code, _, errOut = runLongPoll(t, "--gateway", base, "-n", "5")
	if code != 1 || !strings.Contains(errOut, "already eligible for agent main") {
		t.Errorf("probe skill already eligible: exit %d: %s", code, errOut)
	}
}

func TestLongPollUsageErrors(t *testing.T) {
	gw := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--gateway is required"},
		{[]string{"--gateway", "http://10.1.2.3:7780"}, `--gateway: host "10.1.2.3" is not a loopback address`},
		{[]string{"--gateway", gw, "-n", "0"}, "-n: 0 is out of range"},
		{[]string{"--gateway", gw, "--wait", "0s"}, "--wait: 0s is out of range"},
		{[]string{"--gateway", gw, "--wait", "6m"}, "--wait: 6m0s is out of range (more than 0, at most 5m0s"},
		{[]string{"--gateway", gw, "--flips", "-1"}, "--flips: must not be negative"},
		{[]string{"--gateway", gw, "--hold", "-1s"}, "--hold: must not be negative"},
		{[]string{"--gateway", gw, "--agents", ","}, "--agents: give at least one"},
		{[]string{"--gateway", gw, "--agents", "../x"}, "--agents: agent id"},
		{[]string{"--gateway", gw, "--agent-token-file", filepath.Join(t.TempDir(), "none")}, "--agent-token-file: open"},
		{[]string{"--gateway", gw, "stray"}, `unexpected argument "stray"`},
	} {
		code, _, errOut := runCmd(context.Background(), append([]string{"longpoll"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	// A gateway that is not there: exit 1, naming it.
	code, _, errOut := runCmd(context.Background(), "longpoll", "--gateway", gw, "-n", "1")
	if code != 1 || !strings.Contains(errOut, "is a gateway serving") {
		t.Errorf("no gateway: exit %d, stderr %q", code, errOut)
	}
}

// TestScanBody: the marker is found wherever the reads cut it, and the
// buffer is reused without keeping anything of a body.
func TestScanBody(t *testing.T) {
	marker := []byte(`<skill name="fleet-probe">`)
	filler := strings.Repeat("<skill name=\"s0001\">x</skill>\n", 2000) // over one buffer
	for _, tc := range []struct {
		name string
		body string
		want bool
	}{
		{"absent", filler, false},
		{"start", string(marker) + filler, true},
		{"middle", filler[:lpBodyBufferSize-5] + string(marker) + filler, true},
		{"end", filler + string(marker), true},
		{"prefix only", filler + string(marker[:len(marker)-1]), false},
		{"empty", "", false},
	} {
		for _, r := range []struct {
			name string
			r    func(string) io.Reader
		}{
			{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
			{"bytewise", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
			{"halves", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }},
		} {
			got, err := scanBody(r.r(tc.body), marker)
			if err != nil || got != tc.want {
				t.Errorf("%s, %s reads: found %v, err %v; want %v", tc.name, r.name, got, err, tc.want)
			}
		}
	}
	if _, err := scanBody(iotest.ErrReader(io.ErrUnexpectedEOF), marker); err != io.ErrUnexpectedEOF {
		t.Errorf("read error: %v", err)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

package main

// Several gateways: `nodes --gateway A,B` spreads the nodes over two real
// in-process gateways, and `longpoll --probe-gateway` moves the probe node
// to another gateway than the waiters'. Without a cluster two gateways do
// not share nodes, so the flip from one to the other is only measured on
// one gateway given twice; that the probe node really dials
// --probe-gateway shows in a gateway that refuses it.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
)

// nodeIDs returns the sorted ids of the nodes a gateway lists.
func nodeIDs(t *testing.T, base string) []string {
	t.Helper()
	var ids []string
	for _, n := range getNodes(t, base) {
		ids = append(ids, n.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestNodesGateways: node i connects to gateway i mod 2, the probe to the
// first, and the report counts the nodes per gateway.
func TestNodesGateways(t *testing.T) {
	store := makeStore(t, 20)
	a := startGateway(t, store, gateway.Config{})
	// B hides the probe skill from agent main: the probe run below
	// succeeds only when its node and its prompt fetches are on A.
	cfg := filepath.Join(t.TempDir(), "gw.hujson")
	if err := os.WriteFile(cfg, []byte(`{"agents": {"main": {"skills": {"deny": ["`+probeSkill+`"]}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startGateway(t, store, gateway.Config{ConfigPath: cfg})

	stop := startNodes(t, "--gateway", a+","+b, "-n", "10", "--probe-agent", "main", "--probe-runs", "1")
	if got, want := nodeIDs(t, a), []string{"sim-0", "sim-2", "sim-4", "sim-6", "sim-8"}; !slices.Equal(got, want) {
		t.Errorf("gateway A lists %v, want %v", got, want)
	}
	if got, want := nodeIDs(t, b), []string{"sim-1", "sim-3", "sim-5", "sim-7", "sim-9"}; !slices.Equal(got, want) {
		t.Errorf("gateway B lists %v, want %v", got, want)
	}
	code, out, errOut := stop()
	if code != 0 {
		t.Fatalf("nodes: exit %d\n%s\n%s", code, out, errOut)
	}
	sum := decodeSummary(t, out)
	wantPer := []gatewayCount{{Gateway: a, Connected: 5}, {Gateway: b, Connected: 5}}
	if sum.Gateway != a || !slices.Equal(sum.Gateways, []string{a, b}) || !slices.Equal(sum.PerGateway, wantPer) {
		t.Errorf("gateway %q, gateways %v, perGateway %+v; want %q, [%s %s], %+v", sum.Gateway, sum.Gateways, sum.PerGateway, a, a, b, wantPer)
	}
	if sum.Connects != 10 || sum.Errors != 0 || sum.Probe == nil || sum.Probe.Runs != 1 {
		t.Errorf("connects %d, errors %+v, probe %+v; want 10 connects, no errors, one probe run", sum.Connects, sum.ErrorKinds, sum.Probe)
	}

	// The text report says the same in one line.
	stop = startNodes(t, "--json=false", "--gateway", a+","+b, "-n", "4", "--id-prefix", "txt-")
	code, out, errOut = stop()
	if code != 0 {
		t.Fatalf("nodes: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "skillgate-fleet nodes: 4 nodes against "+a+","+b+" for ") {
		t.Errorf("text report header:\n%s", out)
	}
	if want := "\n  per gateway        node i on gateway i mod 2; connected at least once: " + a + " 2, " + b + " 2\n"; !strings.Contains(out, want) {
		t.Errorf("text report lacks %q:\n%s", want, out)
	}

	// One gateway: the same report as before, with a list of one.
	stop = startNodes(t, "--gateway", a, "-n", "3", "--id-prefix", "one-")
	code, out, errOut = stop()
	if code != 0 {
		t.Fatalf("nodes: exit %d\n%s\n%s", code, out, errOut)
	}
	sum = decodeSummary(t, out)
	if want := []gatewayCount{{Gateway: a, Connected: 3}}; sum.Gateway != a || !slices.Equal(sum.Gateways, []string{a}) || !slices.Equal(sum.PerGateway, want) {
		t.Errorf("gateway %q, gateways %v, perGateway %+v; want %q, [%s], %+v", sum.Gateway, sum.Gateways, sum.PerGateway, a, a, want)
	}
	stop = startNodes(t, "--json=false", "--gateway", a, "-n", "3", "--id-prefix", "one-")
	if _, out, _ = stop(); strings.Contains(out, "per gateway") {
		t.Errorf("one gateway's text report has a per-gateway line:\n%s", out)
	}
}

// TestLongPollProbeGateway: the mechanics of --probe-gateway on one
// gateway given twice, and a probe gateway that refuses the probe node
// (so the probe dials it, not --gateway, whose precheck passed).
func TestLongPollProbeGateway(t *testing.T) {
	const n = 20
	store := makeStore(t, 50)
	base := startGateway(t, store, gateway.Config{})

	code, out, errOut := runLongPoll(t, "--gateway", base, "--probe-gateway", base, "-n", itoa(n), "--wait", "1m", "--flips", "2", "--json")
	if code != 0 {
		t.Fatalf("longpoll: exit %d\n%s\n%s", code, out, errOut)
	}
	var r longpollResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	if r.Gateway != base || r.ProbeGateway != base || len(r.Flips) != 2 || r.Errors != 0 {
		t.Fatalf("gateway %q, probeGateway %q, %d flips, %d errors; want %q twice, 2 flips, none:\n%s", r.Gateway, r.ProbeGateway, len(r.Flips), r.Errors, base, out)
	}
	for _, f := range r.Flips {
		if f.Answered != n || f.Wrong != 0 || f.Missed != 0 {
			t.Errorf("flip %d (%s): answered %d, wrong %d, missed %d; want all %d answered", f.Flip, f.Skill, f.Answered, f.Wrong, f.Missed, n)
		}
	}

	// Without --probe-gateway the probe is on --gateway; the text header
	// names it.
	code, out, errOut = runLongPoll(t, "--gateway", base, "-n", "5", "--wait", "1m", "--flips", "1")
	if want := "skillgate-fleet longpoll: 5 long polls (wait 1m0s) on GET " + base + "/v1/agents/{main}/prompt, 1 flips of skill " + probeSkill + " by a probe node on " + base + "\n"; code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("text report: exit %d, want it to start with %q:\n%s\n%s", code, want, out, errOut)
	}

	// That run ended with the probe node leaving: wait until its skill
	// is gone, or the next precheck would find it eligible.
	testkit.Until(t, waitFor, "the probe skill withdrawn", func() bool { return !strings.Contains(getPrompt(t, base, "main"), `<skill name="`+probeSkill+`">`) })
	refusing := startGateway(t, store, gateway.Config{NodeToken: "probe-gateway-token"})
	code, out, errOut = runLongPoll(t, "--gateway", base, "--probe-gateway", refusing, "-n", "5", "--wait", "1m", "--flips", "1")
	if code != 1 || !strings.Contains(errOut, "flip 1: probe node: connect failed: gateway refused node "+lpProbeID+" (unauthorized)") {
		t.Errorf("probe gateway refusing the probe node: exit %d\n%s\n%s", code, out, errOut)
	}
	// The precheck stays on --gateway: a store without the probe skill
	// there fails it, whatever the probe gateway's store.
	noProbe := t.TempDir()
	if code, _, errOut := runCmd(context.Background(), "skills", "--out", noProbe, "-n", "20"); code != 0 {
		t.Fatalf("skills: %s", errOut)
	}
	code, _, errOut = runLongPoll(t, "--gateway", startGateway(t, noProbe, gateway.Config{}), "--probe-gateway", base, "-n", "5")
	if code != 1 || !strings.Contains(errOut, "agent main has no skill "+probeSkill) {
		t.Errorf("precheck on --gateway: exit %d: %s", code, errOut)
	}
}

func TestGatewayListUsageErrors(t *testing.T) {
	gw := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nodes", "--gateway", gw + ",ftp://x"}, `--gateway: URL 2 of 2, "ftp://x": scheme "ftp": use http, https, ws or wss`},
		{[]string{"nodes", "--gateway", gw + ",127.0.0.1:2"}, `--gateway: URL 2 of 2, "127.0.0.1:2": "127.0.0.1:2" has no scheme; use http://127.0.0.1:2`},
		{[]string{"nodes", "--gateway", "http://u:p@127.0.0.1:2," + gw}, `--gateway: URL 1 of 2, "http://u:p@127.0.0.1:2": credentials in the URL are not supported`},
		{[]string{"nodes", "--gateway", gw + ",http://10.1.2.3:7780,http://127.0.0.1:3"}, `--gateway: host "10.1.2.3" (URL 2 of 3, http://10.1.2.3:7780) is not a loopback address`},
		{[]string{"nodes", "--gateway", gw + ",," + gw}, `--gateway: "` + gw + `,,` + gw + `" has an empty URL between its commas`},
		{[]string{"nodes", "--gateway", gw + ",http://127.0.0.1:2," + gw + "/"}, "--gateway: URLs 1 and 3 are both " + gw + "; list each gateway once"},
		{[]string{"longpoll", "--gateway", gw, "--probe-gateway", "http://10.1.2.3:7780"}, `--probe-gateway: host "10.1.2.3" is not a loopback address`},
		{[]string{"longpoll", "--gateway", gw, "--probe-gateway", "127.0.0.1:2"}, `--probe-gateway: "127.0.0.1:2" has no scheme; use http://127.0.0.1:2`},
		{[]string{"longpoll", "--gateway", gw, "--probe-gateway", gw + "?x=1"}, `--probe-gateway: "` + gw + `?x=1": give the base URL only`},
	} {
		code, _, errOut := runCmd(context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

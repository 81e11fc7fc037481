package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
)

// TestLoadOpenLoop: `load --rate` against a real gateway sends the
// requests of its schedule (200/s for 1 s: exactly 200 due), each
// answered, and reports them in both formats.
func TestLoadOpenLoop(t *testing.T) {
	base := startGateway(t, makeStore(t, 50), gateway.Config{})
	const due = 200

	code, out, errOut := runCmd(context.Background(), "load", "--gateway", base, "--rate", "200/s", "--duration", "1s", "-c", "32", "--gzip", "--json")
	if code != 0 {
		t.Fatalf("load --rate: exit %d\n%s\n%s", code, out, errOut)
	}
	var r loadResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("load output: %v\n%s", err, out)
	}
	o := r.OpenLoop
	if o == nil {
		t.Fatalf("no openLoop in the report:\n%s", out)
	}
	// Every due request is sent or dropped; a busy machine may drop a few,
	// never more than a tenth at this rate.
	if o.TargetRate != 200 || o.Scheduled != due || r.Requests+o.Dropped != due || o.Dropped > due/10 || o.Late > r.Requests {
		t.Errorf("schedule: %+v, %d requests; want %d due, each sent or dropped", *o, r.Requests, due)
	}
	if r.Errors != 0 || r.StatusCodes["200"] != int(r.Requests) || r.Latency.Count != int(r.Requests) || o.SendLag.Count != int(r.Requests) {
		t.Errorf("answers: %+v", r)
	}
	if want := float64(due - o.Dropped); o.AchievedRate != want {
		t.Errorf("achieved rate %v, want %v (sent per second of a 1 s schedule)", o.AchievedRate, want)
	}
	// The last request is due at 0.995 s: the run lasts until it is answered.
	if r.Latency.Max < r.Latency.P50 || r.Latency.P50 <= 0 || r.DurationSeconds < 0.995 {
		t.Errorf("latency %+v over %v s", r.Latency, r.DurationSeconds)
	}

	// The human report, field by field.
	code, out, errOut = runCmd(context.Background(), "load", "--gateway", base, "--agents", "main,a2", "--rate", "200/s", "--duration", "1s", "-c", "32")
	if code != 0 {
		t.Fatalf("load --rate: exit %d\n%s\n%s", code, out, errOut)
	}
	ms := `\d+\.\d{3}ms`
	stats := `p50 ` + ms + `  p90 ` + ms + `  p99 ` + ms + `  max ` + ms + `  \(mean ` + ms + `, n=(\d+)\)`
	re := regexp.MustCompile(`^skillgate-fleet load: 200 req/s on a fixed schedule \(open loop, at most 32 in flight\) for (\d+\.\d)s on GET ` + regexp.QuoteMeta(base) + `/v1/agents/\{main,a2\}/prompt\n` +
		`  requests    (\d+) \(200×(\d+)\)\n` +
		`  schedule    200 due, (\d+) sent \((\d+\.\d) req/s\), (\d+) late \(no idle worker at their time\), (\d+) dropped \(never sent\)\n` +
		`  errors      0 \(non-200 0, transport 0\)\n` +
		`  throughput  \d+\.\d req/s\n` +
		`  latency     ` + stats + `, from the scheduled send time\n` +
		`  send lag    ` + stats + `\n$`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("report does not have the expected form:\n%s", out)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	requests, dropped := n(2), n(7)
	if n(3) != requests || n(4) != requests || requests+dropped != due || n(8) != requests || n(9) != requests ||
		m[5] != strconv.FormatFloat(float64(requests), 'f', 1, 64) || n(6) > requests {
		t.Errorf("report fields disagree (requests %d, dropped %d):\n%s", requests, dropped, out)
	}
}

// TestLoadOpenLoopLateAndDropped: a server slower than the schedule
// (2 workers, 50 ms an answer, 100 requests a second) leaves requests
// late and drops others, and the latency of each counts from its
// scheduled time, waiting included, not from when it was sent.
func TestLoadOpenLoopLateAndDropped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		w.Write([]byte("<available_skills></available_skills>"))
	}))
	defer srv.Close()
	code, out, errOut := runCmd(context.Background(), "load", "--gateway", srv.URL, "--rate", "100/s", "--duration", "1s", "-c", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var r loadResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("load output: %v\n%s", err, out)
	}
	o := r.OpenLoop
	if o == nil || o.Scheduled != 100 || o.Late == 0 || o.Dropped == 0 || r.Requests+o.Dropped != 100 || r.Requests > 60 {
		t.Fatalf("schedule %+v, %d requests; want 100 due, some late, some dropped, at most about 40+4 sent", o, r.Requests)
	}
	// Every answer takes 50 ms; late ones waited for a worker on top.
	if r.Latency.P50 < 50 || r.Latency.Max < 75 || o.SendLag.Max < 25 {
		t.Errorf("latency %+v, send lag %+v: want the wait for a worker counted", r.Latency, o.SendLag)
	}
	if want := "requests were dropped (all 2 workers busy and 2 more waiting)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q lacks %q", errOut, want)
	}
}

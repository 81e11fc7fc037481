package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/protocol"
)

// Bounds of `load`.
const (
	maxWorkers     = 10_000
	maxSamples     = 1 << 25 // latencies kept (256 MiB); beyond, requests are counted only
	requestTimeout = 10 * time.Second
	maxRate        = 1_000_000 // requests per second with --rate
)

// loadResult is the report of `load`.
type loadResult struct {
	Gateway         string         `json:"gateway"`
	Agents          []string       `json:"agents"`
	Concurrency     int            `json:"concurrency"`
	DurationSeconds float64        `json:"durationSeconds"`
	Requests        int64          `json:"requests"`
	Errors          int64          `json:"errors"` // non-200 answers and transport errors
	Non200          int64          `json:"non200"`
	TransportErrors int64          `json:"transportErrors"`
	StatusCodes     map[string]int `json:"statusCodes"`
	Throughput      float64        `json:"throughput"` // requests per second
	Latency         latencyStats   `json:"latency"`
	FirstError      string         `json:"firstError,omitempty"`
	// OpenLoop is set with --rate; the closed loop's report is unchanged.
	OpenLoop *openLoopStats `json:"openLoop,omitempty"`
}

// openLoopStats is what an open-loop run (--rate) adds to the report. Its
// latencies are measured from each request's scheduled send time, not
// from when it was sent, so that a stalled gateway shows in them instead
// of only slowing the sender down (coordinated omission).
type openLoopStats struct {
	TargetRate float64 `json:"targetRate"` // requests per second asked for
	Scheduled  int64   `json:"scheduled"`  // requests due during the run
	// Late requests found no idle worker at their scheduled time: they
	// were sent as soon as one was free, their latency counted from
	// their time.
	Late int64 `json:"late"`
	// Dropped requests found all -c workers busy and -c requests already
	// waiting: they were never sent (not in requests nor in the latency).
	Dropped int64 `json:"dropped"`
	// AchievedRate is the requests sent per second of the schedule.
	AchievedRate float64 `json:"achievedRate"`
	// SendLag is how long after its scheduled time each request was sent:
	// this process's own timer and scheduling delays, plus the wait of
	// late requests. It is part of the latency.
	SendLag latencyStats `json:"sendLag"`
}

func cmdLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate-fleet load", stderr)
	gw := fs.String("gateway", "", "gateway base URL, e.g. http://127.0.0.1:7780")
	agentList := fs.String("agents", "main", "comma-separated agent ids; requests rotate over them")
	c := fs.Int("c", 64, "concurrent workers (closed loop: each sends its next request when the last one is answered; with --rate: the most requests in flight, and the most waiting for a worker)")
	rateFlag := fs.String("rate", "", "open loop: send this many requests per second on a fixed schedule, whether or not earlier ones were answered, e.g. 2000/s; latency counts from each request's scheduled time (default: closed loop)")
	duration := fs.Duration("duration", 20*time.Second, "how long to send requests")
	tokenFile := fs.String("token-file", "", "file holding the agents' bearer token (default: $"+agentTokenEnv+")")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	gz := fs.Bool("gzip", false, "ask for gzip-compressed blocks, as most HTTP clients do (read as is, not decompressed)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	base, err := gatewayBase("gateway", *gw)
	if err != nil {
		return err
	}
	agents := splitList(*agentList)
	if len(agents) == 0 {
		return cli.Usagef("--agents: give at least one agent id, e.g. --agents main")
	}
	for _, a := range agents {
		if err := protocol.ValidateID(a); err != nil {
			return cli.Usagef("--agents: agent id %v", err)
		}
	}
	switch {
	case *c < 1 || *c > maxWorkers:
		return cli.Usagef("-c: %d is out of range (1…%d)", *c, maxWorkers)
	case *duration <= 0:
		return cli.Usagef("--duration: must be positive, e.g. 20s")
	}
	rate := 0.0
	if *rateFlag != "" {
		if rate, err = parseRate("rate", *rateFlag); err != nil {
			return err
		}
		if rate <= 0 || rate > maxRate {
			return cli.Usagef("--rate: %s is out of range (more than 0, at most %d/s)", *rateFlag, maxRate)
		}
	}
	token, err := readToken("token-file", *tokenFile, agentTokenEnv)
	if err != nil {
		return err
	}
	lg := &loadGen{gateway: base.String(), urls: promptURLs(base, agents), agents: agents, c: *c, d: *duration, token: token, gz: *gz}
	var res *loadResult
	if rate > 0 {
		res = lg.runOpen(ctx, rate)
	} else {
		res = lg.runClosed(ctx)
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		res.print(stdout)
	}
	if o := res.OpenLoop; o != nil && o.Dropped > 0 {
		fmt.Fprintf(stderr, "skillgate-fleet load: warning: %d of %d scheduled requests were dropped (all %d workers busy and %d more waiting): the gateway did not keep up with --rate %s, or raise -c\n",
			o.Dropped, o.Scheduled, *c, *c, *rateFlag)
	}
	if res.Requests == 0 {
		return fmt.Errorf("no request completed in %v; is a gateway serving %s?", *duration, base)
	}
	if res.Errors > 0 {
		return fmt.Errorf("%d of %d requests failed; first: %s", res.Errors, res.Requests, res.FirstError)
	}
	return nil
}

// promptURLs returns the prompt URL of each agent.
func promptURLs(base *url.URL, agents []string) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = promptURL(base, a)
	}
	return out
}

// loadWorker is one worker's tally, merged at the end.
type loadWorker struct {
	lat        []time.Duration
	requests   int64
	non200     int64
	transport  int64
	codes      map[int]int
	firstError string
}

// loadGen is one `load` run's target and settings.
type loadGen struct {
	gateway      string
	urls, agents []string
	c            int // workers
	d            time.Duration
	token        string
	gz           bool
}

// client returns an HTTP client with a keep-alive connection per worker.
func (g *loadGen) client() (*http.Client, *http.Transport) {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * g.c,
		MaxIdleConnsPerHost: g.c,
		IdleConnTimeout:     90 * time.Second,
		// With gz the request asks for gzip and the compressed body is read
		// as is: the figures are the gateway's and the wire's, not the
		// cost of this process decompressing on the same machine.
		DisableCompression: true,
	}
	return &http.Client{Transport: tr, Timeout: requestTimeout}, tr
}

// request returns a GET of u with the token and Accept-Encoding.
func (g *loadGen) request(ctx context.Context, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	if g.gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	return req, nil
}

// do sends req and reads the answer to its end.
func do(client *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// record tallies one answered (or failed) request.
func (lw *loadWorker) record(u string, resp *http.Response, err error, lat time.Duration, keep int) {
	lw.requests++
	if len(lw.lat) < keep {
		lw.lat = append(lw.lat, lat)
	}
	switch {
	case err != nil:
		lw.transport++
		lw.note(err.Error())
	case resp.StatusCode != http.StatusOK:
		lw.codes[resp.StatusCode]++
		lw.non200++
		lw.note(fmt.Sprintf("GET %s: %s", u, resp.Status))
	default:
		lw.codes[resp.StatusCode]++
	}
}

// runClosed runs c closed-loop workers on urls for d: each sends its next
// request when the last one is answered.
func (g *loadGen) runClosed(ctx context.Context) *loadResult {
	client, tr := g.client()
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, g.d)
	defer cancel()

	perWorker := maxSamples / g.c
	workers := make([]loadWorker, g.c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			lw := &workers[w]
			lw.codes = map[int]int{}
			lw.lat = make([]time.Duration, 0, min(perWorker, 1<<14))
			for i := w; ctx.Err() == nil; i++ {
				u := g.urls[i%len(g.urls)]
				req, err := g.request(ctx, u)
				if err != nil {
					lw.transport++
					lw.note(err.Error())
					return
				}
				t0 := time.Now()
				resp, err := do(client, req)
				lat := time.Since(t0)
				if ctx.Err() != nil {
					break // cut by the end of the run: not a sample
				}
				lw.record(u, resp, err, lat, perWorker)
			}
		})
	}
	wg.Wait()
	return g.result(workers, time.Since(start))
}

// result merges the workers' tallies.
func (g *loadGen) result(workers []loadWorker, elapsed time.Duration) *loadResult {
	res := &loadResult{Gateway: g.gateway, Agents: g.agents, Concurrency: g.c, DurationSeconds: elapsed.Seconds(), StatusCodes: map[string]int{}}
	var all []time.Duration
	for i := range workers {
		lw := &workers[i]
		res.Requests += lw.requests
		res.Non200 += lw.non200
		res.TransportErrors += lw.transport
		for code, n := range lw.codes {
			res.StatusCodes[strconv.Itoa(code)] += n
		}
		if res.FirstError == "" {
			res.FirstError = lw.firstError
		}
		all = append(all, lw.lat...)
	}
	res.Errors = res.Non200 + res.TransportErrors
	if elapsed > 0 {
		res.Throughput = float64(res.Requests) / elapsed.Seconds()
	}
	res.Latency = summarize(all)
	return res
}

func (lw *loadWorker) note(msg string) {
	if lw.firstError == "" {
		lw.firstError = msg
	}
}

func (r *loadResult) print(w io.Writer) {
	if o := r.OpenLoop; o != nil {
		fmt.Fprintf(w, "skillgate-fleet load: %s req/s on a fixed schedule (open loop, at most %d in flight) for %.1fs on GET %s/v1/agents/{%s}/prompt\n",
			strconv.FormatFloat(o.TargetRate, 'f', -1, 64), r.Concurrency, r.DurationSeconds, r.Gateway, strings.Join(r.Agents, ","))
	} else {
		fmt.Fprintf(w, "skillgate-fleet load: %d workers for %.1fs on GET %s/v1/agents/{%s}/prompt\n",
			r.Concurrency, r.DurationSeconds, r.Gateway, strings.Join(r.Agents, ","))
	}
	var codes []string
	for _, c := range slices.Sorted(maps.Keys(r.StatusCodes)) {
		codes = append(codes, fmt.Sprintf("%s×%d", c, r.StatusCodes[c]))
	}
	fmt.Fprintf(w, "  requests    %d (%s)\n", r.Requests, strings.Join(codes, ", "))
	if o := r.OpenLoop; o != nil {
		fmt.Fprintf(w, "  schedule    %d due, %d sent (%.1f req/s), %d late (no idle worker at their time), %d dropped (never sent)\n",
			o.Scheduled, o.Scheduled-o.Dropped, o.AchievedRate, o.Late, o.Dropped)
	}
	fmt.Fprintf(w, "  errors      %d (non-200 %d, transport %d)\n", r.Errors, r.Non200, r.TransportErrors)
	if r.FirstError != "" {
		fmt.Fprintf(w, "  first error %s\n", r.FirstError)
	}
	fmt.Fprintf(w, "  throughput  %.1f req/s\n", r.Throughput)
	if o := r.OpenLoop; o != nil {
		fmt.Fprintf(w, "  latency     %s, from the scheduled send time\n", r.Latency)
		fmt.Fprintf(w, "  send lag    %s\n", o.SendLag)
	} else {
		fmt.Fprintf(w, "  latency     %s\n", r.Latency)
	}
}

// latencyStats summarizes a set of durations, in milliseconds.
type latencyStats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"meanMs"`
	P50   float64 `json:"p50Ms"`
	P90   float64 `json:"p90Ms"`
	P99   float64 `json:"p99Ms"`
	Max   float64 `json:"maxMs"`
}

// summarize sorts d in place and returns its percentiles (nearest rank).
func summarize(d []time.Duration) latencyStats {
	if len(d) == 0 {
		return latencyStats{}
	}
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	pct := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(d)))) - 1
		return ms(d[max(0, min(i, len(d)-1))])
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return latencyStats{
		Count: len(d), Mean: ms(sum / time.Duration(len(d))),
		P50: pct(0.50), P90: pct(0.90), P99: pct(0.99), Max: ms(d[len(d)-1]),
	}
}

// String formats the stats for humans.
func (l latencyStats) String() string {
	if l.Count == 0 {
		return "no samples"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + "ms" }
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s  (mean %s, n=%d)", f(l.P50), f(l.P90), f(l.P99), f(l.Max), f(l.Mean), l.Count)
}

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
}

func cmdLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate-fleet load", stderr)
	gw := fs.String("gateway", "", "gateway base URL, e.g. http://127.0.0.1:7780")
	agentList := fs.String("agents", "main", "comma-separated agent ids; requests rotate over them")
	c := fs.Int("c", 64, "concurrent workers (closed loop: each sends its next request when the last one is answered)")
	duration := fs.Duration("duration", 20*time.Second, "how long to send requests")
	tokenFile := fs.String("token-file", "", "file holding the agents' bearer token (default: $"+agentTokenEnv+")")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	gz := fs.Bool("gzip", false, "ask for gzip-compressed blocks, as most HTTP clients do (read as is, not decompressed)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	base, err := gatewayBase(*gw)
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
	token, err := readToken("token-file", *tokenFile, agentTokenEnv)
	if err != nil {
		return err
	}
	res := runLoad(ctx, base.String(), promptURLs(base, agents), agents, *c, *duration, token, *gz)
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		res.print(stdout)
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

// runLoad runs c closed-loop workers on urls for d.
func runLoad(ctx context.Context, gateway string, urls, agents []string, c int, d time.Duration, token string, gz bool) *loadResult {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * c,
		MaxIdleConnsPerHost: c,
		IdleConnTimeout:     90 * time.Second,
		// With gz the request asks for gzip and the compressed body is read
		// as is: the figures are the gateway's and the wire's, not the
		// cost of this process decompressing on the same machine.
		DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: requestTimeout}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()

	perWorker := maxSamples / c
	workers := make([]loadWorker, c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			lw := &workers[w]
			lw.codes = map[int]int{}
			lw.lat = make([]time.Duration, 0, min(perWorker, 1<<14))
			for i := w; ctx.Err() == nil; i++ {
				u := urls[i%len(urls)]
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
				if err != nil {
					lw.transport++
					lw.note(err.Error())
					return
				}
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				if gz {
					req.Header.Set("Accept-Encoding", "gzip")
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				lat := time.Since(t0)
				if ctx.Err() != nil {
					break // cut by the end of the run: not a sample
				}
				lw.requests++
				if len(lw.lat) < perWorker {
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
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	res := &loadResult{Gateway: gateway, Agents: agents, Concurrency: c, DurationSeconds: elapsed.Seconds(), StatusCodes: map[string]int{}}
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
	fmt.Fprintf(w, "skillgate-fleet load: %d workers for %.1fs on GET %s/v1/agents/{%s}/prompt\n",
		r.Concurrency, r.DurationSeconds, r.Gateway, strings.Join(r.Agents, ","))
	var codes []string
	for _, c := range slices.Sorted(maps.Keys(r.StatusCodes)) {
		codes = append(codes, fmt.Sprintf("%s×%d", c, r.StatusCodes[c]))
	}
	fmt.Fprintf(w, "  requests    %d (%s)\n", r.Requests, strings.Join(codes, ", "))
	fmt.Fprintf(w, "  errors      %d (non-200 %d, transport %d)\n", r.Errors, r.Non200, r.TransportErrors)
	if r.FirstError != "" {
		fmt.Fprintf(w, "  first error %s\n", r.FirstError)
	}
	fmt.Fprintf(w, "  throughput  %.1f req/s\n", r.Throughput)
	fmt.Fprintf(w, "  latency     %s\n", r.Latency)
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

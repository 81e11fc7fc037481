package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// report prints a progress line every second.
func (f *fleet) report() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	announced := false
	for {
		select {
		case <-f.done:
			return
		case <-t.C:
		}
		el := time.Since(f.start).Round(time.Second)
		fmt.Fprintf(f.progress, "fleet %s: connected %d/%d (ready %d, launched %d) | facts sent %d acked %d | interest evts %d | churned %d | errors %d\n",
			el, f.connected.Load(), f.opt.n, f.ready.Load(), f.launched.Load(), f.factsSent.Load(), f.factsAcked.Load(),
			f.interestEvts.Load(), f.churned.Load(), f.errs.total())
		if up := f.allUpNanos.Load(); up != 0 && !announced {
			announced = true
			fmt.Fprintf(f.progress, "fleet: all %d nodes connected and reported facts in %s\n", f.opt.n, fmtDur(time.Duration(up)))
		}
	}
}

// writeReadyFile writes opt.readyFile once every node is ready and the
// probe (if any) finished.
func (f *fleet) writeReadyFile() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-f.done:
			return
		case <-t.C:
		}
		if f.allUpNanos.Load() != 0 && (f.opt.probeAgent == "" || f.probeDone.Load()) {
			msg := fmt.Sprintf("{\"nodes\": %d, \"allConnectedSeconds\": %.3f}\n", f.opt.n, time.Duration(f.allUpNanos.Load()).Seconds())
			if err := os.WriteFile(f.opt.readyFile, []byte(msg), 0o644); err != nil {
				f.abort(fmt.Errorf("--ready-file: %w", err))
			}
			return
		}
	}
}

// errorCounts counts errors by kind and keeps the first message of each.
type errorCounts struct {
	mu     sync.Mutex
	counts map[string]int64
	firsts map[string]string
	order  []string
}

func (e *errorCounts) add(kind, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts, e.firsts = map[string]int64{}, map[string]string{}
	}
	if _, ok := e.counts[kind]; !ok {
		e.firsts[kind] = msg
		e.order = append(e.order, kind)
	}
	e.counts[kind]++
}

func (e *errorCounts) total() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var t int64
	for _, c := range e.counts {
		t += c
	}
	return t
}

// first returns the first error seen, with its kind.
func (e *errorCounts) first() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.order) == 0 {
		return "none"
	}
	return e.order[0] + ": " + e.firsts[e.order[0]]
}

// errorSummary is one kind of error in the summary.
type errorSummary struct {
	Kind  string `json:"kind"`
	Count int64  `json:"count"`
	First string `json:"first"`
}

func (e *errorCounts) list() []errorSummary {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []errorSummary{}
	for _, k := range e.order {
		out = append(out, errorSummary{k, e.counts[k], e.firsts[k]})
	}
	return out
}

// nodesSummary is the result of `nodes`, printed at the end.
type nodesSummary struct {
	Gateway string `json:"gateway"` // the first of Gateways: the probe's
	// Gateways is --gateway's list; node i connected to Gateways[i mod
	// its length].
	Gateways []string `json:"gateways"`
	// PerGateway counts, per gateway in Gateways' order, the nodes that
	// connected there at least once.
	PerGateway          []gatewayCount `json:"perGateway"`
	Nodes               int            `json:"nodes"`
	Mix                 string         `json:"mix"`
	Profiles            map[string]int `json:"profiles"`
	SourceAddresses     int            `json:"sourceAddresses"`
	FileLimitAtStart    uint64         `json:"rlimitNofileAtStart"` // as the Go runtime left it
	FileLimit           uint64         `json:"rlimitNofile"`
	FileLimitMax        uint64         `json:"rlimitNofileMax"`
	RanSeconds          float64        `json:"ranSeconds"`
	AllConnectedSeconds *float64       `json:"allConnectedSeconds"` // null: never all up
	ReadyAtStop         int64          `json:"readyAtStop"`
	Dials               int64          `json:"dials"`
	Connects            int64          `json:"connects"`
	ConnectLatency      latencyStats   `json:"connectLatency"`
	FactsSent           int64          `json:"factsSent"`
	FactsAcked          int64          `json:"factsAcked"`
	InterestEvents      int64          `json:"interestEvents"`
	Churned             int64          `json:"churned"`
	ChurnReconnects     int64          `json:"churnReconnects"`
	Errors              int64          `json:"errors"`
	ErrorKinds          []errorSummary `json:"errorKinds"`
	StopSeconds         float64        `json:"stopSeconds"`
	Stuck               int            `json:"stuck"`
	Probe               *probeResult   `json:"probe,omitempty"`
}

// gatewayCount is one gateway's line of nodesSummary.PerGateway.
type gatewayCount struct {
	Gateway   string `json:"gateway"`
	Connected int    `json:"connected"`
}

func (f *fleet) summary(stopTook time.Duration, stuck int) *nodesSummary {
	s := &nodesSummary{
		Gateway: f.opt.gateways[0].base.String(), Nodes: f.opt.n, Mix: f.opt.mixName, Profiles: map[string]int{},
		SourceAddresses: max(1, len(f.opt.localIPs)), FileLimitAtStart: f.limit.start, FileLimit: f.limit.cur, FileLimitMax: f.limit.max,
		RanSeconds:  time.Since(f.start).Seconds() - stopTook.Seconds(),
		ReadyAtStop: f.readyAtStop, Dials: f.dials.Load(), Connects: f.connects.Load(),
		FactsSent: f.factsSent.Load(), FactsAcked: f.factsAcked.Load(), InterestEvents: f.interestEvts.Load(),
		Churned: f.churned.Load(), ChurnReconnects: f.churnReconnects.Load(),
		Errors: f.errs.total(), ErrorKinds: f.errs.list(), StopSeconds: stopTook.Seconds(), Stuck: stuck,
		Probe: f.probe,
	}
	for i := range f.opt.n {
		s.Profiles[f.opt.mix.node(i).prof.Name]++
	}
	for _, g := range f.opt.gateways {
		s.Gateways = append(s.Gateways, g.base.String())
		s.PerGateway = append(s.PerGateway, gatewayCount{Gateway: g.base.String()})
	}
	for i := range f.nodes {
		if f.nodes[i].everUp.Load() {
			s.PerGateway[i%len(f.opt.gateways)].Connected++
		}
	}
	if up := f.allUpNanos.Load(); up != 0 {
		v := time.Duration(up).Seconds()
		s.AllConnectedSeconds = &v
	}
	f.connLatMu.Lock()
	s.ConnectLatency = summarize(f.connLat)
	f.connLatMu.Unlock()
	return s
}

func (s *nodesSummary) print(w io.Writer) {
	var profs []string
	for _, name := range slices.Sorted(maps.Keys(s.Profiles)) {
		profs = append(profs, fmt.Sprintf("%s %d", name, s.Profiles[name]))
	}
	fmt.Fprintf(w, "skillgate-fleet nodes: %d nodes against %s for %.1fs (mix %s: %s)\n", s.Nodes, strings.Join(s.Gateways, ","), s.RanSeconds, s.Mix, strings.Join(profs, ", "))
	if len(s.PerGateway) > 1 {
		var per []string
		for _, g := range s.PerGateway {
			per = append(per, fmt.Sprintf("%s %d", g.Gateway, g.Connected))
		}
		fmt.Fprintf(w, "  per gateway        node i on gateway i mod %d; connected at least once: %s\n", len(s.PerGateway), strings.Join(per, ", "))
	}
	fmt.Fprintf(w, "  RLIMIT_NOFILE      %d (hard %d; %d as the Go runtime left it); %d source addresses\n",
		s.FileLimit, s.FileLimitMax, s.FileLimitAtStart, s.SourceAddresses)
	if s.AllConnectedSeconds != nil {
		fmt.Fprintf(w, "  all connected in   %.2fs\n", *s.AllConnectedSeconds)
	} else {
		fmt.Fprintf(w, "  all connected in   never (%d ready when stopping)\n", s.ReadyAtStop)
	}
	fmt.Fprintf(w, "  connects           %d of %d dials; latency (dial → connect answer) %s\n", s.Connects, s.Dials, s.ConnectLatency)
	fmt.Fprintf(w, "  facts.update       sent %d, acked %d; interest events %d\n", s.FactsSent, s.FactsAcked, s.InterestEvents)
	fmt.Fprintf(w, "  churn              %d disconnects, %d reconnects\n", s.Churned, s.ChurnReconnects)
	fmt.Fprintf(w, "  errors             %d\n", s.Errors)
	for _, e := range s.ErrorKinds {
		fmt.Fprintf(w, "    %-16s %d, first: %s\n", e.Kind, e.Count, e.First)
	}
	fmt.Fprintf(w, "  stop               closed with 1001 in %.2fs", s.StopSeconds)
	if s.Stuck > 0 {
		fmt.Fprintf(w, "; %d connections did not close in time and were cut", s.Stuck)
	}
	fmt.Fprintln(w)
	if p := s.Probe; p != nil {
		fmt.Fprintf(w, "  probe (agent %s)  %d runs: connect → prompt %s; disconnect → gone %s\n", p.Agent, p.Runs, p.Appear, p.Gone)
	}
}

// fmtDur rounds a duration for progress lines.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

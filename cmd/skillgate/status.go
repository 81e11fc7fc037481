package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skillgate/skillgate/api"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
)

// statusNode is one node of GET /v1/nodes, as the gateway writes it.
type statusNode = api.Node

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate status", stderr)
	gw := fs.String("gateway", "", "gateway base URL, e.g. http://127.0.0.1:7780")
	agent := fs.String("agent", "", "also show this agent's skills, eligible or not, with reasons")
	govern := fs.Bool("governance", false, "also show the governance review queue: every skill in quarantine or block, with its digest and findings")
	asJSON := fs.Bool("json", false, "print JSON")
	caFile := fs.String("ca-file", "", "PEM `FILE` of the CA certificates that verify an https:// gateway (default: the system's roots)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("unexpected argument %q", pos[0])
	}
	base, err := gatewayFlag(*gw, "set "+cli.AgentTokenEnv)
	if err != nil {
		return err
	}
	if *agent != "" {
		if err := skill.ValidateID(*agent); err != nil {
			return cli.Usagef("--agent: agent id %v", err)
		}
	}
	tr, err := gatewayTransport(base, *caFile)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: tr}
	st, err := readStatus(ctx, client, base.String(), *agent, *govern)
	if err != nil {
		return withCAHint(err, *caFile)
	}
	// A gateway that is not ready is a failed status (exit 1), after
	// everything it could say was printed; stderr says why in one line,
	// for a script that keeps only that.
	var notReady error
	if st.ready != nil && !st.ready.Ready {
		fmt.Fprintf(stderr, "skillgate status: gateway %s is not ready: %s\n", cli.Printable(base.String()), cli.Printable(notReadyWhy(st.ready)))
		notReady = cli.ExitError{Code: 1}
	}
	if *asJSON {
		if err := st.writeJSON(stdout); err != nil {
			return err
		}
		return notReady
	}
	st.print(stdout, base.String(), *agent, *govern)
	return notReady
}

// gatewayStatus is what status reads from a gateway.
type gatewayStatus struct {
	ready  *api.Ready // nil: /readyz could not be read
	loaded bool       // the gateway has read its store (or does not say)
	nodes  []statusNode
	// report is the agent's, when asked for and evaluated; unloaded says
	// why the agent was not evaluated (the gateway's 503 answer).
	report   *report.Report
	unloaded string
	queue    *gateway.GovernanceQueue // when asked for and loaded
}

// readStatus reads the gateway at base: readiness, every page of the
// nodes, and the agent's report and the governance queue when asked for.
func readStatus(ctx context.Context, client *http.Client, base, agent string, govern bool) (*gatewayStatus, error) {
	st := new(gatewayStatus)
	// Readiness first: a gateway that never loaded its store has no skill
	// to report, and an empty report would read as "0 of 0 skills".
	st.ready = getReady(ctx, client, base+"/readyz")
	st.loaded = st.ready == nil || st.ready.Loaded == nil || *st.ready.Loaded
	nodesURL, _ := url.Parse(base + "/v1/nodes")
	// Every page: the gateway answers at most ?limit= nodes (1,000 by
	// default) and a "next" cursor for the rest.
	notFound := " (is --gateway the base URL of a skillgate gateway?)"
	err := followNodePages(ctx, client, nodesURL, notFound, func(r io.Reader) (string, error) {
		var page api.NodesPage
		if err := json.NewDecoder(r).Decode(&page); err != nil {
			return "", fmt.Errorf("unexpected answer: %w", err)
		}
		st.nodes = append(st.nodes, page.Nodes...)
		return page.Next, nil
	})
	if err != nil {
		return nil, err
	}
	if st.nodes == nil {
		st.nodes = []statusNode{}
	}
	if agent != "" {
		st.report = new(report.Report)
		u := base + "/v1/agents/" + url.PathEscape(agent) + "/skills"
		if err := getJSON(ctx, client, u, st.report); err != nil {
			// Not loaded: the gateway's answer names the cause, with the
			// endpoint /readyz leaves out.
			var se *statusError
			if st.loaded || !errors.As(err, &se) || se.code != http.StatusServiceUnavailable {
				return nil, err
			}
			st.report, st.unloaded = nil, se.msg
		}
	}
	if govern && st.loaded {
		st.queue = new(gateway.GovernanceQueue)
		if err := getJSON(ctx, client, base+"/v1/governance", st.queue); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// writeJSON prints the status as status --json does.
func (st *gatewayStatus) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	out := map[string]any{"nodes": st.nodes, "agent": st.report}
	if st.queue != nil {
		out["governance"] = st.queue
	}
	if st.ready != nil {
		out["ready"] = st.ready
	}
	if st.unloaded != "" {
		out["agentError"] = st.unloaded
	}
	return enc.Encode(out)
}

// print prints the status for a terminal. Everything comes from the
// gateway, and much of it from nodes: values pass through cli.Printable
// so that none can drive the terminal.
func (st *gatewayStatus) print(w io.Writer, base, agent string, govern bool) {
	if st.ready != nil && !st.ready.Ready {
		printNotReady(w, base, st.ready)
	}
	fmt.Fprintf(w, "%d nodes connected to %s\n\n", len(st.nodes), cli.Printable(base))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tREPLICA\tOS\tROLES\tBINS PRESENT\tENV\tFACTS")
	for _, n := range st.nodes {
		var bins []string
		for b, ok := range n.HostBinStatus {
			if ok {
				bins = append(bins, b)
			}
		}
		facts := "not reported yet (not counted)"
		if n.FactsAt != nil {
			facts = n.FactsAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cli.Printable(n.ID), cli.Printable(n.Replica), cli.Printable(n.OS), cli.Printable(strings.Join(n.Roles, ",")),
			cli.Printable(joinSorted(bins)), cli.Printable(strings.Join(n.Env, ",")), facts)
	}
	tw.Flush()
	if st.report != nil {
		fmt.Fprintln(w)
		printReport(w, st.report, len(st.nodes))
		printClosest(w, st.report, st.nodes)
	}
	if st.unloaded != "" {
		fmt.Fprintf(w, "\nagent %s: not evaluated: %s\n", cli.Printable(agent), cli.Printable(st.unloaded))
	}
	if govern && !st.loaded {
		fmt.Fprintln(w, "\ngovernance: not evaluated: the gateway has not loaded its store")
	}
	if st.queue != nil {
		fmt.Fprintln(w)
		printGovernance(w, st.queue)
	}
}

// getReady reads GET /readyz (200 ready, 503 not), or returns nil when it
// cannot be read or is not a skillgate answer: readiness is extra, and the
// requests after it say what is wrong with the gateway's address.
func getReady(ctx context.Context, client *http.Client, u string) *api.Ready {
	resp, err := agentGet(ctx, client, u)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return nil
	}
	// Ready as a pointer: an answer without it is not a skillgate
	// gateway's. (Loaded is one already: a gateway that predates it leaves
	// it out.)
	var raw struct {
		api.Ready
		IsReady *bool `json:"ready"` // shadows Ready.Ready
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&raw) != nil || raw.IsReady == nil {
		return nil
	}
	a := raw.Ready
	a.Ready = *raw.IsReady
	return &a
}

// notReadyWhy says why the gateway is not ready: its error, else its
// cluster's.
func notReadyWhy(r *api.Ready) string {
	switch {
	case r.Error != "":
		return r.Error
	case r.Cluster != "" && r.Cluster != "ok":
		return "cluster: " + r.Cluster
	}
	return "see GET /readyz and the gateway log"
}

// printNotReady says why the gateway is not ready and what to check, in
// place of counts that would read as an empty store.
func printNotReady(w io.Writer, base string, r *api.Ready) {
	fmt.Fprintf(w, "gateway %s is NOT READY: %s\n", cli.Printable(base), cli.Printable(notReadyWhy(r)))
	if r.Hint != "" {
		fmt.Fprintf(w, "  check: %s\n", cli.Printable(r.Hint))
	}
	if r.Cluster != "" && r.Cluster != "ok" && r.Error != "" {
		fmt.Fprintf(w, "  cluster: %s\n", cli.Printable(r.Cluster))
	}
	fmt.Fprintln(w)
}

// printGovernance prints the review queue: each skill held, why, and its
// findings, with what to write to approve it.
func printGovernance(w io.Writer, q *gateway.GovernanceQueue) {
	fmt.Fprintf(w, "governance (%s): %s for review\n", cli.Printable(q.Mode), plural(len(q.Skills), "skill"))
	for _, it := range q.Skills {
		g := it.Governance
		state := "not enforced (observe)"
		switch {
		case it.Enforced:
			state = it.Reason
		case g != nil && g.Reason != "":
			state += ": " + g.Reason
		}
		fmt.Fprintf(w, "\n%s (%s)\n  %s\n", cli.Printable(it.Location), cli.Printable(it.Name), cli.Printable(state))
		if g == nil {
			continue // the operator's mode, without a scan
		}
		signed := ""
		if g.SignedBy != "" {
			signed = ", signed by " + cli.Printable(g.SignedBy)
		}
		fmt.Fprintf(w, "  mode %s, %s risk %d, verdict %s, digest %s%s\n", g.Mode, g.Band, g.Score, g.Verdict, g.Digest, signed)
		for _, f := range g.Findings {
			fmt.Fprintf(w, "    %-5s %-22s %s:%d  %s%s\n", f.Severity, f.Rule, cli.Printable(f.File), f.Line, cli.Printable(f.Excerpt), suppressedNote(f.Suppressed))
		}
		for _, sc := range g.Scanners {
			fmt.Fprintf(w, "  scanner %s: %s", cli.Printable(sc.Name), cli.Printable(sc.Verdict))
			if sc.Verdict != eligibility.ScannerPending {
				fmt.Fprintf(w, " (%d ms)", sc.Ms)
			}
			if sc.Error != "" {
				fmt.Fprintf(w, ": %s", cli.Printable(sc.Error))
			}
			fmt.Fprintln(w)
			for _, f := range sc.Findings {
				fmt.Fprintf(w, "    %-5s %-22s %s:%d  %s\n", cli.Printable(f.Severity), cli.Printable(sc.Name+":"+f.Rule), cli.Printable(f.File), f.Line, cli.Printable(f.Message))
			}
		}
		if !g.Approved && g.Mode != "allow" {
			fmt.Fprintf(w, "  to approve exactly this content: skillgate governance approve %s --config FILE --store STORE\n", cli.Printable(it.Dir))
			fmt.Fprintf(w, "    (it writes \"skills\": {\"entries\": {%q: {\"approve\": %q}}} into the gateway config)\n", cli.Printable(it.Dir), g.Digest)
		}
	}
}

// suppressedNote says that a finding is suppressed, why and until when.
func suppressedNote(s *governance.Suppressed) string {
	if s == nil {
		return ""
	}
	note := "  [suppressed: " + cli.Printable(s.Reason)
	if s.Expires != "" {
		note += ", until " + s.Expires
	}
	return note + "]"
}

// printClosest names, for each skill that failed on hosts, the connected
// nodes that lack the fewest of the failing requirements, and what they
// lack: where an operator would install the missing piece.
func printClosest(w io.Writer, rep *report.Report, nodes []statusNode) {
	header := false
	hosts := make([]*eligibility.Host, 0, len(nodes)) // the nodes that reported facts
	for i := range nodes {
		if nodes[i].FactsAt != nil {
			hosts = append(hosts, eligibility.NewHost(&nodes[i].HostFacts))
		}
	}
	for _, s := range rep.Skills {
		if s.Eligible || s.Stage != eligibility.StageRuntime {
			continue
		}
		req := map[string][]string{}
		for _, r := range s.Reasons {
			field, vals, ok := strings.Cut(strings.TrimPrefix(r, "requires "), ": ")
			if ok && strings.HasPrefix(r, "requires ") && field != "config" {
				req[field] = strings.Split(vals, ", ")
			}
		}
		if len(req) == 0 {
			continue
		}
		best, bestLack := []string{}, -1
		var bestWhat []string
		for _, h := range hosts {
			lack := lacking(h, req)
			switch {
			case bestLack < 0 || len(lack) < bestLack:
				best, bestLack, bestWhat = []string{h.ID}, len(lack), lack
			case len(lack) == bestLack:
				best = append(best, h.ID)
			}
		}
		if bestLack < 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nclosest hosts for skills that failed on hosts:")
			header = true
		}
		if len(best) > 3 {
			best = append(best[:3], fmt.Sprintf("and %d more", len(best)-3))
		}
		fmt.Fprintf(w, "  %s: %s (lacks %s)\n", cli.Printable(s.Name), cli.Printable(strings.Join(best, ", ")), cli.Printable(strings.Join(bestWhat, "; ")))
	}
}

// lacking lists which of the failing requirements a host does not meet, in
// pipeline order.
func lacking(h *eligibility.Host, req map[string][]string) []string {
	var out []string
	for _, field := range eligibility.Fields {
		if vals, ok := req[field]; ok {
			if lack, ok := eligibility.Lacking(h, field, vals); ok {
				out = append(out, lack)
			}
		}
	}
	return out
}

func joinSorted(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}

func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	resp, err := agentGet(ctx, client, u)
	if err != nil {
		return fmt.Errorf("%v (is the gateway running? start it with skillgate serve)", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusErr(u, resp, "")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: unexpected answer: %w", u, err)
	}
	return nil
}

// gatewayFlag reads --gateway, the base URL of a gateway, for the commands
// that call its API (status, mcp); tokenHint says where the token goes
// instead of the URL.
func gatewayFlag(gw, tokenHint string) (*url.URL, error) {
	if gw == "" {
		return nil, cli.Usagef("--gateway is required, e.g. --gateway http://127.0.0.1:7780")
	}
	base, err := cli.ParseGateway(gw)
	if err != nil {
		var ge *cli.GatewayURLError
		if errors.As(err, &ge) && ge.Problem == cli.Credentials {
			return nil, cli.Usagef("--gateway: credentials in the URL are not supported (a command line shows in ps); %s", tokenHint)
		}
		return nil, cli.Usagef("--gateway: %v", err)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, cli.Usagef("--gateway: %q: give the gateway's base URL, without a query or fragment", gw)
	}
	return base, nil
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/r2store"
	"github.com/skillgate/skillgate/skill"
)

func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate eval", stderr)
	storeURL := fs.String("store", "", "skill store: a directory laid out like the bucket, or s3://BUCKET?endpoint=…&region=…")
	configPath := fs.String("config", "", "gateway config file (HuJSON)")
	hostsPath := fs.String("hosts", "", "host facts file: a JSON array of host facts")
	agent := fs.String("agent", "", "agent id whose view is evaluated")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return cli.Usagef("unexpected argument %q", pos[0])
	case *storeURL == "":
		return cli.Usagef("--store is required (a directory or s3://BUCKET?endpoint=…)")
	case *hostsPath == "":
		return cli.Usagef("--hosts is required (a JSON array of host facts; [] for none)")
	case *agent == "":
		return cli.Usagef("--agent is required")
	}
	if err := skill.ValidateID(*agent); err != nil {
		return cli.Usagef("--agent: agent id %v", err)
	}
	hosts, skipped, err := readHosts(*hostsPath)
	if err != nil {
		return err
	}
	for _, id := range skipped {
		fmt.Fprintf(stderr, "skillgate eval: node %s has not reported facts yet (factsAt is null); like the gateway, eval does not count it\n", cli.Printable(id))
	}
	root := map[string]any{}
	if *configPath != "" {
		// A file the gateway would refuse is refused here too.
		if root, _, err = gateway.LoadConfigFile(*configPath); err != nil {
			return fmt.Errorf("--config: %w", err)
		}
	}
	cfg, cfgDiags := eligibility.NewConfig(root, configLocation(*configPath))

	st, err := r2store.Open(ctx, *storeURL)
	if err != nil {
		return fmt.Errorf("--store: %w", err)
	}
	objs, diags, err := r2store.ListView(ctx, st, *agent)
	if err != nil {
		return fmt.Errorf("--store %s: %w", r2store.Redact(*storeURL), err)
	}
	skills, loadDiags, err := r2store.NewLoader(st).Load(ctx, objs)
	if err != nil {
		return fmt.Errorf("--store %s: %w", r2store.Redact(*storeURL), err)
	}
	diags = append(diags, loadDiags...)

	results := make([]eligibility.Result, len(skills))
	hs := eligibility.NewHosts(hosts)
	for i, s := range skills {
		p := eligibility.Prepare(s, cfg)
		results[i] = p.Evaluate(hs)
		diags = append(diags, s.Diagnostics...)
		diags = append(diags, p.Diagnostics()...)
	}
	diags = append(diags, cfgDiags...)
	if diags == nil {
		diags = []skill.Diagnostic{}
	}
	rep := eligibility.Report{
		Agent:       *agent,
		Skills:      eligibility.SkillReports(results),
		Prompt:      promptbuild.FromResults(results),
		Diagnostics: diags,
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	printReport(stdout, &rep, len(hosts))
	return nil
}

func configLocation(path string) string {
	if path == "" {
		return "config"
	}
	return path
}

// readHosts reads a host-facts file and validates every host, so that eval
// sees exactly what the gateway would accept from nodes.
func readHosts(path string) (hosts []protocol.HostFacts, skipped []string, err error) {
	// A JSON array of host facts; the answer of GET /v1/nodes ({"nodes":
	// […]}) is accepted too, so a live fleet can be replayed offline.
	var raw json.RawMessage
	if err := gateway.ReadHuJSONFile(path, &raw); err != nil {
		return nil, nil, fmt.Errorf("--hosts: %w", err)
	}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && trimmed[0] == '{' {
		var nodes struct {
			Nodes *[]struct {
				protocol.HostFacts
				FactsAt json.RawMessage `json:"factsAt"`
			} `json:"nodes"`
		}
		err = json.Unmarshal(raw, &nodes)
		if err == nil && nodes.Nodes == nil {
			err = errors.New(`expected a JSON array of host facts, or an object with "nodes" (the answer of GET /v1/nodes)`)
		}
		if nodes.Nodes != nil {
			for _, n := range *nodes.Nodes {
				// As in the gateway: a node counts from its first facts.update.
				if string(n.FactsAt) == "null" {
					skipped = append(skipped, n.ID)
					continue
				}
				hosts = append(hosts, n.HostFacts)
			}
		}
	} else {
		err = json.Unmarshal(raw, &hosts)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--hosts: %s: %w", path, err)
	}
	seen := map[string]bool{}
	for i := range hosts {
		h := &hosts[i]
		if err := h.Validate(); err != nil {
			return nil, nil, fmt.Errorf("--hosts: %s: host %d (id %q): %w", path, i, h.ID, err)
		}
		if seen[h.ID] {
			return nil, nil, fmt.Errorf("--hosts: %s: host %d: id %q appears twice", path, i, h.ID)
		}
		seen[h.ID] = true
	}
	if hosts == nil {
		hosts = []protocol.HostFacts{}
	}
	return hosts, skipped, nil
}

func printReport(w io.Writer, rep *eligibility.Report, nhosts int) {
	offered := 0
	for _, s := range rep.Skills {
		if s.Eligible {
			offered++
		}
	}
	fmt.Fprintf(w, "agent %s: %d of %d skills offered, %d hosts\n\n", cli.Printable(rep.Agent), offered, len(rep.Skills), nhosts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SKILL\tSCOPE\tOFFERED\tWHY / HOSTS")
	for _, s := range rep.Skills {
		why := strings.Join(s.Hosts, ", ")
		switch {
		case !s.Eligible:
			why = s.Stage + ": " + strings.Join(s.Reasons, "; ")
		case s.Always:
			why = "always"
		case why == "":
			why = "any host"
		}
		offeredStr := "no"
		if s.Eligible {
			offeredStr = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cli.Printable(s.Name), cli.Printable(s.Scope), offeredStr, cli.Printable(why))
	}
	tw.Flush()
	if len(rep.Diagnostics) > 0 {
		fmt.Fprintf(w, "\n%d diagnostics:\n", len(rep.Diagnostics))
		for _, d := range rep.Diagnostics {
			fmt.Fprintf(w, "  %-5s %s: %s\n", cli.Printable(string(d.Level)), cli.Printable(d.Location), cli.Printable(d.Message))
		}
	}
}

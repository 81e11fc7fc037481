package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/scanners"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
	"golang.org/x/sync/errgroup"
)

func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate eval", stderr)
	storeURL := fs.String("store", "", "skill store: a directory laid out like the bucket, or s3://BUCKET?endpoint=…&region=…")
	configPath := fs.String("config", "", "gateway config file (HuJSON)")
	hostsPath := fs.String("hosts", "", "host facts: a file (a JSON array of host facts, or the answer of GET /v1/nodes), or the http(s) URL of GET /v1/nodes (every page is read)")
	agent := fs.String("agent", "", "agent id whose view is evaluated")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	maxChars := fs.Int("max-chars", 0, "prompt budget in bytes of the block (default: the config's, for this agent; gateway.prompt.maxChars, 30000)")
	caFile := fs.String("ca-file", "", "PEM `FILE` of the CA certificates that verify an https:// --hosts URL (default: the system's roots)")
	maxSkills := fs.Int("max-skills", 0, "most skills in the block (default: the config's, for this agent; gateway.prompt.maxSkills, 150)")
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
		return cli.Usagef("--hosts is required (a file holding a JSON array of host facts, [] for none, or the URL of GET /v1/nodes)")
	case *agent == "":
		return cli.Usagef("--agent is required")
	case *maxChars < 0:
		return cli.Usagef("--max-chars: must be a positive number of bytes")
	case *maxSkills < 0:
		return cli.Usagef("--max-skills: must be a positive number of skills")
	}
	if err := skill.ValidateID(*agent); err != nil {
		return cli.Usagef("--agent: agent id %v", err)
	}
	// The hosts are read while the skills load: at fleet scale each takes
	// about as long as the other. Errors keep their order, hosts first.
	type hostsResult struct {
		set *hostSet
		err error
	}
	hostsCtx, cancelHosts := context.WithCancel(ctx)
	defer cancelHosts()
	hostsDone := make(chan hostsResult, 1)
	go func() {
		set, err := readHosts(hostsCtx, *hostsPath, *caFile)
		hostsDone <- hostsResult{set, err}
	}()
	v, viewErr := loadView(ctx, *storeURL, *configPath, *agent)
	if viewErr != nil {
		cancelHosts() // a URL need not be read to the end
	} else {
		// The flags set the budget: eval is where an operator tries one.
		if *maxChars > 0 {
			v.prompt.MaxChars = *maxChars
		}
		if *maxSkills > 0 {
			v.prompt.MaxSkills = *maxSkills
		}
	}
	hr := <-hostsDone
	if hr.err != nil && (viewErr == nil || !errors.Is(hr.err, context.Canceled)) {
		return hr.err
	}
	hosts := hr.set
	if hosts != nil {
		for _, id := range hosts.skipped {
			fmt.Fprintf(stderr, "skillgate eval: node %s has not reported facts yet (factsAt is null); like the gateway, eval does not count it\n", cli.Printable(id))
		}
		if more := hosts.nskipped - len(hosts.skipped); more > 0 {
			fmt.Fprintf(stderr, "skillgate eval: and %d more nodes have not reported facts yet; eval does not count them either\n", more)
		}
	}
	if viewErr != nil {
		return viewErr
	}
	if *asJSON {
		_, err := evaluate(v, hosts, *agent, stdout)
		return err
	}
	rep, _ := evaluate(v, hosts, *agent, nil)
	printReport(stdout, &rep, hosts.index.Len())
	return nil
}

// evaluate builds the report of v, as GET /v1/agents/{id}/skills does
// (report.Build), through the gateway's host index: at 10,000 hosts a
// skill's host filter is a few word-wise ANDs instead of a pass over every
// host. The index is only read, so skills are evaluated on every core, in
// listing order; with a writer, the JSON answer is written to it
// meanwhile, skill by skill: listing and writing the hosts of each skill
// is most of the work.
func evaluate(v *evalView, hosts *hostSet, agent string, w io.Writer) (report.Report, error) {
	index := hosts.index
	prepared := make([]*eligibility.Prepared, len(v.skills))
	var rw *reportWriter
	var each func(*report.SkillReport)
	if w != nil && len(v.skills) > 0 {
		rw = newReportWriter(w)
		rw.head(agent)
		each = rw.skill
	}
	rep := report.Build(&report.View{
		Agent:  agent,
		Skills: v.skills,
		// The scan runs in Build's workers, as the gateway's runs on every
		// core; the policy decides whether there is one (off: none).
		Prepare: func(i int) *eligibility.Prepared {
			prepared[i] = eligibility.Prepare(v.skills[i], v.cfg.Governance.Scan(v.inputs[i]), v.cfg).ForAgent(v.cfg, agent)
			return prepared[i]
		},
		Diagnostics: v.diags,
		Budget:      promptbuild.Budget{MaxChars: v.prompt.MaxChars, MaxSkills: v.prompt.MaxSkills},
		Hosts:       v.prompt.Hosts,
		Shadowed: func(i int) *skill.Skill {
			if s := v.skills[i]; s.Scope == skill.ScopeAgent {
				return v.shadowed[s.Dir]
			}
			return nil
		},
	}, index, runtime.GOMAXPROCS(0), each)
	// Binaries the hosts were not asked yet: said once per skill that
	// reaches the host filter, after the other diagnostics.
	for i, p := range prepared {
		if p == nil || !p.FiltersHosts() || index.Len() == 0 {
			continue
		}
		if msg := hosts.unknownBins(&p.Req); msg != "" {
			rep.Diagnostics = append(rep.Diagnostics, skill.Diagnostic{Location: v.skills[i].Key, Level: skill.LevelWarn, Message: msg})
		}
	}
	switch {
	case rw != nil:
		return rep, rw.tail(rep.Prompt, rep.Diagnostics)
	case w != nil:
		return rep, writeReportJSON(w, &rep)
	}
	return rep, nil
}

// evalView is what eval evaluates besides the hosts.
type evalView struct {
	cfg    *eligibility.Config
	skills []*skill.Skill
	inputs []*governance.Input // skills[i]'s directory, for the governance scan
	diags  []skill.Diagnostic  // of the listing and loading
	prompt config.Prompt       // the agent's budget and host hint, as the gateway reads them
	// shadowed are the global skills the agent's own skills shadow, by
	// directory: only their SKILL.md is read (reports name their location
	// and version).
	shadowed map[string]*skill.Skill
}

// loadView reads the config file and the agent's view of the store.
func loadView(ctx context.Context, storeURL, configPath, agent string) (*evalView, error) {
	var f *config.File
	if configPath != "" {
		// A file the gateway would refuse is refused here too.
		var err error
		if f, err = gateway.ReadConfigFile(configPath); err != nil {
			return nil, configError(err)
		}
	}
	v := &evalView{prompt: f.Limits(agent)}
	v.cfg = eligibility.NewConfig(f)
	st, err := store.Open(ctx, storeURL)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	objs, shadowed, diags, err := catalog.ListViewShadows(ctx, st, agent)
	if err != nil {
		return nil, storeError(storeURL, err)
	}
	v.shadowed = make(map[string]*skill.Skill, len(shadowed))
	for _, o := range shadowed {
		sk := &skill.Skill{Ref: o.Ref} // its location, at least
		if o.Size <= store.MaxFileSize {
			if body, _, err := st.Get(ctx, o.Key, ""); err == nil {
				sk = skill.Parse(o.Ref, body)
			}
		}
		v.shadowed[o.Dir] = sk
	}
	loaded, loadDiags, err := catalog.NewLoader(st).Load(ctx, objs)
	if err != nil {
		return nil, storeError(storeURL, err)
	}
	for i := range loaded {
		v.skills = append(v.skills, loaded[i].Skill)
		v.inputs = append(v.inputs, &loaded[i].Input)
	}
	v.diags = append(diags, loadDiags...)
	if len(v.cfg.Scanners) > 0 && v.cfg.Governance.Mode != governance.Off {
		var concurrency int
		if f != nil {
			concurrency = f.Gateway.ScanConcurrency
		}
		v.cfg.ScanResult = runScanners(ctx, v.cfg.Scanners, concurrency, v.inputs)
	}
	return v, nil
}

// runScanners runs every external scanner on every content once, before
// the evaluation (eval has no poll to wait for), at most concurrency at
// once, and returns the answers as the governance stage asks for them.
func runScanners(ctx context.Context, list []scanners.Config, concurrency int, inputs []*governance.Input) func(string, *scanners.Config) (scanners.Result, bool) {
	type job struct {
		digest string
		in     *governance.Input
		sc     *scanners.Config
	}
	var jobs []job
	seen := map[string]bool{}
	for _, in := range inputs {
		d := governance.Digest(in)
		if seen[d] {
			continue
		}
		seen[d] = true
		for i := range list {
			jobs = append(jobs, job{d, in, &list[i]})
		}
	}
	results := make([]scanners.Result, len(jobs))
	var g errgroup.Group
	g.SetLimit(max(1, cmp.Or(concurrency, scanners.DefaultConcurrency)))
	for i, j := range jobs {
		g.Go(func() error {
			results[i] = scanners.Run(ctx, *j.sc, scanners.FilesOf(j.in))
			return nil
		})
	}
	g.Wait()
	done := make(map[string]scanners.Result, len(jobs))
	for i, j := range jobs {
		done[j.digest+"\x00"+j.sc.Fingerprint()] = results[i]
	}
	return func(digest string, sc *scanners.Config) (scanners.Result, bool) {
		r, ok := done[digest+"\x00"+sc.Fingerprint()]
		return r, ok
	}
}

// storeError words a failed read of the store: what failed and what to
// check when the store explained it (a missing bucket, refused or missing
// credentials), else the error as it came.
func storeError(storeURL string, err error) error {
	var se *store.Error
	if errors.As(err, &se) {
		return fmt.Errorf("--store %s: %s; check: %s", store.Redact(storeURL), se.Detail, se.Hint)
	}
	return fmt.Errorf("--store %s: %w", store.Redact(storeURL), err)
}

// printReport prints an eligibility report as a table, for eval and status.
// For a skill that failed on hosts, the WHY text ends with the host
// requirement that ruled out the last candidates and how many it ruled out.
// Its strings come from SKILL.md files, the config, nodes and the gateway,
// so each passes through cli.Printable.
func printReport(w io.Writer, rep *report.Report, nhosts int) {
	offered := 0
	for _, s := range rep.Skills {
		if s.Eligible {
			offered++
		}
	}
	fmt.Fprintf(w, "agent %s: %d of %d skills offered, %d hosts\n\n", cli.Printable(rep.Agent), offered, len(rep.Skills), nhosts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SKILL\tVERSION\tSCOPE\tGOVERNANCE\tOFFERED\tWHY / HOSTS")
	for _, s := range rep.Skills {
		why := strings.Join(s.Hosts, ", ")
		switch {
		case !s.Eligible:
			why = s.Stage + ": " + strings.Join(s.Reasons, "; ")
			if f, ok := s.Emptied(); ok {
				why += fmt.Sprintf(" (%s rules out the last %s)", f.Requirement, plural(f.Hosts, "host"))
			}
		case s.Always:
			why = "always"
		case why == "":
			why = "any host"
		}
		offeredStr := "no"
		if s.Eligible {
			offeredStr = "yes"
			if s.Prompt != "" && s.Prompt != "full" {
				offeredStr += " (" + s.Prompt + ")" // how it fits the prompt budget
			}
		}
		gov := "-" // not scanned
		if g := s.Governance; g != nil {
			gov = g.Mode + " " + g.Band
		}
		version := s.Version
		if version == "" {
			version = "-"
		}
		scope := s.Scope
		if s.Shadows != nil {
			scope += " (shadows " + versionOr(s.Shadows.Version, "global") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cli.Printable(s.Name), cli.Printable(version), cli.Printable(scope), cli.Printable(gov), offeredStr, cli.Printable(why))
	}
	tw.Flush()
	if len(rep.Diagnostics) > 0 {
		fmt.Fprintf(w, "\n%d diagnostics:\n", len(rep.Diagnostics))
		for _, d := range rep.Diagnostics {
			fmt.Fprintf(w, "  %-5s %s: %s\n", cli.Printable(string(d.Level)), cli.Printable(d.Location), cli.Printable(d.Message))
		}
	}
}

// versionOr returns "global v" for a shadowed global skill's version v,
// or none when it has none.
func versionOr(v, none string) string {
	if v == "" {
		return none
	}
	return "global " + v
}

// plural returns "1 host", "2 hosts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

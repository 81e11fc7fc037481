package govbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Meta is what a printed measure says about its run.
type Meta struct {
	Command string // the command line that produced it
	Date    time.Time
	Commit  string
	Machine string // Go version, platform, cores
}

// frac is "n / of (p %)", p to a tenth: the targets for benign sets are
// as fine as 0.5 %.
func frac(n, of int) string {
	if of == 0 {
		return fmt.Sprintf("%d / 0", n)
	}
	return fmt.Sprintf("%d / %d (%.1f %%)", n, of, 100*float64(n)/float64(of))
}

// ms is a duration in milliseconds, for tables.
func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// Text writes the sets' table, the per-rule tables and each set's held
// benign skills; verbose adds the malicious skills not held.
func Text(w io.Writer, results []*Result, verbose bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "set\tmalicious\theld\tblocked\tflagged\tbenign\theld\tblocked\tflagged\tfiles\tread\tMB\tload\tscan\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t\n", r.Name,
			r.Malicious.Skills, r.Malicious.Held, r.Malicious.Blocked, r.Malicious.Flagged,
			r.Benign.Skills, r.Benign.Held, r.Benign.Blocked, r.Benign.Flagged,
			r.Listed, r.Files, float64(r.Bytes)/1e6, ms(r.LoadTime), ms(r.ScanTime))
	}
	tw.Flush()

	fmt.Fprintln(w, "\nper rule, all sets: skills hit (a skill counts once per rule); err: with an error finding; held: of those hit;")
	fmt.Fprintln(w, "alone: benign skills with findings of this rule only (clean without it)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rule\tbenign\terr\theld\talone\tmalicious\terr\theld\t")
	for _, h := range TotalRules(results) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", h.Rule, h.Benign, h.BenignErr, h.BenignHeld, h.BenignAlone, h.Malicious, h.MaliciousErr, h.MaliciousHeld)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nper rule and set: benign / malicious skills hit")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "rule\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t", r.Name)
	}
	fmt.Fprintln(tw)
	for _, row := range ruleMatrix(results) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()

	for _, r := range results {
		if len(r.Kinds) > 0 {
			fmt.Fprintf(w, "\n%s: held / skills by kind: %s\n", r.Name, kindList(r.Kinds))
		}
		if len(r.BenignHeld) > 0 {
			fmt.Fprintf(w, "\n%s: benign held: %s\n", r.Name, heldList(r.BenignHeld))
		}
		if verbose && len(r.MaliciousMissed) > 0 {
			fmt.Fprintf(w, "\n%s: malicious not held: %s\n", r.Name, strings.Join(r.MaliciousMissed, ", "))
		}
	}
}

// ruleMatrix returns one row per rule (in TotalRules order): the rule,
// then "benign / malicious" skills hit in each set ("·" for none).
func ruleMatrix(results []*Result) [][]string {
	var rows [][]string
	for _, t := range TotalRules(results) {
		row := []string{t.Rule}
		for _, r := range results {
			cell := "·"
			for _, h := range r.Rules {
				if h.Rule == t.Rule {
					cell = fmt.Sprintf("%d / %d", h.Benign, h.Malicious)
				}
			}
			if r.Malicious.Skills == 0 && cell != "·" {
				cell = strings.TrimSuffix(cell, " / 0")
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

// kindList is "label category held/skills, …", one label after the other.
func kindList(ks []Kind) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s %s %d/%d", k.Label, k.Category, k.Held, k.Skills)
	}
	return strings.Join(parts, ", ")
}

// heldList is "name (mode: rule, rule), …".
func heldList(hs []Held) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%s (%s: %s)", h.Name, h.Mode, strings.Join(h.Rules, ", "))
	}
	return strings.Join(parts, "; ")
}

// Markdown writes the BENCHMARKS.md section: how it was run, the sets'
// table beside issue 20's figures, the per-rule tables and the held
// benign skills.
func Markdown(w io.Writer, results []*Result, m Meta) {
	fmt.Fprintf(w, "## Governance on labelled public sets (issue 20) (`%s` at `%s`, %s)\n\n", m.Command, m.Commit, m.Date.UTC().Format("2006-01-02"))
	fmt.Fprintf(w, "```sh\nmake govbench    # = scripts/govbench.sh: go run ./internal/govbench/cmd -markdown FILE, spliced in here\n```\n\n")
	fmt.Fprintf(w, "Each skill directory of the sets in `%s/` (and the OpenClaw skills of `testdata/`) is read as the\n", CorpusDir)
	fmt.Fprint(w, "gateway reads one (catalog's loader, within `governance.Budget`) and scanned with the default\n")
	fmt.Fprint(w, "options; the labels are the sets' own (`labels.csv`; the `benign-*` sets are benign throughout).\n")
	fmt.Fprint(w, "**held**: mode quarantine or block (not offered under `enforce`); **blocked**: mode block;\n")
	fmt.Fprint(w, "**flagged**: verdict flagged (warn findings only). `internal/govbench`'s test fails when a set\n")
	fmt.Fprintf(w, "falls behind the floors it declares. Load and scan times are one run's, on %s.\n\n", m.Machine)

	fmt.Fprintln(w, "| set | malicious held | malicious blocked / flagged | benign held | benign blocked | benign flagged | files read / listed | load / scan | today (issue 20) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range results {
		mal, malBF := "—", "—"
		if r.Malicious.Skills > 0 {
			mal = "**" + frac(r.Malicious.Held, r.Malicious.Skills) + "**"
			malBF = fmt.Sprintf("%d / %d", r.Malicious.Blocked, r.Malicious.Flagged)
		}
		fmt.Fprintf(w, "| %s | %s | %s | **%s** | %s | %s | %d / %d, %.1f MB | %s / %s | %s |\n", r.Name, mal, malBF,
			frac(r.Benign.Held, r.Benign.Skills), frac(r.Benign.Blocked, r.Benign.Skills), frac(r.Benign.Flagged, r.Benign.Skills),
			r.Files, r.Listed, float64(r.Bytes)/1e6, ms(r.LoadTime), ms(r.ScanTime), r.Today)
	}
	fmt.Fprint(w, "\nIssue 20's targets: malicious held ≥ 60 %; real benign collections ≤ 0.5 % blocked, ≤ 2 % held,\n")
	fmt.Fprint(w, "≤ 10 % flagged; the OpenClaw skills none held.\n\n")

	fmt.Fprint(w, "Per rule, all sets: skills hit (a skill counts once per rule), of them those with an error finding\n")
	fmt.Fprint(w, "of the rule (err) and those held; alone: benign skills whose findings are all of this rule (clean\n")
	fmt.Fprint(w, "without it). Sorted by benign hits.\n\n")
	fmt.Fprintln(w, "| rule | benign hit | err | held | alone | malicious hit | err | held |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, h := range TotalRules(results) {
		fmt.Fprintf(w, "| `%s` | %d | %d | %d | %d | %d | %d | %d |\n", h.Rule, h.Benign, h.BenignErr, h.BenignHeld, h.BenignAlone, h.Malicious, h.MaliciousErr, h.MaliciousHeld)
	}

	fmt.Fprint(w, "\nPer rule and set: benign / malicious skills hit (benign only for the benign sets).\n\n")
	fmt.Fprint(w, "| rule |")
	for _, r := range results {
		fmt.Fprintf(w, " %s |", r.Name)
	}
	fmt.Fprint(w, "\n|---|")
	for range results {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, row := range ruleMatrix(results) {
		fmt.Fprintf(w, "| `%s` | %s |\n", row[0], strings.Join(row[1:], " | "))
	}

	fmt.Fprint(w, "\nHeld / skills by kind, where a set's labels give one (its attack type or category):\n\n")
	for _, r := range results {
		if len(r.Kinds) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", r.Name, kindList(r.Kinds))
		}
	}

	fmt.Fprint(w, "\nBenign skills held (mode: the rules of their error findings, or of all findings when held by score):\n\n")
	for _, r := range results {
		if len(r.BenignHeld) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", r.Name, heldList(r.BenignHeld))
		}
	}
}

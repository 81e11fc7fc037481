package govbench

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/corpus"
)

// Outcomes counts the scanner's decisions on the skills of one label.
type Outcomes struct {
	Skills int
	// Held: not offered under the default enforce policy (mode
	// quarantine or block).
	Held int
	// Blocked: mode block (an error finding, or a critical score).
	Blocked int
	// Flagged: verdict flagged (warn findings, no error), whatever the
	// mode: offered by default, quarantined under flagged: "quarantine".
	Flagged int
	// Clean: verdict clean.
	Clean int
}

// RuleHits counts the skills of a set on which a rule fired: a skill
// counts once per rule however many findings it has, and once more in
// the Err column when one of them is an error (which blocks).
type RuleHits struct {
	Rule                      string
	Benign, BenignErr         int
	Malicious, MaliciousErr   int
	BenignHeld, MaliciousHeld int // of the skills hit, the held ones
	// BenignAlone: benign skills all of whose findings are of this rule,
	// which would be clean without it.
	BenignAlone int
}

// Kind is the outcomes of the skills of one label and category.
type Kind struct {
	Label, Category string
	Outcomes
}

// Held is a held skill of a set, for debugging: its name and what held it.
type Held struct {
	Name string
	Mode string
	// Rules are the rules of its error findings, or, when it has none
	// (held by its score), of all its findings.
	Rules []string
}

// Result is the measure of one set.
type Result struct {
	Spec
	Malicious, Benign Outcomes
	// Kinds, by label and category, when the Spec has a Category.
	Kinds []Kind
	// Rules, by rule id.
	Rules []RuleHits
	// BenignHeld are the held benign skills (blocked or quarantined);
	// MaliciousMissed the malicious skills not held. By name.
	BenignHeld      []Held
	MaliciousMissed []string
	// Listed: the files of the skill directories; Files: those read, and
	// their bytes (SKILL.md files included). The others are over a cap or
	// not regular files: the scan sees them as the gateway's does, as a
	// File with Err (one for all those past the file-count cap).
	Listed, Files int
	Bytes         int64
	// LoadTime is the time to list and read the set as the gateway does;
	// ScanTime the time governance.Scan took on all its skills, one after
	// the other.
	LoadTime, ScanTime time.Duration
}

// Measure reads the set sp under the module root modRoot with its labels,
// scans every skill with opts and counts the outcomes per label and per
// rule.
func Measure(modRoot string, sp Spec, opts governance.Options) (*Result, error) {
	setDir := filepath.Join(modRoot, filepath.FromSlash(sp.Dir))
	if rest, ok := strings.CutPrefix(sp.Dir, CorpusDir+"/"); ok {
		ext, err := corpus.External(modRoot)
		if err != nil {
			return nil, err
		}
		setDir = filepath.Join(ext, filepath.FromSlash(rest))
	}
	t0 := time.Now()
	skills, err := Labelled(sp, setDir)
	if err != nil {
		return nil, err
	}
	ins, listed, err := load(setDir, skills, sp.Exclude)
	if err != nil {
		return nil, err
	}
	res := &Result{Spec: sp, Listed: listed, LoadTime: time.Since(t0)}
	rules := map[string]*RuleHits{}
	kinds := map[[2]string]*Outcomes{}
	for i, s := range skills {
		in := ins[i]
		res.Files++
		res.Bytes += int64(len(in.SkillMD))
		for _, f := range in.Files {
			if f.Err == "" {
				res.Files++
				res.Bytes += int64(len(f.Data))
			}
		}
		t := time.Now()
		rep := governance.Scan(in, opts)
		res.ScanTime += time.Since(t)
		res.count(s, rep, rules)
		if sp.Category != "" {
			k := [2]string{s.Label, s.Category}
			if kinds[k] == nil {
				kinds[k] = &Outcomes{}
			}
			kinds[k].add(rep)
		}
	}
	if res.Malicious.Skills != sp.WantMalicious || res.Benign.Skills != sp.WantBenign {
		return nil, fmt.Errorf("set %s (%s): %d malicious and %d benign skills, want %d and %d (its PROVENANCE.md)",
			sp.Name, setDir, res.Malicious.Skills, res.Benign.Skills, sp.WantMalicious, sp.WantBenign)
	}
	for _, h := range rules {
		res.Rules = append(res.Rules, *h)
	}
	for k, o := range kinds {
		res.Kinds = append(res.Kinds, Kind{Label: k[0], Category: k[1], Outcomes: *o})
	}
	sort.Slice(res.Kinds, func(i, j int) bool {
		a, b := res.Kinds[i], res.Kinds[j]
		if a.Label != b.Label {
			return a.Label > b.Label // malicious first
		}
		return a.Category < b.Category
	})
	sort.Slice(res.Rules, func(i, j int) bool { return res.Rules[i].Rule < res.Rules[j].Rule })
	return res, nil
}

// add counts one skill's report.
func (o *Outcomes) add(rep governance.Report) {
	o.Skills++
	if rep.Mode == governance.ModeQuarantine || rep.Mode == governance.ModeBlock {
		o.Held++
	}
	if rep.Mode == governance.ModeBlock {
		o.Blocked++
	}
	switch rep.Verdict {
	case governance.VerdictFlagged:
		o.Flagged++
	case governance.VerdictClean:
		o.Clean++
	}
}

// count adds one scanned skill to res.
func (res *Result) count(s Skill, rep governance.Report, rules map[string]*RuleHits) {
	held := rep.Mode == governance.ModeQuarantine || rep.Mode == governance.ModeBlock
	if s.Label == Malicious {
		res.Malicious.add(rep)
	} else {
		res.Benign.add(rep)
	}
	switch {
	case s.Label == Benign && held:
		res.BenignHeld = append(res.BenignHeld, Held{Name: s.Name, Mode: rep.Mode, Rules: decisive(rep)})
	case s.Label == Malicious && !held:
		res.MaliciousMissed = append(res.MaliciousMissed, s.Name)
	}

	// A skill counts once per rule, and once per rule with an error.
	hit, errs := map[string]bool{}, map[string]bool{}
	for _, f := range rep.Findings {
		hit[f.Rule] = true
		if f.Severity == governance.SeverityError {
			errs[f.Rule] = true
		}
	}
	for r := range hit {
		h := rules[r]
		if h == nil {
			h = &RuleHits{Rule: r}
			rules[r] = h
		}
		if s.Label == Malicious {
			h.Malicious++
			if errs[r] {
				h.MaliciousErr++
			}
			if held {
				h.MaliciousHeld++
			}
		} else {
			h.Benign++
			if len(hit) == 1 {
				h.BenignAlone++
			}
			if errs[r] {
				h.BenignErr++
			}
			if held {
				h.BenignHeld++
			}
		}
	}
}

// decisive returns the rules that held a skill: those of its error
// findings, else (held by its score) those of all its findings.
func decisive(rep governance.Report) []string {
	set := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Severity == governance.SeverityError {
			set[f.Rule] = true
		}
	}
	if len(set) == 0 {
		for _, f := range rep.Findings {
			set[f.Rule] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// TotalRules sums the per-rule hits of several sets, sorted by benign
// hits (the false positives to work on first), then by rule.
func TotalRules(results []*Result) []RuleHits {
	sum := map[string]*RuleHits{}
	for _, r := range results {
		for _, h := range r.Rules {
			t := sum[h.Rule]
			if t == nil {
				t = &RuleHits{Rule: h.Rule}
				sum[h.Rule] = t
			}
			t.Benign += h.Benign
			t.BenignErr += h.BenignErr
			t.BenignHeld += h.BenignHeld
			t.BenignAlone += h.BenignAlone
			t.Malicious += h.Malicious
			t.MaliciousErr += h.MaliciousErr
			t.MaliciousHeld += h.MaliciousHeld
		}
	}
	out := make([]RuleHits, 0, len(sum))
	for _, t := range sum {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Benign != b.Benign {
			return a.Benign > b.Benign
		}
		return a.Rule < b.Rule
	})
	return out
}

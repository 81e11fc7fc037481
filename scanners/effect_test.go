package scanners

import (
	"reflect"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/governance"
)

func TestEffect(t *testing.T) {
	f := func(rule, sev, file string, line int) Finding {
		return Finding{Rule: rule, Severity: sev, File: file, Line: line, Message: "m"}
	}
	res := func(verdict string, fs ...Finding) Result {
		if fs == nil {
			fs = []Finding{}
		}
		return Result{Name: "yara", Verdict: verdict, Findings: fs}
	}
	// suppress suppresses the findings of these "<scanner>:<rule>" names.
	suppress := func(rules ...string) Suppressed {
		return func(rule, file string, line int) bool { return slices.Contains(rules, rule) }
	}
	tests := []struct {
		name       string
		r          Result
		failClosed bool
		sup        Suppressed
		want       Effect
	}{
		{"allow", res(VerdictAllow), true, nil, Effect{Mode: "allow"}},
		{"allow with info findings", res(VerdictAllow, f("x", "info", "a", 1)), true, nil, Effect{Mode: "allow"}},
		{"block names the first error finding", res(VerdictBlock, f("info1", "info", "SKILL.md", 2), f("c2", "error", "SKILL.md", 12), f("c3", "error", "a.md", 1)), true, nil,
			Effect{Mode: "block", Reason: "blocked by governance: scanner yara: c2 at SKILL.md:12"}},
		{"block with scanner severities names the first finding", res(VerdictBlock, f("r1", "high", "x/y.sh", 0), f("r2", "critical", "z", 3)), true, nil,
			Effect{Mode: "block", Reason: "blocked by governance: scanner yara: r1 at x/y.sh:0"}},
		{"warn quarantines", res(VerdictWarn, f("w", "warning", "a.md", 4)), true, nil,
			Effect{Mode: "quarantine", Reason: "quarantined by governance: scanner yara: w at a.md:4"}},
		{"a finding without a file", res(VerdictWarn, f("w", "", "", 0)), true, nil,
			Effect{Mode: "quarantine", Reason: "quarantined by governance: scanner yara: w"}},
		{"a verdict without findings", res(VerdictBlock), true, nil,
			Effect{Mode: "block", Reason: "blocked by governance: scanner yara"}},
		{"a verdict without findings is not suppressed", res(VerdictBlock), true, suppress("yara:unnamed"),
			Effect{Mode: "block", Reason: "blocked by governance: scanner yara"}},
		{"failure, fail-closed", Result{Name: "yara", Verdict: VerdictError, Findings: []Finding{}, Error: "timed out after 30s"}, true, nil,
			Effect{Mode: "quarantine", Reason: "quarantined by governance: scanner yara failed: timed out after 30s"}},
		{"failure, not fail-closed", Result{Name: "yara", Verdict: VerdictError, Findings: []Finding{}, Error: "exit status 2 and no answer"}, false, nil,
			Effect{Mode: "allow", Finding: &governance.Finding{Rule: "scanner-failed", Severity: "warn", Excerpt: "scanner yara failed: exit status 2 and no answer"}}},
		{"an unknown verdict is a failure", res("maybe"), true, nil,
			Effect{Mode: "quarantine", Reason: `quarantined by governance: scanner yara failed: unknown verdict "maybe"`}},

		{"every finding suppressed", res(VerdictBlock, f("c2", "error", "SKILL.md", 12), f("c3", "error", "a", 1)), true, suppress("yara:c2", "yara:c3"),
			Effect{Mode: "allow"}},
		{"the first suppressed: the next named", res(VerdictBlock, f("c2", "error", "SKILL.md", 12), f("c3", "error", "a", 1)), true, suppress("yara:c2"),
			Effect{Mode: "block", Reason: "blocked by governance: scanner yara: c3 at a:1"}},
		{"the error suppressed, a warning left: warn", res(VerdictBlock, f("e", "error", "a", 1), f("w", "warn", "b", 2), f("n", "info", "c", 3)), true, suppress("yara:e"),
			Effect{Mode: "quarantine", Reason: "quarantined by governance: scanner yara: w at b:2"}},
		{"only info left: allow", res(VerdictBlock, f("e", "error", "a", 1), f("n", "note", "c", 3)), true, suppress("yara:e"),
			Effect{Mode: "allow"}},
		{"an unknown severity left: the verdict stands", res(VerdictBlock, f("e", "error", "a", 1), f("h", "high", "c", 3)), true, suppress("yara:e"),
			Effect{Mode: "block", Reason: "blocked by governance: scanner yara: h at c:3"}},
		{"nothing suppressed: a block with only info findings stands", res(VerdictBlock, f("n", "info", "c", 3)), true, suppress("yara:other"),
			Effect{Mode: "block", Reason: "blocked by governance: scanner yara: n at c:3"}},
		{"a warn verdict is not raised by error findings", res(VerdictWarn, f("e", "error", "a", 1), f("e2", "error", "b", 1)), true, suppress("yara:e"),
			Effect{Mode: "quarantine", Reason: "quarantined by governance: scanner yara: e2 at b:1"}},
		{"suppression by file", res(VerdictBlock, f("e", "error", "a", 1), f("e", "error", "b", 1)), true,
			func(rule, file string, line int) bool { return rule == "yara:e" && file == "a" },
			Effect{Mode: "block", Reason: "blocked by governance: scanner yara: e at b:1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Effect(tc.failClosed, tc.sup); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v (finding %+v)\nwant %+v (finding %+v)", got, got.Finding, tc.want, tc.want.Finding)
			}
		})
	}
}

func TestStrictest(t *testing.T) {
	a := Effect{Mode: "quarantine", Reason: "quarantined by governance: high risk 60"}
	b := Effect{Mode: "quarantine", Reason: "quarantined by governance: scanner yara: r at a:1"}
	c := Effect{Mode: "block", Reason: "blocked by governance: scanner clam: r at b:2"}
	if got := Strictest(a, b); got != a {
		t.Errorf("tie: %+v", got)
	}
	if got := Strictest(a, b, c, Effect{Mode: "allow"}); got != c {
		t.Errorf("got %+v", got)
	}
	if got := Strictest(); got != (Effect{}) {
		t.Errorf("none: %+v", got)
	}
}

func TestRuleName(t *testing.T) {
	if got := RuleName("yara", "clawhavoc_c2"); got != "yara:clawhavoc_c2" {
		t.Errorf("got %q", got)
	}
}

func TestFilesOf(t *testing.T) {
	in := &governance.Input{SkillMD: []byte("md"), Files: []governance.File{
		{Path: "a/b.sh", Data: []byte("x")},
		{Path: "big.bin", Err: "over the 256 KiB file limit"},
		{Path: "empty", Data: nil},
	}, Skipped: []governance.File{{Path: "zzz"}}}
	want := map[string][]byte{"SKILL.md": []byte("md"), "a/b.sh": []byte("x"), "empty": nil}
	if got := FilesOf(in); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
}

package main

// External scanners as an operator runs them: a real `skillgate serve`
// with Debian's yara behind the shipped adapter (examples/scanners/yara),
// and scanners that time out, crash and print garbage, judged through
// /prompt, /skills and eval --json.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/report"
)

// scanYARA returns the YARA adapter (built once: testkit.Binaries) and the
// shipped rules' path.
func scanYARA(t *testing.T) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("yara"); err != nil {
		t.Fatalf("the yara program is needed (Debian's yara package): run make test-tools: %v", err)
	}
	bin := testkit.Binary(t, "scan-yara=examples/scanners/yara")
	rules, err := filepath.Abs("../../examples/scanners/yara/clawhavoc.yar")
	if err != nil {
		t.Fatal(err)
	}
	return bin, rules
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExternalScannersServe(t *testing.T) {
	bins := testBins(t)
	yara, rules := scanYARA(t)
	store := t.TempDir()
	for name, md := range map[string]string{
		"plain": "---\nname: plain\ndescription: Writes plain summaries of text.\n---\n# Plain\n\nSummarize the text the user gives in three sentences.\n",
		// Nothing holds it for the built-in scanner (a link is an info
		// finding); the YARA rule of ClawHavoc's installer host does.
		"helper": "---\nname: helper\ndescription: Sets up the helper.\n---\n# Helper\n\nSetup: https://install.app-distribution.net/setup/\n",
	} {
		os.MkdirAll(filepath.Join(store, "skills", name), 0o755)
		if err := os.WriteFile(filepath.Join(store, "skills", name, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	yaraCfg := fmt.Sprintf(`{"name": "yara", "exec": [%q, "-rules", %q, "{dir}"], "timeout": "60s"}`, yara, rules)
	cfg := filepath.Join(dir, "gateway.hujson")
	if err := os.WriteFile(cfg, []byte(`{"gateway": {"governance": {"scanners": [`+yaraCfg+`]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, gw := serveReview(t, bins, store, cfg)
	waitHTTP(t, func() (string, bool) { return inPrompt(base, "plain") }, gw)
	skills := func() map[string]report.SkillReport { return mainSkills(t, base) }
	var got map[string]report.SkillReport
	answered := func(s report.SkillReport) bool {
		return s.Governance != nil && len(s.Governance.Scanners) == 1 && s.Governance.Scanners[0].Verdict != "pending"
	}
	waitHTTP(t, func() (string, bool) {
		got = skills()
		return "the scanner's answers", answered(got["helper"]) && answered(got["plain"])
	}, gw)
	h := got["helper"]
	if h.Eligible || h.Stage != "governance" || len(h.Reasons) != 1 || h.Reasons[0] != "blocked by governance: scanner yara: clawhavoc_c2 at SKILL.md:7" {
		t.Errorf("helper: eligible %v stage %q reasons %q", h.Eligible, h.Stage, h.Reasons)
	}
	if g := h.Governance; g == nil || len(g.Scanners) != 1 || g.Scanners[0].Verdict != "block" || len(g.Scanners[0].Findings) == 0 {
		t.Errorf("helper's scanners: %+v", g)
	}
	if p := got["plain"]; !p.Eligible || p.Governance == nil || len(p.Governance.Scanners) != 1 || p.Governance.Scanners[0].Verdict != "allow" {
		t.Errorf("plain: %+v", p)
	}

	// eval --json runs the scanners itself and agrees.
	hostsFile := filepath.Join(dir, "hosts.json")
	os.WriteFile(hostsFile, []byte("[]"), 0o644)
	out := sg(t, bins, 0, "eval", "--store", store, "--config", cfg, "--hosts", hostsFile, "--agent", "main", "--json")
	var ev report.Report
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	for _, s := range ev.Skills {
		if s.Name == "helper" && strings.Join(s.Reasons, "|") != strings.Join(h.Reasons, "|") {
			t.Errorf("eval's reasons %q, the gateway's %q", s.Reasons, h.Reasons)
		}
	}

	// Three broken scanners, each fail-closed: every skill is held with
	// the failure named; one fail-open is a warn finding only.
	slow := script(t, dir, "slow.sh", "sleep 30 & sleep 30")
	crash := script(t, dir, "crash.sh", "echo oops >&2; exit 3")
	garbage := script(t, dir, "garbage.sh", "echo 'hello, not json'")
	for _, tc := range []struct{ name, exec, timeout, reason string }{
		{"slow", slow, "1s", "quarantined by governance: scanner slow failed: timed out after 1s"},
		{"crash", crash, "10s", "quarantined by governance: scanner crash failed: exit status 3 and no answer"},
		{"garbage", garbage, "10s", "quarantined by governance: scanner garbage failed: exit status 0 and an unreadable answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fmt.Sprintf(`{"gateway": {"governance": {"scanners": [{"name": %q, "exec": [%q, "{dir}"], "timeout": %q}]}}}`, tc.name, tc.exec, tc.timeout)
			if err := os.WriteFile(cfg, []byte(c), 0o600); err != nil {
				t.Fatal(err)
			}
			waitHTTP(t, func() (string, bool) {
				p := skills()["plain"]
				return strings.Join(p.Reasons, "|"), len(p.Reasons) == 1 && strings.HasPrefix(p.Reasons[0], tc.reason)
			}, gw)
			if _, ok := inPrompt(base, "plain"); ok {
				t.Error("plain is offered while its scanner fails")
			}
		})
	}
	c := fmt.Sprintf(`{"gateway": {"governance": {"scanners": [{"name": "crash", "exec": [%q], "failClosed": false}]}}}`, crash)
	if err := os.WriteFile(cfg, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	waitHTTP(t, func() (string, bool) {
		p := skills()["plain"]
		found := false
		for _, f := range p.Governance.Findings {
			found = found || (f.Rule == "scanner-failed" && f.Severity == "warn" && strings.Contains(f.Excerpt, "scanner crash failed: exit status 3"))
		}
		return fmt.Sprint(p.Governance.Findings), found && p.Eligible
	}, gw)
	if _, ok := inPrompt(base, "plain"); !ok {
		t.Error("a fail-open scanner's failure holds plain")
	}
}

// mainSkills is agent main's GET /skills, by skill name.
func mainSkills(t *testing.T, base string) map[string]report.SkillReport {
	t.Helper()
	code, body := httpGet(base + "/v1/agents/main/skills")
	if code != http.StatusOK {
		t.Fatalf("skills: %d %s", code, body)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]report.SkillReport{}
	for _, s := range r.Skills {
		out[s.Name] = s
	}
	return out
}

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
)

// checkPrintable fails when human output holds what a terminal would act
// on or hide: a byte below 0x20 other than \n and \t (ESC, BEL, CR…), DEL,
// a C1 control, an invisible character (U+202E…) or bytes that are not
// UTF-8. want lists escaped forms the output must show instead.
func checkPrintable(t *testing.T, what, out string, want ...string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s is not valid UTF-8:\n%q", what, out)
	}
	for i, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) ||
			unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			t.Errorf("%s holds %U at byte %d:\n%q", what, r, i, out)
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// TestStatusEscapesHostileValues: `skillgate status` against a gateway
// whose nodes and skills hold ESC, BEL and bidi overrides prints them as
// escapes, in the table, the agent report and an error from the gateway.
func TestStatusEscapesHostileValues(t *testing.T) {
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	nodes := map[string]any{"nodes": []statusNode{{
		HostFacts: protocol.HostFacts{
			ID: "evil\x1b[2J\x1b[H", OS: "linux\x07\x1b]0;pwned\x07", Roles: []string{"execution\r"},
			Capabilities: protocol.BaselineCapabilities, Env: []string{"TOKEN\x1b[8m"},
			HostBinStatus: map[string]bool{"gh\x07": false, "curl\u202e": true},
		},
		ConnectedAt: at, FactsAt: &at,
	}}}
	agentRep := report.Report{
		Agent: "main",
		Skills: []report.SkillReport{
			{Name: "evil\x1b[2J FAKE ALERT\x07", Scope: "global", Stage: eligibility.StageRuntime,
				Reasons: []string{"requires bins: gh\x07"}, Hosts: []string{}},
			{Name: "fine\u202egnp.exe", Scope: "agent\x1b", Eligible: true, Hosts: []string{"evil\x1b[2J\x1b[H"}},
		},
		Diagnostics: []skill.Diagnostic{{Location: "skills/x\x1b[31m/SKILL.md", Level: "warn\x07", Message: "it\u2028is\u200bfine\u009b"}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/nodes":
			json.NewEncoder(w).Encode(nodes)
		case "/v1/agents/main/skills":
			json.NewEncoder(w).Encode(agentRep)
		default:
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte(`{"error": "\u001b[2J\u001b[Hgateway says \u202ehello\u0007"}`))
		}
	}))
	defer srv.Close()

	out, errOut, code := runCmd(t, "status", "--gateway", srv.URL, "--agent", "main")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	checkPrintable(t, "status output", out,
		`evil\x1b[2J\x1b[H`, `linux\x07\x1b]0;pwned\x07`, `execution\r`, `curl\u202e`, `TOKEN\x1b[8m`, // nodes
		`evil\x1b[2J FAKE ALERT\x07`, `runtime: requires bins: gh\x07`, `fine\u202egnp.exe`, `agent\x1b`, // skills
		`warn\x07 skills/x\x1b[31m/SKILL.md: it\u2028is\u200bfine\u009b`,     // diagnostics
		`evil\x1b[2J FAKE ALERT\x07: evil\x1b[2J\x1b[H (lacks bins: gh\x07)`) // closest hosts
	checkPrintable(t, "status stderr", errOut)

	_, errOut, code = runCmd(t, "status", "--gateway", srv.URL, "--agent", "other")
	if code == 0 {
		t.Fatalf("exit 0 for a gateway error")
	}
	checkPrintable(t, "status error", errOut, `\x1b[2J\x1b[Hgateway says \u202ehello\x07`)
}

// TestEvalEscapesHostileSkill: the eval table and `skillgate validate`
// show a hostile SKILL.md's name, description, requirements and directory
// name as escapes.
func TestEvalEscapesHostileSkill(t *testing.T) {
	store := t.TempDir()
	mk := func(dir, content string) { testkit.WriteFile(t, store, "skills/"+dir+"/SKILL.md", content) }
	mk("evil", "---\n"+
		`name: "evil\e[2J\e[H\a FAKE ALERT \u202Egnp.exe"`+"\n"+
		`description: "desc \e]0;pwned\a \u202E reversed"`+"\n"+
		`metadata: {"openclaw": {"requires": {"bins": ["gh\u001b[31m"], "env": ["K\u202eEY"]}}}`+"\n"+
		"---\nbody\n")
	mk("quiet", "---\nname: \"quiet\\e[8m\"\n---\n\x1b[2J\u202ebody paragraph as the description\n")
	if runtime.GOOS != "windows" { // Windows refuses control characters in file names
		mk("dir\x1b[2J\u202e", "---\nname: d\ndescription: d\n---\n")
	}
	hostsFile := filepath.Join(t.TempDir(), "nodes.json")
	if err := os.WriteFile(hostsFile, []byte(`{"nodes": [
		{"id": "late\u001b[2J\u202e", "os": "linux", "roles": ["specialized"], "factsAt": null},
		{"id": "mac-1", "os": "macOS", "roles": ["specialized"], "factsAt": "2026-11-22T10:00:01Z"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}

	// The governance scanner holds both skills (an RLO in the name and in
	// the body); observe keeps them in the pipeline, so the requirements
	// stage shows the hostile bins too.
	observe := filepath.Join(t.TempDir(), "observe.hujson")
	if err := os.WriteFile(observe, []byte(`{"gateway": {"governance": {"mode": "observe"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "eval", "--store", store, "--hosts", hostsFile, "--agent", "main", "--config", observe)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	checkPrintable(t, "eval output", out, `evil\x1b[2J\x1b[H\x07 FAKE ALERT \u202egnp.exe`, `quiet\x1b[8m`, `gh\x1b[31m`)
	checkPrintable(t, "eval stderr", errOut, `late\x1b[2J\u202e`)
	if runtime.GOOS != "windows" && !strings.Contains(out, `skills/dir\x1b[2J\u202e/SKILL.md`) {
		t.Errorf("eval output lacks the hostile directory's diagnostic:\n%s", out)
	}

	// An error quoting the config file is escaped too.
	cfg := filepath.Join(t.TempDir(), "gateway.hujson")
	if err := os.WriteFile(cfg, []byte(`{"gateway": {"prompt": {"li\u001b[2J\u202esten": 1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCmd(t, "eval", "--store", store, "--hosts", hostsFile, "--agent", "main", "--config", cfg)
	if code != 2 {
		t.Errorf("bad config: exit %d, want 2", code)
	}
	checkPrintable(t, "eval error", errOut, `gateway.prompt.li\x1b[2J\u202esten: unknown setting`)

	out, errOut, _ = runCmd(t, "validate", store)
	checkPrintable(t, "validate output", out)
	checkPrintable(t, "validate stderr", errOut)
	if runtime.GOOS != "windows" && !strings.Contains(out, `dir\x1b[2J\u202e`) {
		t.Errorf("validate output lacks the hostile directory:\n%s", out)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/report"
)

// TestEvalFiltered: end to end through eval --json, each skill says how
// many hosts each of its host requirements rules out, in the pipeline's
// order; the table names the requirement that ruled out the last ones.
func TestEvalFiltered(t *testing.T) {
	store := t.TempDir()
	mk := func(dir, requires string) {
		p := filepath.Join(store, "skills", dir, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		md := "---\nname: " + dir + "\ndescription: d\n"
		if requires != "" {
			md += `metadata: {"gsv": {"requires": ` + requires + "}}\n"
		}
		if err := os.WriteFile(p, []byte(md+"---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("a-mac-gh", `{"bins": ["gh"], "os": ["macOS"]}`)
	mk("b-win", `{"os": ["win32"], "env": ["TOKEN"], "anyBins": ["x", "y"]}`)
	mk("c-plain", "")
	mk("d-config", `{"config": ["nope"], "env": ["TOKEN"]}`)
	// 7 linux hosts with gh, 4 darwin without gh, 2 darwin with gh;
	// the linux ones and one darwin one have TOKEN.
	var hosts []string
	add := func(n int, prefix, os, env, bins string) {
		for i := range n {
			hosts = append(hosts, fmt.Sprintf(`{"id": "%s-%d", "os": %q, "roles": ["specialized"], "env": [%s], "hostBinStatus": {%s}}`, prefix, i, os, env, bins))
		}
	}
	add(7, "lin", "linux", `"TOKEN"`, `"gh": true`)
	add(4, "mac", "darwin", ``, `"gh": false`)
	add(1, "macgh", "darwin", `"TOKEN"`, `"gh": true`)
	add(1, "macgh-notoken", "darwin", ``, `"gh": true`)
	hostsFile := filepath.Join(t.TempDir(), "hosts.json")
	if err := os.WriteFile(hostsFile, []byte("["+strings.Join(hosts, ",\n")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runCmd(t, "eval", "--store", store, "--hosts", hostsFile, "--agent", "main", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	f := func(req string, n int, vals ...string) eligibility.Filtered {
		return eligibility.Filtered{Requirement: req, Values: vals, Hosts: n}
	}
	want := map[string][]eligibility.Filtered{
		"a-mac-gh": {f("os", 7, "darwin"), f("bins", 4, "gh")},
		"b-win":    {f("os", 13, "windows"), f("env", 0, "TOKEN"), f("anyBins", 0, "x", "y")},
		"c-plain":  {},
		"d-config": {f("env", 5, "TOKEN")},
	}
	for _, s := range rep.Skills {
		if !reflect.DeepEqual(s.Filtered, want[s.Name]) {
			t.Errorf("%s: filtered %+v, want %+v", s.Name, s.Filtered, want[s.Name])
		}
	}
	if len(rep.Skills) != len(want) {
		t.Errorf("%d skills, want %d", len(rep.Skills), len(want))
	}
	// The member follows "hosts", as DESIGN.md shows it.
	if !strings.Contains(out, "\"hosts\": [],\n      \"filtered\": [\n        {\n          \"requirement\": \"os\",\n          \"values\": [\n            \"windows\"\n          ],\n          \"hosts\": 13\n        },") {
		t.Errorf("b-win's filtered is not written after hosts:\n%s", out)
	}

	out, errOut, code = runCmd(t, "eval", "--store", store, "--hosts", hostsFile, "--agent", "main")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, line := range []string{
		"b-win     -        global  allow low   no       runtime: requires os: windows; requires env: TOKEN; requires anyBins: x, y (os rules out the last 13 hosts)\n",
		"d-config  -        global  allow low   no       runtime: requires config: nope\n",
		"a-mac-gh  -        global  allow low   yes      macgh-0, macgh-notoken-0\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("table lacks %q:\n%s", line, out)
		}
	}
}

// TestStatusNamesTheLastFilter: skillgate status --agent shows, for a
// skill that failed on hosts, which requirement ruled out the last hosts.
func TestStatusNamesTheLastFilter(t *testing.T) {
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/nodes":
			w.Write([]byte(`{"nodes": [{"id": "lin-1", "os": "linux", "roles": ["specialized"], "factsAt": "2026-11-22T10:00:01Z", "hostBinStatus": {}}]}`))
		case "/v1/agents/main/skills":
			w.Write([]byte(`{"agent": "main", "skills": [
				{"name": "gh", "scope": "global", "eligible": false, "stage": "runtime", "reasons": ["requires bins: gh"], "hosts": [],
				 "filtered": [{"requirement": "os", "values": ["linux"], "hosts": 0}, {"requirement": "bins", "values": ["gh"], "hosts": 1}]},
				{"name": "one", "scope": "global", "eligible": false, "stage": "runtime", "reasons": ["requires os: darwin", "requires bins: gh"], "hosts": [],
				 "filtered": [{"requirement": "os", "values": ["darwin"], "hosts": 8412}, {"requirement": "bins", "values": ["gh"], "hosts": 0}]},
				{"name": "old", "scope": "global", "eligible": false, "stage": "runtime", "reasons": ["requires bins: gh"], "hosts": []}],
				"prompt": "", "diagnostics": []}`))
		}
	}))
	defer srv.Close()
	out, errOut, code := runCmd(t, "status", "--gateway", srv.URL, "--agent", "main")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, line := range []string{
		"gh     -        global  -           no       runtime: requires bins: gh (bins rules out the last 1 host)\n",
		"one    -        global  -           no       runtime: requires os: darwin; requires bins: gh (os rules out the last 8412 hosts)\n",
		"old    -        global  -           no       runtime: requires bins: gh\n", // a gateway without "filtered"
	} {
		if !strings.Contains(out, line) {
			t.Errorf("status lacks %q:\n%s", line, out)
		}
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConfigCheck: config check prints every problem of a file as the
// gateway would refuse it, with file:line:col, and exits 1; a good file
// (an OpenClaw config as it is) is "ok", exit 0; an unreadable one is a
// usage error.
func TestConfigCheck(t *testing.T) {
	good := writeTemp(t, `{
  // OpenClaw's config, with skillgate's settings in it
  "meta": {"lastTouchedVersion": "2026.6.1"},
  "gateway": {"port": 18789, "bind": "loopback", "prompt": {"maxSkills": 20}},
  "agents": {"defaults": {"skills": ["github"]}, "list": [{"id": "main", "skills": []}]},
  "skills": {"limits": {"maxSkillsPromptChars": 18000}, "entries": {"github": {"apiKey": "k", "enabled": true}}},
}`)
	out, errOut, code := runCmd(t, "config", "check", good)
	if code != 0 || out != good+": ok\n" || errOut != "" {
		t.Errorf("good file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	bad := writeTemp(t, "{\n  \"gateway\": {\"promt\": {}},\n  \"skills\": {\"entries\": {\"x\": {\"enabled\": \"no\"}}}\n}\n")
	out, errOut, code = runCmd(t, "config", "check", bad)
	want := bad + ":2:15: gateway.promt: unknown key; did you mean gateway.prompt? (unknown keys here are kept for requires.config, but not one this close to a known key)\n" +
		bad + ":3:32: skills.entries.x.enabled: must be true or false, got the string \"no\"\n" +
		bad + ": 2 problem(s); the gateway refuses this file\n"
	if code != 1 || out != want || errOut != "" {
		t.Errorf("bad file: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	// eval refuses the same file, naming the same problems.
	_, errOut, code = runCmd(t, "eval", "--store", bucket, "--hosts", hosts, "--agent", "main", "--config", bad)
	if code != 2 || !strings.HasPrefix(errOut, "skillgate eval: --config: "+bad+":2:15: gateway.promt: unknown key") ||
		!strings.Contains(errOut, "\nskillgate eval: --config: "+bad+":3:32: skills.entries.x.enabled") {
		t.Errorf("eval on the bad file: exit %d, %s", code, errOut)
	}
	for _, args := range [][]string{{"config", "check"}, {"config", "check", bad + ".missing"}, {"config"}, {"config", "frob"}, {"config", "schema", "x"}} {
		if _, errOut, code := runCmd(t, args...); code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

// TestConfigSchema: config schema prints one JSON Schema document that
// closes skillgate's own objects and leaves OpenClaw's open.
func TestConfigSchema(t *testing.T) {
	out, errOut, code := runCmd(t, "config", "schema")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s struct {
		Schema     string `json:"$schema"`
		Properties struct {
			Gateway struct {
				AdditionalProperties any `json:"additionalProperties"`
				Properties           struct {
					Prompt struct {
						AdditionalProperties any `json:"additionalProperties"`
					} `json:"prompt"`
				} `json:"properties"`
			} `json:"gateway"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if s.Schema != "https://json-schema.org/draft/2020-12/schema" || s.Properties.Gateway.AdditionalProperties != nil || s.Properties.Gateway.Properties.Prompt.AdditionalProperties != false {
		t.Errorf("schema: %+v", s)
	}
}

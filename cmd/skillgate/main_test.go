package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/version"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCmd runs one command line in-process, as the binary would.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// golden compares got with testdata/name (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	testkit.Golden(t, filepath.Join("testdata", name), got, *update)
}

const (
	bucket   = "../../testdata/bucket"
	hosts    = "../../testdata/hosts.json"
	gwConfig = "../../testdata/gateway.hujson"
)

func TestEvalGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"eval-main.golden.json", []string{"eval", "--store", bucket, "--config", gwConfig, "--hosts", hosts, "--agent", "main", "--json"}},
		{"eval-other.golden.json", []string{"eval", "--store", bucket, "--config", gwConfig, "--hosts", hosts, "--agent", "other", "--json"}},
		{"eval-nohosts.golden.json", []string{"eval", "--store", bucket, "--hosts", "testdata/no-hosts.json", "--agent", "main", "--json"}},
		{"eval-main.golden.txt", []string{"eval", "--store", bucket, "--config", gwConfig, "--hosts", hosts, "--agent", "main"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, errOut, code := runCmd(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, tt.golden, out)
		})
	}
}

func TestEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return testkit.WriteFile(t, dir, name, content) }
	noBaseline := write("nobase.json", `[{"id":"h","os":"linux","roles":["execution"],"capabilities":["shell.exec"]}]`)
	dup := write("dup.json", `[{"id":"h","os":"linux","roles":["specialized"]},{"id":"h","os":"linux","roles":["specialized"]}]`)
	notJSON := write("bad.json", `[{"id":`)
	badConfig := write("bad.hujson", `{"skills": [1,2]`)
	typoConfig := write("typo.hujson", `{"gateway": {"lsten": "127.0.0.1:1"}}`)
	tests := []struct {
		name string
		args []string
		want string // substring of stderr
	}{
		{"no store", []string{"eval", "--hosts", hosts, "--agent", "main"}, "--store is required"},
		{"no hosts", []string{"eval", "--store", bucket, "--agent", "main"}, "--hosts is required"},
		{"no agent", []string{"eval", "--store", bucket, "--hosts", hosts}, "--agent is required"},
		{"bad agent", []string{"eval", "--store", bucket, "--hosts", hosts, "--agent", "../x"}, `--agent: agent id "../x" contains a slash`},
		{"missing hosts file", []string{"eval", "--store", bucket, "--hosts", filepath.Join(dir, "nope.json"), "--agent", "main"}, "nope.json: no such file"},
		{"hosts not JSON", []string{"eval", "--store", bucket, "--hosts", notJSON, "--agent", "main"}, "bad.json: not valid JSON"},
		{"execution host without baseline", []string{"eval", "--store", bucket, "--hosts", noBaseline, "--agent", "main"},
			`host 0 (id "h"): capabilities: an execution host must have filesystem.list, filesystem.read, filesystem.write, shell.exec; missing filesystem.list, filesystem.read, filesystem.write`},
		{"duplicate host", []string{"eval", "--store", bucket, "--hosts", dup, "--agent", "main"}, `host 1: id "h" appears twice`},
		{"bad config", []string{"eval", "--store", bucket, "--hosts", hosts, "--config", badConfig, "--agent", "main"}, "--config: " + badConfig},
		{"gateway setting the gateway would refuse", []string{"eval", "--store", bucket, "--hosts", hosts, "--config", typoConfig, "--agent", "main"},
			"typo.hujson:1:14: gateway.lsten: unknown key; did you mean gateway.listen?"},
		{"bad store URL", []string{"eval", "--store", "s3://?endpoint=x", "--hosts", hosts, "--agent", "main"}, "--store"},
		{"unknown flag", []string{"eval", "--nope"}, "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCmd(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel, content string) string { return testkit.WriteFile(t, dir, rel, content) }
	good := mk("good/SKILL.md", "---\nname: good\ndescription: Fine.\n---\n")
	bad := mk("bad/SKILL.md", "---\nname: bad\ndescription: Wrong role.\nmetadata: {\"gsv\": {\"requires\": {\"hostRoles\": [\"gpu\"], \"bins\": \"gh\"}}}\n---\n")
	gsvOS := mk("gsvos/SKILL.md", "---\nname: gsvos\ndescription: os misplaced.\nmetadata: {\"gsv\": {\"os\": [\"linux\"]}}\n---\n")

	out, _, code := runCmd(t, "validate", good)
	if code != 0 || !strings.HasSuffix(out, "1 files checked: 0 errors, 0 warnings\n") {
		t.Errorf("good: exit %d, output %q", code, out)
	}
	out, _, code = runCmd(t, "validate", bad, good)
	if code != 1 {
		t.Errorf("bad: exit %d, want 1", code)
	}
	for _, want := range []string{
		bad + `: error: requires.bins: must be a list of strings, got a string; the skill is not offered until this is fixed`,
		bad + `: error: requires.hostRoles: unknown host role "gpu" (valid: execution, specialized); the skill is not offered until this is fixed`,
		"2 files checked: 2 errors, 0 warnings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runCmd(t, "validate", "--json", gsvOS)
	if code != 0 || !strings.Contains(out, `"level": "warn"`) || !strings.Contains(out, "gsv") {
		t.Errorf("gsv os: exit %d, output %s", code, out)
	}
	// A whole store directory: the corpus of real skills has one error, the
	// skill without frontmatter (the reference validator's only complaint
	// about it besides JSON-style flow mappings, which YAML allows).
	out, _, code = runCmd(t, "validate", "../../testdata/openclaw-skills")
	canvas := "../../testdata/openclaw-skills/canvas/SKILL.md: error: no frontmatter: "
	if code != 1 || strings.Count(out, ": error: ") != 1 || !strings.Contains(out, "\n"+canvas) {
		t.Errorf("corpus: exit %d, want 1 and one error %q:\n%s", code, canvas, out)
	}
	out, _, code = runCmd(t, "validate", filepath.Join(dir, "missing.md"))
	if want := filepath.Join(dir, "missing.md") + ": error: path does not exist: "; code != 1 || !strings.HasPrefix(out, want) {
		t.Errorf("missing file: exit %d, %q; want 1 and %q", code, out, want)
	}
}

// TestEvalHostsFromNodes: the answer of GET /v1/nodes is a valid --hosts
// file, so a live fleet can be replayed offline with the same result.
func TestEvalHostsFromNodes(t *testing.T) {
	arr, err := os.ReadFile(hosts)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "nodes.json")
	nodes := `{"nodes": ` + strings.Replace(string(arr), `"id": "mac-1",`, `"id": "mac-1", "connectedAt": "2026-11-22T10:00:00Z", "factsAt": "2026-11-22T10:00:01Z",`, 1) + `}`
	if err := os.WriteFile(p, []byte(nodes), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "eval", "--store", bucket, "--config", gwConfig, "--hosts", p, "--agent", "main", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// A node lists in hostBinStatus every binary it was asked: these hosts,
	// which list a few, were not asked the others. eval says so, skill by
	// skill; the rest is the answer of the same hosts as a file.
	golden(t, "eval-main-nodes.golden.json", out)
	want, err := os.ReadFile("testdata/eval-main.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var got, fromFile map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &fromFile); err != nil {
		t.Fatal(err)
	}
	var kept, unknown []any
	for _, d := range got["diagnostics"].([]any) {
		if strings.HasPrefix(d.(map[string]any)["message"].(string), unknownBinsPrefix) {
			unknown = append(unknown, d)
		} else {
			kept = append(kept, d)
		}
	}
	got["diagnostics"] = kept
	if !reflect.DeepEqual(got, fromFile) {
		t.Error("eval of the hosts as GET /v1/nodes differs from eval of the same hosts as a file by more than the diagnostics of binaries not asked")
	}
	if len(unknown) == 0 {
		t.Error("no diagnostic of binaries the hosts were not asked")
	}

	if err := os.WriteFile(p, []byte(`{"hosts": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCmd(t, "eval", "--store", bucket, "--hosts", p, "--agent", "main")
	if code != 2 || !strings.Contains(errOut, `expected a JSON array of host facts, or an object with "nodes"`) {
		t.Errorf("object without nodes: exit %d, %q", code, errOut)
	}
}

// TestServeRefusesExposureWithoutTokens: without tokens the gateway only
// listens on loopback, unless --insecure.
func TestServeRefusesExposureWithoutTokens(t *testing.T) {
	t.Setenv("SKILLGATE_NODE_TOKEN", "")
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	_, errOut, code := runCmd(t, "serve", "--store", bucket, "--listen", "0.0.0.0:0")
	if code != 2 || !strings.Contains(errOut, "refusing to listen on 0.0.0.0:0 beyond loopback without a node token") ||
		!strings.Contains(errOut, "an agent token (SKILLGATE_AGENT_TOKEN, --agent-token-file or gateway.agentTokens)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	t.Setenv("SKILLGATE_NODE_TOKEN", "n")
	_, errOut, code = runCmd(t, "serve", "--store", bucket, "--listen", "0.0.0.0:0")
	if code != 2 || strings.Contains(errOut, "node token") || !strings.Contains(errOut, "without an agent token") {
		t.Errorf("node token only: exit %d, stderr %q", code, errOut)
	}
}

// TestValidateStoreLocations: findings in a store directory are reported
// at the file paths an operator edits.
func TestValidateStoreLocations(t *testing.T) {
	out, _, code := runCmd(t, "validate", bucket)
	want := filepath.Join(bucket, "skills/bad-req/SKILL.md") + `: error: requires.hostRoles: unknown host role "gpu"`
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant a line starting %q", code, out, want)
	}
	empty := t.TempDir()
	out, _, code = runCmd(t, "validate", empty)
	if code != 1 || !strings.HasPrefix(out, empty+": error: missing required file: SKILL.md — ") {
		t.Errorf("empty store: exit %d, output %q", code, out)
	}
}

// TestVersion: every spelling prints the one version of the build.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} {
		out, errOut, code := runCmd(t, arg)
		if want := "skillgate " + version.String() + "\n"; code != 0 || out != want || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0, %q", arg, code, out, errOut, want)
		}
	}
}

// TestServeTokenFiles: the gateway's tokens may come from files (systemd
// credentials); a missing or empty file is a usage error naming the flag.
func TestServeTokenFiles(t *testing.T) {
	t.Setenv("SKILLGATE_NODE_TOKEN", "")
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent-token-file", filepath.Join(dir, "missing")}, "--agent-token-file: "},
		{[]string{"--node-token-file", empty}, "--node-token-file: " + empty + " is empty"},
	} {
		_, errOut, code := runCmd(t, append([]string{"serve", "--store", bucket, "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

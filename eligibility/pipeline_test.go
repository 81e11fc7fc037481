package eligibility

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
)

var baseline = []string{"filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"}

func host(id, os string, env []string, bins ...string) protocol.HostFacts {
	h := protocol.HostFacts{ID: id, OS: os, Roles: []string{"execution"}, Capabilities: baseline, Env: env, HostBinStatus: map[string]bool{}}
	for _, b := range bins {
		h.HostBinStatus[b] = true
	}
	return h
}

// js decodes a JSON literal into the JSON-compatible values the parser
// produces, so test cases read like SKILL.md metadata.
func js(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func mkSkill(name, requires string, t *testing.T) *skill.Skill {
	s := &skill.Skill{Ref: skill.Ref{Key: "skills/" + name + "/SKILL.md", Dir: name, Scope: skill.ScopeGlobal}, Name: name}
	if requires != "" {
		s.Requires = js(t, requires)
	}
	return s
}

func mkConfig(t *testing.T, src string) *Config {
	t.Helper()
	if src == "" {
		return nil
	}
	f, err := config.Parse("gateway.json", []byte(src))
	if err != nil {
		t.Fatalf("config %s: %v", src, err)
	}
	return NewConfig(f)
}

type want struct {
	Eligible bool
	Stage    string
	Reasons  []string
	Hosts    []string
}

func TestEvaluate(t *testing.T) {
	linuxGh := host("a-linux", "linux", []string{"GITHUB_TOKEN"}, "gh")
	macTmux := host("b-mac", "darwin", nil, "tmux", "gh")
	winOnly := host("c-win", "windows", nil)
	specialized := protocol.HostFacts{ID: "d-spec", OS: "linux", Roles: []string{"specialized"}, Capabilities: []string{"text.search"}}

	tests := []struct {
		name     string
		requires string // JSON, "" for none
		always   bool
		version  string
		config   string // gateway config JSON
		hosts    []protocol.HostFacts
		want     want
	}{
		{name: "no requires", hosts: nil, want: want{Eligible: true}},
		{name: "empty requires", requires: `{}`, want: want{Eligible: true}},
		{name: "all empty lists", requires: `{"bins":[],"env":[],"os":null}`, want: want{Eligible: true}},
		{name: "no connected hosts", requires: `{"bins":["gh"]}`, want: want{Stage: "runtime", Reasons: []string{"no connected hosts"}}},
		{name: "config-only skill with zero hosts", requires: `{"config":["a"]}`, config: `{"a":1}`,
			want: want{Stage: "runtime", Reasons: []string{"no connected hosts"}}},
		{name: "config-only skill with a host", requires: `{"config":["a"]}`, config: `{"a":1}`, hosts: []protocol.HostFacts{winOnly},
			want: want{Eligible: true}},
		{name: "bins satisfied", requires: `{"bins":["gh"]}`, hosts: []protocol.HostFacts{winOnly, linuxGh, macTmux},
			want: want{Eligible: true, Hosts: []string{"a-linux", "b-mac"}}},
		{name: "bins missing", requires: `{"bins":["gh","jq"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires bins: gh, jq"}}},
		{name: "bins false in hostBinStatus", requires: `{"bins":["gh"]}`,
			hosts: []protocol.HostFacts{{ID: "x", OS: "linux", Roles: []string{"execution"}, Capabilities: baseline, HostBinStatus: map[string]bool{"gh": false}}},
			want:  want{Stage: "runtime", Reasons: []string{"requires bins: gh"}}},
		{name: "anyBins", requires: `{"anyBins":["claude","tmux"]}`, hosts: []protocol.HostFacts{linuxGh, macTmux},
			want: want{Eligible: true, Hosts: []string{"b-mac"}}},
		{name: "anyBins missing", requires: `{"anyBins":["claude","codex"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires anyBins: claude, codex"}}},
		{name: "env missing", requires: `{"env":["WEATHER_API_KEY"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires env: WEATHER_API_KEY"}}},
		{name: "anyEnv", requires: `{"anyEnv":["OPENAI_API_KEY","GITHUB_TOKEN"]}`, hosts: []protocol.HostFacts{linuxGh, macTmux},
			want: want{Eligible: true, Hosts: []string{"a-linux"}}},
		{name: "anyEnv missing", requires: `{"anyEnv":["OPENAI_API_KEY","ANTHROPIC_API_KEY"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires anyEnv: OPENAI_API_KEY, ANTHROPIC_API_KEY"}}},
		{name: "anyEnv after env, on the same host", requires: `{"env":["GITHUB_TOKEN"],"anyEnv":["X","Y"],"bins":["tmux"]}`, hosts: []protocol.HostFacts{linuxGh, macTmux},
			want: want{Stage: "runtime", Reasons: []string{"requires anyEnv: X, Y", "requires bins: tmux"}}},
		{name: "invalid: anyEnv not a list", requires: `{"anyEnv":"A"}`,
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "skills only: no host needed", requires: `{"skills":["other"]}`,
			want: want{Eligible: true}},
		{name: "invalid: skills entry empty", requires: `{"skills":["a"," "]}`,
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "invalid: anySkills not a list", requires: `{"anySkills":"a"}`,
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "same host: bins on A, env on B", requires: `{"bins":["tmux"],"env":["GITHUB_TOKEN"]}`, hosts: []protocol.HostFacts{linuxGh, macTmux},
			want: want{Stage: "runtime", Reasons: []string{"requires bins: tmux"}}},
		{name: "every later failing stage adds a line", requires: `{"os":["windows"],"env":["A"],"bins":["b"],"anyBins":["c","d"]}`,
			hosts: []protocol.HostFacts{linuxGh},
			want:  want{Stage: "runtime", Reasons: []string{"requires os: windows", "requires env: A", "requires bins: b", "requires anyBins: c, d"}}},
		{name: "os alias macos", requires: `{"os":["macOS","linux"]}`, hosts: []protocol.HostFacts{macTmux, winOnly},
			want: want{Eligible: true, Hosts: []string{"b-mac"}}},
		{name: "os alias osx and win32", requires: `{"os":["OSX","win32"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires os: darwin, windows"}}},
		{name: "hostRoles", requires: `{"hostRoles":["specialized"]}`, hosts: []protocol.HostFacts{linuxGh, specialized},
			want: want{Eligible: true, Hosts: []string{"d-spec"}}},
		{name: "hostRoles missing", requires: `{"hostRoles":["specialized"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires hostRoles: specialized"}}},
		{name: "capabilities", requires: `{"capabilities":["filesystem.edit","shell.exec"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires capabilities: filesystem.edit, shell.exec"}}},
		{name: "anyCapabilities", requires: `{"anyCapabilities":["filesystem.edit","text.search"]}`, hosts: []protocol.HostFacts{linuxGh, specialized},
			want: want{Eligible: true, Hosts: []string{"d-spec"}}},
		{name: "anyCapabilities missing", requires: `{"anyCapabilities":["filesystem.edit"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires anyCapabilities: filesystem.edit"}}},
		{name: "config missing", requires: `{"config":["browser.enabled","a.b"]}`, config: `{"browser":{"enabled":false},"a":{"b":"x"}}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires config: browser.enabled"}}},
		{name: "host and config both fail", requires: `{"bins":["zz"],"config":["nope"]}`, config: `{}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires bins: zz", "requires config: nope"}}},
		{name: "config missing, hosts still listed", requires: `{"bins":["gh"],"config":["nope"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires config: nope"}, Hosts: []string{"a-linux"}}},
		{name: "values trimmed and de-duplicated", requires: `{"bins":[" gh","gh ","jq"]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "runtime", Reasons: []string{"requires bins: gh, jq"}}},
		{name: "always skips requirements", requires: `{"bins":["nope"]}`, always: true, want: want{Eligible: true}},
		{name: "invalid: not a list", requires: `{"bins":"gh"}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "invalid: non-string entry", requires: `{"env":[1]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "invalid: empty entry", requires: `{"bins":["  "]}`,
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "invalid: unknown role", requires: `{"hostRoles":["gpu"]}`,
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "invalid: capability ids are case-sensitive", requires: `{"capabilities":["Shell.Exec"]}`,
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "valid: capability ids trimmed", requires: `{"capabilities":[" shell.exec "]}`, hosts: []protocol.HostFacts{linuxGh},
			want: want{Eligible: true, Hosts: []string{"a-linux"}}},
		{name: "invalid: requires not an object", requires: `["gh"]`,
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
		{name: "invalid with always is eligible", requires: `{"capabilities":["gpu.cuda"]}`, always: true, want: want{Eligible: true}},
		{name: "unknown requirement field ignored", requires: `{"gpu":["x"]}`, want: want{Eligible: true}},
		{name: "disabled by entries", requires: `{}`, config: `{"skills":{"entries":{"s":{"enabled":false}}}}`,
			want: want{Stage: "config", Reasons: []string{"disabled by skills.entries policy"}}},
		{name: "disabled beats always", always: true, config: `{"skills":{"entries":{"s":{"enabled":false}}}}`,
			want: want{Stage: "config", Reasons: []string{"disabled by skills.entries policy"}}},
		{name: "entry always override", requires: `{"bins":["nope"]}`, config: `{"skills":{"entries":{"s":{"always":true}}}}`,
			want: want{Eligible: true}},
		{name: "entry always false override", requires: `{"bins":["nope"]}`, always: true, config: `{"skills":{"entries":{"s":{"always":false}}}}`,
			hosts: []protocol.HostFacts{linuxGh}, want: want{Stage: "runtime", Reasons: []string{"requires bins: nope"}}},
		{name: "override: null keeps the frontmatter", requires: `{"bins":["nope"]}`, config: `{"skills":{"entries":{"s":{"requires":{"bins":null}}}}}`,
			hosts: []protocol.HostFacts{linuxGh}, want: want{Stage: "runtime", Reasons: []string{"requires bins: nope"}}},
		{name: "override: [] clears", requires: `{"bins":["nope"],"env":["GITHUB_TOKEN"]}`, config: `{"skills":{"entries":{"s":{"requires":{"bins":[]}}}}}`,
			hosts: []protocol.HostFacts{linuxGh}, want: want{Eligible: true, Hosts: []string{"a-linux"}}},
		{name: "override: replaces one field, keeps others", requires: `{"bins":["nope"],"os":["windows"]}`, config: `{"skills":{"entries":{"s":{"requires":{"bins":["gh"]}}}}}`,
			hosts: []protocol.HostFacts{linuxGh}, want: want{Stage: "runtime", Reasons: []string{"requires os: windows", "requires bins: gh"}}},
		{name: "override: adds requirements to a skill without any", config: `{"skills":{"entries":{"s":{"requires":{"env":["X"]}}}}}`,
			hosts: []protocol.HostFacts{linuxGh}, want: want{Stage: "runtime", Reasons: []string{"requires env: X"}}},
		{name: "version satisfies", version: "1.10", config: `{"skills":{"entries":{"s":{"version":">=1.2.0 <2"}}}}`,
			want: want{Eligible: true}},
		{name: "version with v prefix", version: "v1.4", config: `{"skills":{"entries":{"s":{"version":"^1.2"}}}}`,
			want: want{Eligible: true}},
		{name: "version too new", version: "2.0.1", config: `{"skills":{"entries":{"s":{"version":">=1.2.0 <2"}}}}`,
			want: want{Stage: "config", Reasons: []string{"version 2.0.1 does not satisfy >=1.2.0 <2"}}},
		{name: "no version", config: `{"skills":{"entries":{"s":{"version":">= 1.2"}}}}`,
			want: want{Stage: "config", Reasons: []string{"version (none) does not satisfy >= 1.2"}}},
		{name: "a version that is not semver", version: "latest", config: `{"skills":{"entries":{"s":{"version":"*"}}}}`,
			want: want{Stage: "config", Reasons: []string{"version latest does not satisfy *"}}},
		{name: "always does not skip the version", version: "0.9", always: true, config: `{"skills":{"entries":{"s":{"version":"^1"}}}}`,
			want: want{Stage: "config", Reasons: []string{"version 0.9 does not satisfy ^1"}}},
		{name: "disabled before the version", version: "0.9", config: `{"skills":{"entries":{"s":{"enabled":false,"version":"^1"}}}}`,
			want: want{Stage: "config", Reasons: []string{"disabled by skills.entries policy"}}},
		{name: "override: invalid value makes requirements invalid", config: `{"skills":{"entries":{"s":{"requires":{"hostRoles":["boss"]}}}}}`,
			want: want{Stage: "requirements", Reasons: []string{"invalid requirement identifiers"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mkSkill("s", tt.requires, t)
			s.Always = tt.always
			s.Version = tt.version
			got := evaluate(t, s, mkConfig(t, tt.config), tt.hosts)
			w := tt.want
			if w.Reasons == nil {
				w.Reasons = []string{}
			}
			if w.Hosts == nil {
				w.Hosts = []string{}
			}
			g := want{got.Eligible, got.Stage, got.Reasons, got.Hosts}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("got  %+v\nwant %+v", g, w)
			}
		})
	}
}

func TestEntryMatching(t *testing.T) {
	// One skill named "gh-tool" in directory "github".
	s := &skill.Skill{Ref: skill.Ref{Key: "skills/github/SKILL.md", Dir: "github", Scope: skill.ScopeGlobal}, Name: "gh-tool"}
	tests := []struct {
		name    string
		entries string
		want    bool // eligible
	}{
		{"by name", `{"gh-tool":{"enabled":false}}`, false},
		{"by dir", `{"github":{"enabled":false}}`, false},
		{"by location", `{"skills/github/SKILL.md":{"enabled":false}}`, false},
		{"name wins over dir", `{"gh-tool":{"enabled":true},"github":{"enabled":false}}`, true},
		{"dir wins over location", `{"github":{},"skills/github/SKILL.md":{"enabled":false}}`, true},
		{"no match", `{"other":{"enabled":false}}`, true},
		{"enabled true is not required", `{"gh-tool":{"enabled":true}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mkConfig(t, `{"skills":{"entries":`+tt.entries+`}}`)
			got := evaluate(t, s, cfg, nil)
			if got.Eligible != tt.want {
				t.Errorf("eligible = %v, want %v (%v)", got.Eligible, tt.want, got.Reasons)
			}
		})
	}
}

func TestTruthy(t *testing.T) {
	tests := []struct {
		json string
		want bool
	}{
		{`null`, false}, {`false`, false}, {`true`, true}, {`0`, true}, {`1.5`, true},
		{`""`, false}, {`"  \t"`, false}, {`"x"`, true}, {`[]`, false}, {`[0]`, true},
		{`{}`, false}, {`{"a":null}`, true},
	}
	for _, tt := range tests {
		var v any
		if err := json.Unmarshal([]byte(tt.json), &v); err != nil {
			t.Fatal(err)
		}
		if got := Truthy(v); got != tt.want {
			t.Errorf("Truthy(%s) = %v, want %v", tt.json, got, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal([]byte(`{"a":{"b":{"c":"x"}},"list":["y"],"n":0}`), &root); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want any
	}{
		{"a.b.c", "x"},
		{"a.b.c.d", nil},
		{"list.0", nil}, // arrays are not indexed
		{"list.length", nil},
		{"n", float64(0)},
		{"a.missing", nil},
		{"constructor", nil}, // no inherited names
		{"", nil},
	}
	for _, tt := range tests {
		if got := Resolve(root, tt.path); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Resolve(%q) = %#v, want %#v", tt.path, got, tt.want)
		}
	}
	if got := MissingConfig(root, []string{"a.b.c", "n", "list.0", "a"}); !reflect.DeepEqual(got, []string{"list.0"}) {
		t.Errorf("MissingConfig = %v", got)
	}
}

func TestInterest(t *testing.T) {
	cfg := mkConfig(t, `{"skills":{"entries":{"off":{"enabled":false}}}}`)
	skills := []*skill.Skill{
		mkSkill("a", `{"bins":["gh","tmux"],"env":["B_TOKEN"]}`, t),
		mkSkill("b", `{"anyBins":["claude","gh"],"env":["A_KEY"],"anyEnv":["C_KEY","A_KEY"],"skills":["a"]}`, t),
		mkSkill("off", `{"bins":["disabled-bin"]}`, t),
		mkSkill("bad", `{"bins":["ok"],"hostRoles":["nope"]}`, t),
		mkSkill("alw", `{"bins":["always-bin"]}`, t),
	}
	skills[4].Always = true
	var prepared []*Prepared
	for _, s := range skills {
		prepared = append(prepared, Prepare(s, nil, cfg))
	}
	bins, env, cut := Interest(prepared)
	if cut != 0 {
		t.Errorf("cut = %d", cut)
	}
	if want := []string{"claude", "gh", "tmux"}; !reflect.DeepEqual(bins, want) {
		t.Errorf("bins = %v, want %v", bins, want)
	}
	if want := []string{"A_KEY", "B_TOKEN", "C_KEY"}; !reflect.DeepEqual(env, want) {
		t.Errorf("env = %v, want %v", env, want)
	}
	bins, env, _ = Interest(nil)
	if bins == nil || env == nil || len(bins)+len(env) != 0 {
		t.Errorf("empty interest = %v %v, want two empty non-nil lists", bins, env)
	}
}

// TestLimits: one SKILL.md cannot flood the nodes' interest.
func TestLimits(t *testing.T) {
	many := make([]any, MaxValues+1)
	for i := range many {
		many[i] = fmt.Sprintf("bin%04d", i)
	}
	_, problems, _ := ParseRequirements(map[string]any{"anyBins": many})
	if len(problems) != 1 || problems[0].Message != "has 257 entries, more than 256" {
		t.Errorf("problems = %v", problems)
	}
	_, problems, _ = ParseRequirements(map[string]any{"bins": []any{strings.Repeat("x", 257)}})
	if len(problems) != 1 || problems[0].Message != "entry 0 is longer than 256 bytes" {
		t.Errorf("problems = %v", problems)
	}

	// Many valid skills together: the interest is capped, the rest cut.
	var prepared []*Prepared
	for s := range 20 {
		vals := make([]any, MaxValues)
		for i := range vals {
			vals[i] = fmt.Sprintf("s%02d-bin%03d", s, i)
		}
		sk := &skill.Skill{Ref: skill.Ref{Key: fmt.Sprintf("skills/s%02d/SKILL.md", s)}, Name: fmt.Sprint(s), Requires: map[string]any{"bins": vals}}
		prepared = append(prepared, Prepare(sk, nil, nil))
	}
	bins, _, cut := Interest(prepared)
	if len(bins) != MaxInterestNames || cut != 20*MaxValues-MaxInterestNames || bins[0] != "s00-bin000" {
		t.Errorf("interest: %d bins (first %q), cut %d", len(bins), bins[0], cut)
	}
}

package config

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite DESIGN.md's settings table from the table")

func parse(t *testing.T, src string) *File {
	t.Helper()
	f, err := Parse("gw.hujson", []byte(src))
	if err != nil {
		t.Fatalf("Parse(%s): %v", src, err)
	}
	return f
}

// TestProblems: every problem of a file, located and worded exactly.
func TestProblems(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"typo in the shared gateway object", `{"gateway": {"promt": {}, "port": 18789, "bind": "loopback"}}`,
			[]string{`gw.hujson:1:14: gateway.promt: unknown key; did you mean gateway.prompt? (unknown keys here are kept for requires.config, but not one this close to a known key)`}},
		{"typo of OpenClaw's key", `{"gateway": {"prot": 1}}`,
			[]string{`gw.hujson:1:14: gateway.prot: unknown key; did you mean gateway.port? (unknown keys here are kept for requires.config, but not one this close to a known key)`}},
		{"entry typo and wrong type", `{"skills": {"entries": {"x": {"enabeld": true, "enabled": "no", "apiKey": "k"}}}}`,
			[]string{
				`gw.hujson:1:31: skills.entries.x.enabeld: unknown key; did you mean skills.entries.x.enabled? (unknown keys here are kept for requires.config, but not one this close to a known key)`,
				`gw.hujson:1:48: skills.entries.x.enabled: must be true or false, got the string "no"`,
			}},
		{"aprove", `{"skills": {"entries": {"x": {"aprove": "sha256:00"}}}}`,
			[]string{`gw.hujson:1:31: skills.entries.x.aprove: unknown key; did you mean skills.entries.x.approve? (unknown keys here are kept for requires.config, but not one this close to a known key)`}},
		{"owned object: nearest key", `{"gateway": {"prompt": {"maxChar": 3}}}`,
			[]string{`gw.hujson:1:25: gateway.prompt.maxChar: unknown setting; did you mean gateway.prompt.maxChars? (known: maxChars, maxSkills, hosts)`}},
		{"governance values", `{"gateway": {"governance": {"mode": "enforced", "flagged": true, "allowedHosts": ["https://github.com"]}}}`,
			[]string{
				`gw.hujson:1:29: gateway.governance.mode: must be one of "enforce", "observe", "off", got "enforced"`,
				`gw.hujson:1:49: gateway.governance.flagged: must be one of "allow", "quarantine", got the boolean true`,
				`gw.hujson:1:83: gateway.governance.allowedHosts[0]: must be a host glob such as "*.github.com" (no scheme, port or path), got "https://github.com"`,
			}},
		{"approve list and suppressions", `{"skills": {"entries": {"x": {"approve": ["sha256:` + strings.Repeat("a", 64) + `", "sha256:00"], "suppress": [{"rule": "r"}, {"reason": "ok", "line": 0, "expires": "2027-02-30", "severity": "warn"}, 3]}}}}`,
			[]string{
				`gw.hujson:1:118: skills.entries.x.approve[1]: must be a governance digest "sha256:" followed by 64 lowercase hex digits (copy it from eval --json or GET /v1/governance)`,
				`gw.hujson:1:145: skills.entries.x.suppress[0]: a suppression needs a reason (why the finding is not a risk here)`,
				`gw.hujson:1:160: skills.entries.x.suppress[1]: a suppression needs the rule it suppresses`,
				`gw.hujson:1:177: skills.entries.x.suppress[1].line: must be a positive whole number, got the number 0`,
				`gw.hujson:1:188: skills.entries.x.suppress[1].expires: must be an RFC 3339 date-time (2027-01-31T18:00:00Z) or a date (2027-01-31), got "2027-02-30"`,
				`gw.hujson:1:213: skills.entries.x.suppress[1].severity: unknown setting (known: rule, file, line, reason, expires)`,
				`gw.hujson:1:234: skills.entries.x.suppress[2]: must be an object with rule, file, line, reason and expires, got the number 3`,
			}},
		{"scanners and publishers", "{\"gateway\": {\"governance\": {\n\"scanners\": [{\"name\": \"yara\", \"exec\": [\"/nonexistent/scan-yara\", \"{dir}\"]}, {\"name\": \"yara\", \"exec\": [\"/bin/sh\"], \"format\": \"json\"}, {\"exec\": [\"/bin/sh\"]}],\n\"publishers\": [{\"name\": \"acme\", \"keys\": [\"ssh-ed25519 AAAA\"]}]}}}",
			[]string{
				`gw.hujson:2:40: gateway.governance.scanners[0].exec[0]: no such file: /nonexistent/scan-yara`,
				`gw.hujson:2:78: gateway.governance.scanners[1].name: must be unique: "yara" is already the name of gateway.governance.scanners[0]`,
				`gw.hujson:2:115: gateway.governance.scanners[1].format: must be one of "verdict", "sarif", got "json"`,
				`gw.hujson:2:134: gateway.governance.scanners[2]: a scanner needs a name`,
				`gw.hujson:3:42: gateway.governance.publishers[0].keys[0]: not an SSH public key in authorized_keys format ("ssh-ed25519 AAAA… comment"): ssh: short read`,
			}},
		{"review", `{"gateway": {"governance": {"review": "yes"}}}`,
			[]string{`gw.hujson:1:29: gateway.governance.review: must be one of "off", "required", got "yes"`}},
		{"governance not an object", `{"gateway": {"governance": "enforce"}}`,
			[]string{`gw.hujson:1:14: gateway.governance: must be an object with mode, allowedHosts, flagged, review, scanners, scanConcurrency, publishers and requireSigned, got the string "enforce"`}},
		{"owned object: nothing near", `{"gateway": {"governance": {"strict": true}}}`,
			[]string{`gw.hujson:1:29: gateway.governance.strict: unknown setting (known: mode, allowedHosts, flagged, review, scanners, scanConcurrency, publishers, requireSigned)`}},
		{"owned cluster object", "{\"gateway\": {\"cluster\": {\n  \"ttl\": \"0s\",\n  \"url\": 4,\n  \"cert\": \"c.pem\",\n  \"maxRemoteNodes\": 0,\n  \"secret\": \"x\"}}}",
			[]string{
				`gw.hujson:2:3: gateway.cluster.ttl: must be a duration of at least 1s, like "10s"`,
				`gw.hujson:3:3: gateway.cluster.url: must be a string, got the number 4`,
				`gw.hujson:4:3: gateway.cluster.cert: gateway.cluster.cert and gateway.cluster.key go together: set both, or neither`,
				`gw.hujson:5:3: gateway.cluster.maxRemoteNodes: must be a positive whole number, got the number 0`,
				`gw.hujson:6:3: gateway.cluster.secret: unknown setting (known: url, replica, bucket, ttl, secretFile, maxRemoteNodes, creds, nkey, ca, cert, key)`,
			}},
		{"an agent in both forms", `{"agents": {"main": {"skills": {"allow": ["a"]}}, "list": [{"id": "main"}]}}`,
			[]string{`gw.hujson:1:60: agents.list[0]: agent main is configured in both forms, at agents.list[0] and agents.main: keep one`}},
		{"an agent listed twice", `{"agents": {"list": [{"id": "a"}, {"id": "a"}], "entries": {"a": {}}}}`,
			[]string{
				`gw.hujson:1:35: agents.list[1]: agent a is configured twice, at agents.list[0] and agents.list[1]: keep one`,
				`gw.hujson:1:61: agents.entries.a: agent a is configured twice, at agents.list[0] and agents.entries.a: keep one`,
			}},
		{"a list entry without an id", `{"agents": {"list": [{"skills": []}]}}`,
			[]string{`gw.hujson:1:22: agents.list[0]: an agent of agents.list needs an id`}},
		{"agent keys", `{"agents": {"a": {"model": "m", "skils": [], "skills": 3, "prompt": {"model": 1}}}}`,
			[]string{
				`gw.hujson:1:33: agents.a.skils: unknown key; did you mean agents.a.skills? (unknown keys here are kept for requires.config, but not one this close to a known key)`,
				`gw.hujson:1:46: agents.a.skills: must be an object with allow and deny, or a list of strings; got the number 3`,
				`gw.hujson:1:70: agents.a.prompt.model: unknown setting (known: maxChars, maxSkills)`,
			}},
		{"agents.lsit", `{"agents": {"lsit": [{"id": "main"}]}}`,
			[]string{`gw.hujson:1:13: agents.lsit: must be an object with prompt and skills, got a list; did you mean agents.list?`}},
		{"bad agent id", `{"agents": {"list": [{"id": "a/b"}]}}`,
			[]string{`gw.hujson:1:23: agents.list[0].id: agent id "a/b" contains a slash or backslash`}},
		{"list skills not names", `{"agents": {"defaults": {"skills": "github"}, "list": [{"id": "a", "skills": [1]}]}}`,
			[]string{
				`gw.hujson:1:26: agents.defaults.skills: must be a list of strings, got the string "github"`,
				`gw.hujson:1:79: agents.list[0].skills[0]: must be a string, got the number 1`,
			}},
		{"entry not an object", `{"skills": {"entries": {"a": "off", "b": {"requires": "gh", "priority": 1.5, "mode": "Block"}}}}`,
			[]string{
				`gw.hujson:1:25: skills.entries.a: must be an object with enabled, always, requires, priority, approve, mode, reason, suppress and version, got the string "off"`,
				`gw.hujson:1:43: skills.entries.b.requires: must be an object, got the string "gh"`,
				`gw.hujson:1:61: skills.entries.b.priority: must be a whole number from -1000000 to 1000000, got the number 1.5`,
				`gw.hujson:1:78: skills.entries.b.mode: must be one of "quarantine", "block", got "Block"`,
			}},
		{"version constraint", `{"skills": {"entries": {"a": {"version": ">=1.2 <2"}, "b": {"version": "newest"}, "c": {"version": 2}}}}`,
			[]string{
				`gw.hujson:1:61: skills.entries.b.version: must be a semver constraint such as ">=1.2.0 <2" or "^1.4", got "newest"`,
				`gw.hujson:1:89: skills.entries.c.version: must be a string, got the number 2`,
			}},
		{"approve digest", `{"skills": {"entries": {"a": {"approve": "sha256:ABC"}}}}`,
			[]string{`gw.hujson:1:31: skills.entries.a.approve: must be a governance digest "sha256:" followed by 64 lowercase hex digits (copy it from eval --json or GET /v1/governance)`}},
		{"limits", `{"skills": {"limits": {"maxSkillsPromptChars": "x", "maxSkilsInPrompt": 3}}}`,
			[]string{
				`gw.hujson:1:24: skills.limits.maxSkillsPromptChars: must be a positive whole number, got the string "x"`,
				`gw.hujson:1:53: skills.limits.maxSkilsInPrompt: unknown key; did you mean skills.limits.maxSkillsInPrompt? (unknown keys here are kept for requires.config, but not one this close to a known key)`,
			}},
		{"duplicate key", "{\n  \"skills\": {\"entries\": {\"a\": {\"enabled\": false, \"enabled\": true}}}\n}",
			[]string{`gw.hujson:2:50: skills.entries.a.enabled: duplicate key: a key may appear once in an object`}},
		{"syntax", "{\n  \"a\": 1,,\n}", []string{`gw.hujson:2:10: not valid JSON or HuJSON: invalid character ',' at start of value`}},
		{"too deep", `{"a": ` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
			[]string{`gw.hujson:1:134: nested deeper than 128 levels`}},
		{"deep but fine, brackets in strings and comments", `{"a": "[[[[` + strings.Repeat("[", 200) + `", /* {{{{` + strings.Repeat("{", 200) + ` */ "b": 1, "skills": 3}`,
			[]string{`gw.hujson:1:434: skills: must be an object with limits and entries, got the number 3`}},
		{"a list entry with a null id", `{"agents": {"list": [{"id": null}]}}`,
			[]string{`gw.hujson:1:22: agents.list[0]: an agent of agents.list needs an id`}},
		{"not an object", `["gateway"]`, []string{`gw.hujson:1:1: the config must be one JSON object, got a list`}},
		{"gateway not an object", `{"gateway": true}`,
			[]string{`gw.hujson:1:2: gateway: must be an object with listen, store, poll, insecure, maxNodes, maxLongPolls, maxLongPollsPerToken, nodeTokens, agentTokens, tlsCert, tlsKey, tlsClientCA, prompt, governance, cluster and mcp, got the boolean true`}},
		{"token", `{"gateway": {"nodeTokens": {"n": "sha256:zz"}, "agentTokens": {"a/b": "t"}}}`,
			[]string{
				`gw.hujson:1:29: gateway.nodeTokens.n: "sha256:" must be followed by the 64 hex digits of the token's SHA-256 (e.g. printf %s "$TOKEN" | sha256sum)`,
				`gw.hujson:1:64: gateway.agentTokens.a/b: agent id "a/b" contains a slash or backslash`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("gw.hujson", []byte(tc.src))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse = %v, want problems", err)
			}
			if got := ce.Lines(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if err.Error() != strings.Join(tc.want, "\n") {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

// TestOperatorKeysKept: the root and the shared objects are the
// operator's: keys skillgate does not know, at any depth, are kept as they
// are for requires.config, and short keys two edits from a short known key
// are not taken for typos.
func TestOperatorKeysKept(t *testing.T) {
	src := `{
	  // an OpenClaw config, with the operator's own keys
	  "meta": {"lastTouchedVersion": "2026.6.1"},
	  "myTeam": {"oncall": ["ana"]},
	  "tags": ["prod"],
	  "gateway": {"port": 18789, "bind": "loopback", "auth": {"mode": "token", "token": "t"},
	              "region": "eu", "prompt": {"maxSkills": 3}},
	  "agents": {"defaults": {"model": "x", "workspace": "~/w"}, "ownership": "explicit",
	             "list": [{"id": "main", "default": true, "model": {"primary": "m"}, "skills": ["github"], "team": "core"}]},
	  "skills": {"allowBundled": ["gemini"], "load": {"watch": true}, "custom": 1,
	             "entries": {"github": {"apiKey": {"source": "env", "id": "GH"}, "env": {"A": "b"}, "config": {"x": 1}, "note": "mine"}}},
	}`
	f := parse(t, src)
	for path, want := range map[string]any{
		"myTeam":                      map[string]any{"oncall": []any{"ana"}},
		"gateway":                     nil,
		"agents.list":                 nil,
		"skills.entries.github.note":  "mine",
		"gateway.auth.mode":           "token",
		"skills.custom":               1.0,
		"skills.entries.github.env.A": "b",
	} {
		got := resolve(f.Root, path)
		if want != nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
		if got == nil {
			t.Errorf("%s is not kept", path)
		}
	}
	if f.Gateway.Prompt != (Prompt{MaxChars: DefaultMaxChars, MaxSkills: 3, Hosts: HostsNone}) {
		t.Errorf("prompt = %+v", f.Gateway.Prompt)
	}
	if a := f.Agents["main"]; a == nil || a.Where != "agents.list[0]" || !reflect.DeepEqual(a.Skills, Scope{Names: []string{"github"}, Listed: true, Set: true}) {
		t.Errorf("agent main = %+v", a)
	}
	if e := f.Entries["github"]; e == nil || !reflect.DeepEqual(*e, Entry{}) {
		t.Errorf("entry github = %+v, want an empty entry (OpenClaw's keys only)", e)
	}
}

func resolve(root map[string]any, path string) any {
	var cur any = root
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// TestAgents: the agents' scopes and budgets in both forms.
func TestAgents(t *testing.T) {
	f := parse(t, `{
	  "agents": {
	    "defaults": {"skills": ["github", "tmux"]},
	    "list": [{"id": "main", "skills": ["notes"]}, {"id": "none", "skills": []}, {"id": "inherits"}],
	    "entries": {"keyed": {"skills": ["weather"]}},
	    "ops": {"prompt": {"maxChars": 500}, "skills": {"allow": ["git*"], "deny": ["*-admin"]}},
	    "gsv": {"skills": ["notes"], "model": "m", "team": "x"},
	    "budget-only": {"prompt": {"maxSkills": 2}}
	  },
	  "gateway": {"prompt": {"maxChars": 1000, "hosts": "count"}}
	}`)
	want := map[string]Agent{
		"main":        {ID: "main", Where: "agents.list[0]", Skills: Scope{Names: []string{"notes"}, Listed: true, Set: true}},
		"none":        {ID: "none", Where: "agents.list[1]", Skills: Scope{Names: []string{}, Listed: true, Set: true}},
		"inherits":    {ID: "inherits", Where: "agents.list[2]"},
		"keyed":       {ID: "keyed", Where: "agents.entries.keyed", Skills: Scope{Names: []string{"weather"}, Listed: true, Set: true}},
		"ops":         {ID: "ops", Where: "agents.ops", Prompt: Prompt{MaxChars: 500}, Skills: Scope{Allow: []string{"git*"}, Deny: []string{"*-admin"}, Set: true}},
		"budget-only": {ID: "budget-only", Where: "agents.budget-only", Prompt: Prompt{MaxSkills: 2}},
		"gsv":         {ID: "gsv", Where: "agents.gsv", Skills: Scope{Names: []string{"notes"}, Listed: true, Set: true}},
	}
	if len(f.Agents) != len(want) {
		t.Errorf("agents %v, want %d", f.Agents, len(want))
	}
	for id, w := range want {
		if a := f.Agents[id]; a == nil || !reflect.DeepEqual(*a, w) {
			t.Errorf("agent %s = %+v, want %+v", id, a, w)
		}
	}
	if !f.HasDefaultSkills || !reflect.DeepEqual(f.DefaultSkills, []string{"github", "tmux"}) {
		t.Errorf("defaults = %v %v", f.HasDefaultSkills, f.DefaultSkills)
	}
	for agent, lim := range map[string]Prompt{
		"ops":         {MaxChars: 500, MaxSkills: DefaultMaxSkills, Hosts: HostsCount},
		"budget-only": {MaxChars: 1000, MaxSkills: 2, Hosts: HostsCount},
		"other":       {MaxChars: 1000, MaxSkills: DefaultMaxSkills, Hosts: HostsCount},
	} {
		if got := f.Limits(agent); got != lim {
			t.Errorf("Limits(%s) = %+v, want %+v", agent, got, lim)
		}
	}
	var none *File
	if got := none.Limits("x"); got != (Prompt{MaxChars: DefaultMaxChars, MaxSkills: DefaultMaxSkills, Hosts: HostsNone}) {
		t.Errorf("nil Limits = %+v", got)
	}
}

// TestPromptCharsFromOpenClaw: skills.limits.maxSkillsPromptChars is the
// default of gateway.prompt.maxChars; gateway.prompt.maxChars wins.
func TestPromptCharsFromOpenClaw(t *testing.T) {
	for src, want := range map[string]int{
		`{}`: DefaultMaxChars,
		`{"skills": {"limits": {"maxSkillsPromptChars": 18000}}}`:                                           18000,
		`{"skills": {"limits": {"maxSkillsPromptChars": 18000}}, "gateway": {"prompt": {"maxChars": 900}}}`: 900,
		`{"gateway": {"prompt": {"maxChars": 900}}}`:                                                        900,
	} {
		if got := parse(t, src).Limits("main").MaxChars; got != want {
			t.Errorf("%s: maxChars %d, want %d", src, got, want)
		}
	}
}

// TestGatewaySettings: every gateway setting decoded, file paths resolved
// against the file's directory, tokens' hashes lowercased.
func TestGatewaySettings(t *testing.T) {
	hash := "sha256:" + strings.Repeat("AB", 32)
	f, err := Parse("/etc/skillgate/gw.hujson", []byte(`{"gateway": {
	  "listen": "0.0.0.0:1", "store": "s3://b", "poll": "5s", "insecure": true, "maxNodes": 9,
	  "nodeTokens": {"n1": "`+hash+`"}, "agentTokens": {"a1": "t"},
	  "tlsCert": "c.pem", "tlsKey": "/k.pem", "tlsClientCA": "ca/ca.pem",
	  "governance": {"mode": "observe", "allowedHosts": ["API.github.com"], "flagged": "quarantine"},
	  "cluster": {"url": "nats://x", "replica": "r1", "bucket": "b_1", "ttl": "3s", "secretFile": "cluster-secret", "maxRemoteNodes": 5000,
	              "creds": "n.creds", "cert": "c", "key": "k"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	g := f.Gateway
	if g.Listen != "0.0.0.0:1" || g.Store != "s3://b" || g.Poll != 5*time.Second || !g.Insecure || g.MaxNodes != 9 ||
		g.NodeTokens["n1"] != strings.ToLower(hash) || g.AgentTokens["a1"] != "t" ||
		g.TLSCert != "/etc/skillgate/c.pem" || g.TLSKey != "/k.pem" || g.TLSClientCA != "/etc/skillgate/ca/ca.pem" {
		t.Errorf("gateway = %+v", g)
	}
	if gov := g.Governance; gov.Mode != "observe" || gov.Flagged != "quarantine" || !reflect.DeepEqual(gov.AllowedHosts, []string{"api.github.com"}) {
		t.Errorf("governance = %+v", gov)
	}
	if c := g.Cluster; c != (Cluster{URL: "nats://x", Replica: "r1", Bucket: "b_1", TTL: 3 * time.Second, SecretFile: "/etc/skillgate/cluster-secret", MaxRemote: 5000,
		Creds: "/etc/skillgate/n.creds", Cert: "/etc/skillgate/c", Key: "/etc/skillgate/k"}) {
		t.Errorf("cluster = %+v", c)
	}
}

// TestChanged: the restart-only settings that differ between two files.
func TestChanged(t *testing.T) {
	a := parse(t, `{"gateway": {"listen": "127.0.0.1:1", "poll": "2s", "maxNodes": 3, "cluster": {"ttl": "3s"}}}`)
	b := parse(t, `{"gateway": {"listen": "127.0.0.1:2", "poll": "2s", "maxNodes": 4, "cluster": {"bucket": "x"}}}`)
	var got []string
	for _, s := range Changed(a, b, Restart) {
		got = append(got, s.Path)
	}
	if want := []string{"gateway.listen", "gateway.cluster.bucket", "gateway.cluster.ttl"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changed(Restart) = %v, want %v", got, want)
	}
	got = nil
	for _, s := range Changed(nil, b, Reload) {
		got = append(got, s.Path)
	}
	if want := []string{"gateway.maxNodes"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changed(nil, b, Reload) = %v, want %v", got, want)
	}
}

// TestNearest: what is a typo of a known key and what is not.
func TestNearest(t *testing.T) {
	known := []string{"prompt", "port", "enabled", "approve", "talk", "listen"}
	for k, want := range map[string]string{
		"promt": "prompt", "prompr": "prompt", "PROMPT": "prompt", "enabeld": "enabled", "aprove": "approve",
		"prot": "port", "pot": "port", "lsten": "listen", "lisetn": "listen",
		"tags": "", "promptly": "prompt", "prompting": "", "region": "", "team": "", "": "", "enable": "enabled", "xx": "",
	} {
		if got := nearest(k, known); got != want {
			t.Errorf("nearest(%q) = %q, want %q", k, got, want)
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"ab", "ba", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}, {"é", "e", 1}} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

// TestSchema: the schema is JSON, names every setting at its path, and
// refuses unknown keys in skillgate's objects only.
func TestSchema(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	at := func(path string) map[string]any {
		cur := root
		for _, seg := range strings.Split(path, ".") {
			if alt, ok := cur["oneOf"].([]any); ok {
				cur = alt[0].(map[string]any) // the object of a key that may be a list too
			}
			switch {
			case seg == "<id>" || seg == "<key>":
				cur, _ = cur["additionalProperties"].(map[string]any)
			case strings.HasSuffix(seg, "[]"):
				props, _ := cur["properties"].(map[string]any)
				list, _ := props[strings.TrimSuffix(seg, "[]")].(map[string]any)
				cur, _ = list["items"].(map[string]any)
			default:
				props, _ := cur["properties"].(map[string]any)
				cur, _ = props[seg].(map[string]any)
			}
			if cur == nil {
				return nil
			}
		}
		return cur
	}
	for _, s := range Settings {
		n := at(s.Path)
		if alt, ok := n["oneOf"].([]any); ok {
			n = alt[1].(map[string]any)
		}
		if n == nil || n["description"] != s.Doc {
			t.Errorf("schema at %s = %v", s.Path, n)
		}
	}
	for _, o := range objects {
		n := root
		if o.Path != "" {
			n = at(o.Path)
		}
		if alt, ok := n["oneOf"].([]any); ok {
			n = alt[0].(map[string]any)
		}
		if n == nil {
			t.Errorf("no schema at %s", o.Path)
			continue
		}
		if closed := n["additionalProperties"] == false; closed != (o.Owned && o.wild == "") {
			t.Errorf("%s: additionalProperties %v, owned %v", o.Path, n["additionalProperties"], o.Owned)
		}
	}
	if d := at("gateway.prompt.maxChars")["default"]; d != 30000.0 {
		t.Errorf("maxChars default %v", d)
	}
	if _, ok := at("gateway.cluster.replica")["default"]; ok {
		t.Error("a described default is not a schema default")
	}
}

// TestDesignTable: DESIGN.md's settings table is the table's (go test
// ./config -run TestDesignTable -update rewrites it).
func TestDesignTable(t *testing.T) {
	const (
		path  = "../docs/DESIGN.md"
		begin = "<!-- settings table: generated from package config; go test ./config -run TestDesignTable -update -->\n"
		end   = "<!-- end of settings table -->"
	)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no settings table between %q and %q", path, begin, end)
	}
	want := Markdown()
	if got := doc[i+len(begin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's settings table differs from package config's; run go test ./config -run TestDesignTable -update\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// FuzzParse: no input panics, and an accepted file's values are
// consistent.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"gateway": {"prompt": {"maxChars": 3}}}`, `{"agents": {"list": [{"id": "a", "skills": ["x"]}], "a": {}}}`,
		`{"skills": {"entries": {"x": {"enabled": false, "requires": {"bins": ["gh"]}}}}}`, "{\n// c\n\"a\": [1,],}", `[`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("f", data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("error %v is not an *Error with problems", err)
			}
			return
		}
		if file.Root == nil || file.Gateway.Prompt.MaxChars < 1 || file.Gateway.Prompt.MaxSkills < 1 {
			t.Fatalf("accepted file: root %v, prompt %+v", file.Root, file.Gateway.Prompt)
		}
		for id, a := range file.Agents {
			if a.ID != id || a.Where == "" {
				t.Fatalf("agent %q = %+v", id, a)
			}
		}
	})
}

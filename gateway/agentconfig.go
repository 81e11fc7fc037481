package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/report"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/skill"
)

// Prompt budget defaults (gateway.prompt).
const (
	DefaultMaxChars  = 30000
	DefaultMaxSkills = 150
)

// Host hints of gateway.prompt.hosts.
const (
	HostsNone  = report.HostsNone
	HostsCount = report.HostsCount
	HostsNames = report.HostsNames
)

// PromptSettings are gateway.prompt, and an agent's agents.<id>.prompt (0:
// the gateway's value; Hosts is the gateway's only).
type PromptSettings struct {
	MaxChars  int    `json:"maxChars"`
	MaxSkills int    `json:"maxSkills"`
	Hosts     string `json:"hosts,omitempty"`
}

// AgentSettings are one agents.<id> object of the config file.
type AgentSettings struct {
	Prompt PromptSettings    `json:"prompt"`
	Skills eligibility.Scope `json:"skills"`
}

// Limits returns an agent's prompt budget: its own agents.<id>.prompt
// values where set, else the gateway's.
func (f *ConfigFile) Limits(agent string) PromptSettings {
	p := defaultPrompt()
	if f != nil {
		p = f.Settings.Prompt
		a := f.Agents[agent]
		if a.Prompt.MaxChars > 0 {
			p.MaxChars = a.Prompt.MaxChars
		}
		if a.Prompt.MaxSkills > 0 {
			p.MaxSkills = a.Prompt.MaxSkills
		}
	}
	return p
}

// agent returns the agents.<id> settings of the file, if any.
func (f *ConfigFile) agent(id string) (AgentSettings, bool) {
	if f == nil {
		return AgentSettings{}, false
	}
	a, ok := f.Agents[id]
	return a, ok
}

// Budget is the block budget of the settings.
func (p PromptSettings) Budget() promptbuild.Budget {
	return promptbuild.Budget{MaxChars: p.MaxChars, MaxSkills: p.MaxSkills}
}

func defaultPrompt() PromptSettings {
	return PromptSettings{MaxChars: DefaultMaxChars, MaxSkills: DefaultMaxSkills, Hosts: HostsNone}
}

// parsePrompt reads a prompt object at where ("gateway.prompt" or
// "agents.<id>.prompt"); gateway allows hosts and fills the defaults.
func parsePrompt(where string, v any, gateway bool) (PromptSettings, error) {
	var p PromptSettings
	if gateway {
		p = defaultPrompt()
	}
	if v == nil {
		return p, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return p, fmt.Errorf("%s: must be an object with maxChars and maxSkills", where)
	}
	known := []string{"maxChars", "maxSkills"}
	if gateway {
		known = append(known, "hosts")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, k) {
			return p, fmt.Errorf("%s.%s: unknown setting (known: %s)", where, k, strings.Join(known, ", "))
		}
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"maxChars", &p.MaxChars}, {"maxSkills", &p.MaxSkills}} {
		x, ok := m[f.key]
		if !ok {
			continue
		}
		n, ok := x.(float64)
		if !ok || n < 1 || n != float64(int(n)) || n > 1<<30 {
			return p, fmt.Errorf("%s.%s: must be a positive whole number, got %v", where, f.key, x)
		}
		*f.dst = int(n)
	}
	if x, ok := m["hosts"]; ok {
		h, _ := x.(string)
		if h != HostsNone && h != HostsCount && h != HostsNames {
			return p, fmt.Errorf("%s.hosts: must be %q, %q or %q, got %v", where, HostsNone, HostsCount, HostsNames, x)
		}
		p.Hosts = h
	}
	return p, nil
}

// parseAgents reads the config file's top-level "agents" object: agent id
// → {prompt, skills}.
func parseAgents(root map[string]any) (map[string]AgentSettings, error) {
	raw, ok := root["agents"]
	if !ok || raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("agents: must be an object keyed by agent id")
	}
	out := make(map[string]AgentSettings, len(m))
	for _, id := range slices.Sorted(maps.Keys(m)) {
		where := "agents." + id
		if err := skill.ValidateID(id); err != nil {
			return nil, fmt.Errorf("%s: agent id %v", where, err)
		}
		am, ok := m[id].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: must be an object with prompt and skills", where)
		}
		var a AgentSettings
		for _, k := range slices.Sorted(maps.Keys(am)) {
			var err error
			switch k {
			case "prompt":
				a.Prompt, err = parsePrompt(where+".prompt", am[k], false)
			case "skills":
				a.Skills, err = parseScope(where+".skills", am[k])
			default:
				err = fmt.Errorf("%s.%s: unknown setting (known: prompt, skills)", where, k)
			}
			if err != nil {
				return nil, err
			}
		}
		out[id] = a
	}
	return out, nil
}

// parseScope reads an agents.<id>.skills object: allow and deny glob lists.
func parseScope(where string, v any) (eligibility.Scope, error) {
	var sc eligibility.Scope
	if v == nil {
		return sc, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return sc, fmt.Errorf("%s: must be an object with allow and deny lists of globs", where)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var dst *[]string
		switch k {
		case "allow":
			dst = &sc.Allow
		case "deny":
			dst = &sc.Deny
		default:
			return sc, fmt.Errorf("%s.%s: unknown setting (known: allow, deny)", where, k)
		}
		list, ok := m[k].([]any)
		if !ok {
			return sc, fmt.Errorf("%s.%s: must be a list of globs such as \"git*\"", where, k)
		}
		for i, e := range list {
			g, ok := e.(string)
			if !ok || g == "" {
				return sc, fmt.Errorf("%s.%s[%d]: must be a non-empty glob string, got %v", where, k, i, e)
			}
			if err := eligibility.CheckGlob(g); err != nil {
				return sc, fmt.Errorf("%s.%s[%d]: %q does not compile: %v", where, k, i, g, err)
			}
			*dst = append(*dst, g)
		}
	}
	return sc, nil
}

// parseTokens reads gateway.nodeTokens or gateway.agentTokens: id →
// token, or "sha256:<hex>" of the token. An agent id must be a valid id.
func parseTokens(where string, v any, agentIDs bool) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	tm, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be an object of id → token (or \"sha256:<hex>\" of the token)", where)
	}
	out := make(map[string]string, len(tm))
	for _, id := range slices.Sorted(maps.Keys(tm)) {
		if agentIDs {
			if err := skill.ValidateID(id); err != nil {
				return nil, fmt.Errorf("%s.%s: agent id %v", where, id, err)
			}
		}
		tok, ok := tm[id].(string)
		if !ok || tok == "" {
			return nil, fmt.Errorf("%s.%s: must be a non-empty string", where, id)
		}
		if h, ok := strings.CutPrefix(tok, "sha256:"); ok {
			if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%s.%s: \"sha256:\" must be followed by the 64 hex digits of the token's SHA-256 (e.g. printf %%s \"$TOKEN\" | sha256sum)", where, id)
			}
			tok = "sha256:" + strings.ToLower(h)
		}
		out[id] = tok
	}
	return out, nil
}

// tokenMatches compares a presented token with a configured one (the token,
// or "sha256:<hex>" of it) in constant time.
func tokenMatches(got, want string) bool {
	if h, ok := strings.CutPrefix(want, "sha256:"); ok {
		sum := sha256.Sum256([]byte(got))
		return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(h)) == 1
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

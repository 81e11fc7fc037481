package eligibility

import (
	"strings"
	"time"

	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/scanners"
	"github.com/skillgate/skillgate/skill"
)

// Config is the part of the gateway config file the pipeline reads: the
// whole object (the root requires.config paths resolve against), the
// per-skill policy in skills.entries, gateway.governance and the agents'
// skill scopes. NewConfig makes it from a parsed file (package config),
// so that the gateway and eval read one file one way.
type Config struct {
	Root    map[string]any
	Entries map[string]Entry
	// Governance is gateway.governance (enforce when not set).
	Governance governance.Policy
	// Scopes are the skill scopes of the agents that have one of their
	// own (agents.<id>.skills, agents.list[].skills), by agent id.
	Scopes map[string]Scope
	// DefaultScope is the scope of every other agent
	// (agents.defaults.skills); nil: every skill.
	DefaultScope *Scope
	// Now is the time suppressions' expiry is judged at; zero: the
	// clock's.
	Now time.Time
	// Scanners are gateway.governance.scanners. ScanResult returns a
	// scanner's answer for the content of a digest, false while there is
	// none yet (nil: none ever).
	Scanners   []scanners.Config
	ScanResult func(digest string, sc *scanners.Config) (scanners.Result, bool)
}

// Suppression is one skills.entries suppress element.
type Suppression = config.Suppression

// Entry is one skills.entries value.
type Entry = config.Entry

// NewConfig returns the pipeline's config of a parsed file; nil is a file
// with nothing in it.
func NewConfig(f *config.File) *Config {
	c := &Config{Root: map[string]any{}, Entries: map[string]Entry{}, Governance: governance.DefaultPolicy()}
	if f == nil {
		return c
	}
	c.Root, c.Governance, c.Scanners = f.Root, f.Gateway.Governance, f.Gateway.Scanners
	for k, e := range f.Entries {
		c.Entries[k] = *e
	}
	for id, a := range f.Agents {
		if a.Skills.Set {
			if c.Scopes == nil {
				c.Scopes = map[string]Scope{}
			}
			c.Scopes[id] = a.Skills
		}
	}
	if f.HasDefaultSkills {
		c.DefaultScope = &Scope{Names: f.DefaultSkills, Listed: true, Set: true}
	}
	return c
}

// Lookup finds the entry for a skill: by name, then directory name, then
// full location. The first match wins.
func (c *Config) Lookup(s *skill.Skill) (Entry, bool) {
	if c == nil {
		return Entry{}, false
	}
	for _, k := range [...]string{s.Name, s.Dir, s.Key} {
		if e, ok := c.Entries[k]; ok {
			return e, true
		}
	}
	return Entry{}, false
}

// MissingConfig returns the dotted paths that do not resolve to a truthy
// value in root, in the order given.
func MissingConfig(root map[string]any, paths []string) []string {
	var missing []string
	for _, p := range paths {
		if !Truthy(Resolve(root, p)) {
			missing = append(missing, p)
		}
	}
	return missing
}

// Resolve walks a dotted path through objects' own keys. Arrays are not
// indexed; anything that is not found resolves to nil.
func Resolve(root map[string]any, path string) any {
	var cur any = root
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur, ok = m[part]
		if !ok {
			return nil
		}
	}
	return cur
}

// Truthy is the config truthiness rule: false for nil, false,
// whitespace-only strings, empty arrays and empty objects; true for numbers
// (0 too), true, and non-empty strings, arrays and objects.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return strings.TrimSpace(x) != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true // numbers
}

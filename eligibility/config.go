package eligibility

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/skill"
)

// Config is the part of the gateway config file the pipeline reads: the
// whole object (the root requires.config paths resolve against) and the
// per-skill policy in skills.entries.
type Config struct {
	Root    map[string]any
	Entries map[string]Entry
	// Governance is gateway.governance: NewConfig sets the default
	// (enforce); the caller sets what the config file says
	// (governance.ParsePolicy), as the gateway refuses a bad one.
	Governance governance.Policy
	// Scopes are the agents' skill scopes (agents.<id>.skills), by agent
	// id; set by the caller, as Governance.
	Scopes map[string]Scope
}

// Entry is one skills.entries value.
type Entry struct {
	// Enabled is nil when not set; only false excludes.
	Enabled *bool
	// Always, when set, overrides the frontmatter value.
	Always *bool
	// Requires overrides the frontmatter requirements field by field: a
	// field that is absent or null keeps the frontmatter value, any other
	// value (including []) replaces it. A non-object requires is kept here
	// as is and makes the requirements invalid.
	Requires any
	// Approve is "sha256:<digest>": the operator approves exactly the
	// skill content of that governance digest, which turns the scanner's
	// quarantine or block into allow. "" when not set.
	Approve string
	// Mode is the operator's governance mode for the skill, "quarantine"
	// or "block" ("" when not set): it only tightens.
	Mode string
	// Priority orders skills for the prompt budget: higher first; 0 when
	// not set.
	Priority int
}

// NewConfig reads skills.entries out of a gateway config object (decoded
// JSON: map[string]any). root may be nil. Problems are returned as
// diagnostics located at location (the config file name); an entry with a
// problem keeps its valid fields.
func NewConfig(root map[string]any, location string) (*Config, []skill.Diagnostic) {
	c := &Config{Root: root, Entries: map[string]Entry{}, Governance: governance.DefaultPolicy()}
	var diags []skill.Diagnostic
	warn := func(format string, args ...any) {
		diags = append(diags, skill.Diagnostic{Location: location, Level: skill.LevelWarn, Message: fmt.Sprintf(format, args...)})
	}
	skills, ok := root["skills"]
	if !ok || skills == nil {
		return c, nil
	}
	sm, ok := skills.(map[string]any)
	if !ok {
		warn("skills: must be an object, got %s; skills.entries is ignored", typeName(skills))
		return c, diags
	}
	entries, ok := sm["entries"]
	if !ok || entries == nil {
		return c, nil
	}
	em, ok := entries.(map[string]any)
	if !ok {
		warn("skills.entries: must be an object keyed by skill name, directory or location, got %s; it is ignored", typeName(entries))
		return c, diags
	}
	keys := make([]string, 0, len(em))
	for k := range em {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := em[k].(map[string]any)
		if !ok {
			warn("skills.entries.%s: must be an object, got %s; the entry is ignored", k, typeName(em[k]))
			continue
		}
		var e Entry
		if x, ok := v["enabled"]; ok && x != nil {
			if b, ok := x.(bool); ok {
				e.Enabled = &b
			} else {
				warn("skills.entries.%s.enabled: must be true or false, got %s; it is ignored", k, typeName(x))
			}
		}
		if x, ok := v["always"]; ok && x != nil {
			if b, ok := x.(bool); ok {
				e.Always = &b
			} else {
				warn("skills.entries.%s.always: must be true or false, got %s; it is ignored", k, typeName(x))
			}
		}
		if x, ok := v["requires"]; ok && x != nil {
			e.Requires = x
			if _, ok := x.(map[string]any); !ok {
				diags = append(diags, skill.Diagnostic{Location: location, Level: skill.LevelError,
					Message: fmt.Sprintf("skills.entries.%s.requires: must be an object of lists, got %s; the skill's requirements are invalid", k, typeName(x))})
			}
		}
		if x, ok := v["priority"]; ok && x != nil {
			if f, ok := x.(float64); ok && f == float64(int(f)) && f >= -1e6 && f <= 1e6 {
				e.Priority = int(f)
			} else {
				warn("skills.entries.%s.priority: must be a whole number (higher first; default 0), got %v; it is ignored", k, x)
			}
		}
		if x, ok := v["approve"]; ok && x != nil {
			if d, ok := x.(string); ok && validDigest(d) {
				e.Approve = d
			} else {
				warn("skills.entries.%s.approve: must be a governance digest \"sha256:\" followed by 64 lowercase hex digits (copy it from eval --json or GET /v1/governance), got %v; it is ignored", k, x)
			}
		}
		if x, ok := v["mode"]; ok && x != nil {
			if m, ok := x.(string); ok && (m == governance.ModeQuarantine || m == governance.ModeBlock) {
				e.Mode = m
			} else {
				// An operator's decision we cannot read is read as the
				// strictest: a typo must not let a skill through.
				e.Mode = governance.ModeBlock
				diags = append(diags, skill.Diagnostic{Location: location, Level: skill.LevelError,
					Message: fmt.Sprintf("skills.entries.%s.mode: must be \"quarantine\" or \"block\", got %v; the skill is blocked until this is fixed", k, x)})
			}
		}
		c.Entries[k] = e
	}
	return c, diags
}

// validDigest reports whether d is "sha256:" and 64 lowercase hex digits,
// the form governance.Digest returns.
func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
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

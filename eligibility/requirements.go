package eligibility

import (
	"slices"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/protocol"
)

// Requirement field names, as written in SKILL.md metadata and in
// skills.entries overrides.
const (
	FieldHostRoles       = "hostRoles"
	FieldCapabilities    = "capabilities"
	FieldAnyCapabilities = "anyCapabilities"
	FieldOS              = "os"
	FieldEnv             = "env"
	FieldAnyEnv          = "anyEnv"
	FieldBins            = "bins"
	FieldAnyBins         = "anyBins"
	FieldConfig          = "config"
	FieldSkills          = "skills"
	FieldAnySkills       = "anySkills"
)

// Fields lists the requirement fields in host-filter order, then config,
// then the dependencies on other skills.
var Fields = []string{FieldHostRoles, FieldCapabilities, FieldAnyCapabilities, FieldOS, FieldEnv, FieldAnyEnv,
	FieldBins, FieldAnyBins, FieldConfig, FieldSkills, FieldAnySkills}

// MaxValues is the most entries one requirement field may list.
const MaxValues = 256

// Requirements are the validated, normalized requirements of one skill:
// entries trimmed, OS names lowercased with aliases resolved, duplicates
// removed, declaration order kept.
type Requirements struct {
	HostRoles       []string `json:"hostRoles,omitempty"`
	Capabilities    []string `json:"capabilities,omitempty"`
	AnyCapabilities []string `json:"anyCapabilities,omitempty"`
	OS              []string `json:"os,omitempty"`
	Env             []string `json:"env,omitempty"`
	AnyEnv          []string `json:"anyEnv,omitempty"`
	Bins            []string `json:"bins,omitempty"`
	AnyBins         []string `json:"anyBins,omitempty"`
	Config          []string `json:"config,omitempty"`
	// Skills and AnySkills name other skills of the agent's view (by
	// name, then directory) that must be offered too: every one of
	// Skills, at least one of AnySkills. The dependency stage (Offer)
	// checks them, after every other stage.
	Skills    []string `json:"skills,omitempty"`
	AnySkills []string `json:"anySkills,omitempty"`
}

// Empty reports whether no field the runtime stage checks has a value:
// no host requirement and no config path. Dependencies on other skills do
// not count: a skill whose only requirement is skills needs no connected
// host.
func (r *Requirements) Empty() bool { return !r.HasHost() && len(r.Config) == 0 }

// HasHost reports whether any host-filter field has a value.
func (r *Requirements) HasHost() bool {
	return len(r.HostRoles)+len(r.Capabilities)+len(r.AnyCapabilities)+len(r.OS)+
		len(r.Env)+len(r.AnyEnv)+len(r.Bins)+len(r.AnyBins) > 0
}

// HasDeps reports whether the requirements name other skills.
func (r *Requirements) HasDeps() bool { return len(r.Skills)+len(r.AnySkills) > 0 }

func (r *Requirements) field(name string) *[]string {
	switch name {
	case FieldHostRoles:
		return &r.HostRoles
	case FieldCapabilities:
		return &r.Capabilities
	case FieldAnyCapabilities:
		return &r.AnyCapabilities
	case FieldOS:
		return &r.OS
	case FieldEnv:
		return &r.Env
	case FieldAnyEnv:
		return &r.AnyEnv
	case FieldBins:
		return &r.Bins
	case FieldAnyBins:
		return &r.AnyBins
	case FieldConfig:
		return &r.Config
	case FieldSkills:
		return &r.Skills
	case FieldAnySkills:
		return &r.AnySkills
	}
	return nil
}

// Problem is one reason a requirements value is invalid.
type Problem struct {
	Field   string // e.g. "bins", or "" for the requires value itself
	Message string
}

// ParseRequirements validates a raw requires value (JSON-compatible: a
// map[string]any or nil) and normalizes it. Unknown fields are ignored by
// eligibility; they are returned as unknown so that lint can report them.
// Any problem makes the requirements invalid.
func ParseRequirements(raw any) (req Requirements, problems []Problem, unknown []string) {
	if raw == nil {
		return req, nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return req, []Problem{{Message: "requires must be an object of lists, got " + typeName(raw)}}, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		dst := req.field(k)
		if dst == nil {
			unknown = append(unknown, k)
			continue
		}
		vals, p := parseList(k, m[k])
		problems = append(problems, p...)
		*dst = vals
	}
	return req, problems, unknown
}

func parseList(field string, v any) ([]string, []Problem) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, []Problem{{field, "must be a list of strings, got " + typeName(v)}}
	}
	if len(list) > MaxValues {
		// Every bin and env name reaches every node as interest: one file
		// must not be able to flood them.
		return nil, []Problem{{field, "has " + strconv.Itoa(len(list)) + " entries, more than " + strconv.Itoa(MaxValues)}}
	}
	var out []string
	var problems []Problem
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			problems = append(problems, Problem{field, "entry " + strconv.Itoa(i) + " is " + typeName(e) + ", not a string"})
			continue
		}
		s = strings.TrimSpace(s)
		if s == "" {
			problems = append(problems, Problem{field, "entry " + strconv.Itoa(i) + " is empty"})
			continue
		}
		if len(s) > protocol.MaxNameLen {
			problems = append(problems, Problem{field, "entry " + strconv.Itoa(i) + " is longer than " + strconv.Itoa(protocol.MaxNameLen) + " bytes"})
			continue
		}
		switch field {
		case FieldHostRoles:
			if !protocol.IsRole(s) {
				problems = append(problems, Problem{field, "unknown host role " + strconv.Quote(s) + " (valid: " + strings.Join(protocol.Roles, ", ") + ")"})
				continue
			}
		case FieldCapabilities, FieldAnyCapabilities:
			if !protocol.IsCapability(s) {
				problems = append(problems, Problem{field, "unknown capability " + strconv.Quote(s) + " (valid: " + strings.Join(protocol.Capabilities, ", ") + ")"})
				continue
			}
		case FieldOS:
			s = protocol.NormalizeOS(s)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, problems
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "an unsupported value"
}

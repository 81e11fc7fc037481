package skill

import (
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/ident"
)

// Scope says whether a skill is global or belongs to one agent.
type Scope string

// Scopes, as they appear in JSON outputs.
const (
	ScopeGlobal Scope = "global"
	ScopeAgent  Scope = "agent"
)

// FileName is the name of a skill's definition file.
const FileName = "SKILL.md"

// MaxIDLen is the longest agent id or skill directory name accepted.
const MaxIDLen = ident.MaxLen

// Ref locates a skill in storage.
type Ref struct {
	Key   string // full storage key, e.g. "agents/main/skills/github/SKILL.md"
	Dir   string // the skill's directory name, e.g. "github"
	Scope Scope
	Agent string // the agent id for ScopeAgent, else ""
}

// ValidateID checks an agent id or a skill directory name before any key
// is built from it: not empty, at most MaxIDLen bytes, valid UTF-8, no "/",
// "\\", "..", no control characters (C0, DEL and C1) and no invisible
// characters. It is the rule of ident.Validate, which node ids follow too.
func ValidateID(s string) error { return ident.Validate(s) }

// GlobalPrefix and AgentsPrefix are the two key prefixes skills live under.
const (
	GlobalPrefix = "skills/"
	AgentsPrefix = "agents/"
)

// AgentPrefix returns the key prefix of an agent's local skills. The id must
// have passed ValidateID.
func AgentPrefix(agentID string) string { return AgentsPrefix + agentID + "/skills/" }

// GlobalKey and AgentKey build the key of a skill's SKILL.md.
func GlobalKey(dir string) string         { return GlobalPrefix + dir + "/" + FileName }
func AgentKey(agentID, dir string) string { return AgentPrefix(agentID) + dir + "/" + FileName }

// ParseKey classifies a storage key. It returns ok=false with a nil error
// for keys that are not about skills at all (other files of a skill's
// directory, unrelated objects), and an error for keys named SKILL.md that
// do not have exactly the shape skills/{dir}/SKILL.md or
// agents/{agentId}/skills/{dir}/SKILL.md, or whose names are invalid.
func ParseKey(key string) (ref Ref, ok bool, err error) {
	parts := strings.Split(key, "/")
	if parts[len(parts)-1] != FileName {
		if strings.EqualFold(parts[len(parts)-1], FileName) {
			return Ref{}, false, fmt.Errorf("file is named %q, not %s: it is not loaded as a skill", parts[len(parts)-1], FileName)
		}
		return Ref{}, false, nil
	}
	switch {
	case len(parts) == 3 && parts[0] == "skills":
		if err := ValidateID(parts[1]); err != nil {
			return Ref{}, false, fmt.Errorf("skill directory name %w", err)
		}
		return Ref{Key: key, Dir: parts[1], Scope: ScopeGlobal}, true, nil
	case len(parts) == 5 && parts[0] == "agents" && parts[2] == "skills":
		if err := ValidateID(parts[1]); err != nil {
			return Ref{}, false, fmt.Errorf("agent id %w", err)
		}
		if err := ValidateID(parts[3]); err != nil {
			return Ref{}, false, fmt.Errorf("skill directory name %w", err)
		}
		return Ref{Key: key, Dir: parts[3], Scope: ScopeAgent, Agent: parts[1]}, true, nil
	case parts[0] == "skills" || parts[0] == "agents":
		return Ref{}, false, fmt.Errorf("not a skill: only skills/{dir}/%s and agents/{agentId}/skills/{dir}/%s are loaded", FileName, FileName)
	}
	return Ref{}, false, nil
}

// ReadPath maps a skill key to the virtual path the agent's read tool uses:
// agents/{agentId}/skills/<rest> becomes skills/<rest>; global keys are
// unchanged.
func ReadPath(key string) string {
	if rest, ok := strings.CutPrefix(key, AgentsPrefix); ok {
		if i := strings.Index(rest, "/skills/"); i >= 0 {
			return rest[i+1:]
		}
	}
	return key
}

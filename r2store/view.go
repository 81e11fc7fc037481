package r2store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/skill"
)

// SkillObject is a listed key that is a skill's SKILL.md.
type SkillObject struct {
	skill.Ref
	Size int64
	ETag string
}

// Classify keeps the objects whose keys are skills, in input order. Keys
// that look like skills but do not have exactly the layout's shape (deeper
// keys, bad names, a differently cased SKILL.md) become warnings; other keys
// (a skill's other files, unrelated objects) are ignored. A SKILL.md that
// is not a regular file (see Object.NotRegular) is a warning, not a skill.
func Classify(objs []Object) (skills []SkillObject, diags []skill.Diagnostic) {
	for _, o := range objs {
		ref, ok, err := skill.ParseKey(o.Key)
		if err != nil {
			diags = append(diags, skill.Diagnostic{
				Location: o.Key,
				Level:    skill.LevelWarn,
				Message:  err.Error() + "; " + keyHint(o.Key),
			})
			continue
		}
		switch {
		case ok && o.NotRegular:
			diags = append(diags, notRegular(o.Key))
		case ok:
			skills = append(skills, SkillObject{Ref: ref, Size: o.Size, ETag: o.ETag})
		}
	}
	return skills, diags
}

// keyHint says what to do about a key that skill.ParseKey rejected.
func keyHint(key string) string {
	parts := strings.Split(key, "/")
	switch {
	case parts[len(parts)-1] != skill.FileName:
		return "rename the file to " + skill.FileName + " to load it as a skill"
	case len(parts) == 3 && parts[0] == "skills",
		len(parts) == 5 && parts[0] == "agents" && parts[2] == "skills":
		return "rename it: agent ids and skill directory names must be non-empty, at most 128 bytes, without \"/\", \"\\\", \"..\" or control characters"
	}
	return "move it to skills/{dir}/" + skill.FileName + " or agents/{agentId}/skills/{dir}/" + skill.FileName +
		" to load it as a skill, or ignore this if it is an example file"
}

// AgentView is the agent view, defined here once: an agent sees its
// agent-local items first, in the order given (by key), then the global
// items, in the order given (by key), whose skill directory no agent-local
// item has. Shadowing is by directory name ({dir}), not by frontmatter
// name. View, ListView and the gateway's snapshot all use it. When local is
// empty the result is global itself, not a copy.
func AgentView[T any](local, global []T, dir func(T) string) []T {
	if len(local) == 0 {
		return global
	}
	view := make([]T, 0, len(local)+len(global))
	view = append(view, local...)
	shadowed := make(map[string]bool, len(local))
	for _, it := range local {
		shadowed[dir(it)] = true
	}
	for _, it := range global {
		if !shadowed[dir(it)] {
			view = append(view, it)
		}
	}
	return view
}

// LookupDir finds the item of directory d in the view AgentView(local,
// global, dir) returns, without building it: the agent-local one if there
// is one (isLocal), else the global one.
func LookupDir[T any](local, global []T, dir func(T) string, d string) (item T, isLocal, ok bool) {
	for _, it := range local {
		if dir(it) == d {
			return it, true, true
		}
	}
	for _, it := range global {
		if dir(it) == d {
			return it, false, true
		}
	}
	return item, false, false
}

// View returns the skills agentID sees (AgentView), in listing order: its
// agent-local skills sorted by key, then the global skills sorted by key
// whose directory name no agent-local skill shadows. Other agents' skills
// are left out. The result is never nil.
func View(all []SkillObject, agentID string) []SkillObject {
	var local, global []SkillObject
	for _, o := range all {
		switch {
		case o.Scope == skill.ScopeAgent && o.Agent == agentID:
			local = append(local, o)
		case o.Scope == skill.ScopeGlobal:
			global = append(global, o)
		}
	}
	byKey := func(a, b SkillObject) int { return strings.Compare(a.Key, b.Key) }
	slices.SortFunc(local, byKey)
	slices.SortFunc(global, byKey)
	view := AgentView(local, global, func(o SkillObject) string { return o.Dir })
	if view == nil {
		view = []SkillObject{}
	}
	return view
}

// ListView lists the skills agentID sees: its agent-local prefix and the
// global prefix, classified and shadowed as View does. A malformed agentID
// is an error before any storage request.
func ListView(ctx context.Context, st Store, agentID string) ([]SkillObject, []skill.Diagnostic, error) {
	if err := skill.ValidateID(agentID); err != nil {
		return nil, nil, fmt.Errorf("agent id %w", err)
	}
	local, err := st.List(ctx, skill.AgentPrefix(agentID))
	if err != nil {
		return nil, nil, err
	}
	global, err := st.List(ctx, skill.GlobalPrefix)
	if err != nil {
		return nil, nil, err
	}
	skills, diags := Classify(append(local, global...))
	return View(skills, agentID), diags, nil
}

// ListAll lists and classifies both skill prefixes of the bucket (every
// agent's skills and the global ones), as the gateway's snapshot needs.
// Other objects of a shared bucket are not listed: on R2 or S3 that would
// cost a request per 1,000 of them at every poll.
func ListAll(ctx context.Context, st Store) ([]SkillObject, []skill.Diagnostic, error) {
	agents, err := st.List(ctx, skill.AgentsPrefix)
	if err != nil {
		return nil, nil, err
	}
	global, err := st.List(ctx, skill.GlobalPrefix)
	if err != nil {
		return nil, nil, err
	}
	// "agents/" sorts before "skills/": the concatenation is in key order.
	skills, diags := Classify(append(agents, global...))
	return skills, diags, nil
}

package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// SkillObject is a listed key that is a skill's SKILL.md, with the other
// listed objects of its skill directory.
type SkillObject struct {
	skill.Ref
	Size int64
	ETag string
	// Files are the other listed objects under the skill's directory
	// prefix (skills/{dir}/ or agents/{agentId}/skills/{dir}/), keys in
	// full, in key order: nested ones included (a deeper SKILL.md too),
	// NotRegular ones included. nil when there are none.
	Files []store.Object
}

// dirPrefix returns the key prefix of a skill's directory: its SKILL.md
// key without the file name, ending in "/".
func dirPrefix(skillKey string) string {
	return strings.TrimSuffix(skillKey, skill.FileName)
}

// Classify keeps the objects whose keys are skills, in input order, each
// with the other objects of its skill directory in Files. Keys that look
// like skills but do not have exactly the layout's shape (deeper keys, bad
// names, a differently cased SKILL.md) become warnings; other keys are a
// skill's Files when they are under the directory of a skill, and ignored
// otherwise (a directory without a SKILL.md, unrelated objects). A SKILL.md
// that is not a regular file (see store.Object.NotRegular) is a warning, not a
// skill, and its directory's objects are ignored; so is a skill directory
// the store may not read (see store.Object.Unreadable).
//
// It is linear in the number of objects: files are matched to their skill
// by directory prefix, whatever the input order (a listing is sorted by
// key, and there a SKILL.md sorts in the middle of its directory's keys).
func Classify(objs []store.Object) (skills []SkillObject, diags []skill.Diagnostic) {
	for _, o := range objs {
		if o.Unreadable {
			// A skill directory, or its SKILL.md, is not a skill; anything
			// else in a skill directory is one of its Files.
			if dir, ok := store.SkillDir(o.Key); ok && (o.Key == dir || o.Key == dir+skill.FileName) {
				diags = append(diags, skill.Diagnostic{
					Location: o.Key,
					Level:    skill.LevelWarn,
					Message:  o.Key + " cannot be read by the gateway (permission denied); a skill there is not loaded",
				})
			}
			continue
		}
		if base := o.Key[strings.LastIndexByte(o.Key, '/')+1:]; !strings.EqualFold(base, skill.FileName) {
			continue // not about skills for ParseKey either; spares its split
		}
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
	if len(skills) == 0 {
		return skills, diags
	}
	byDir := make(map[string]int32, len(skills)) // directory prefix → index in skills
	for i := range skills {
		byDir[dirPrefix(skills[i].Key)] = int32(i)
	}
	// Count first, so that all Files share one exactly sized array.
	owner := make([]int32, len(objs)) // index in skills of each object's skill, or -1
	count := make([]int32, len(skills))
	total := 0
	for j, o := range objs {
		owner[j] = -1
		dir, ok := store.SkillDir(o.Key)
		if !ok {
			continue
		}
		if i, ok := byDir[dir]; ok && o.Key != skills[i].Key {
			owner[j] = i
			count[i]++
			total++
		}
	}
	if total == 0 {
		return skills, diags
	}
	files := make([]store.Object, total)
	off := 0
	for i, n := range count {
		if n > 0 {
			skills[i].Files = files[off : off : off+int(n)]
			off += int(n)
		}
	}
	for j, i := range owner {
		if i >= 0 {
			skills[i].Files = append(skills[i].Files, objs[j])
		}
	}
	for i := range skills {
		if files := skills[i].Files; !slices.IsSortedFunc(files, compareKeys) {
			slices.SortFunc(files, compareKeys)
		}
	}
	return skills, diags
}

func compareKeys(a, b store.Object) int { return strings.Compare(a.Key, b.Key) }

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
// are left out. Each skill keeps its Files. The result is never nil.
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
func ListView(ctx context.Context, st store.Store, agentID string) ([]SkillObject, []skill.Diagnostic, error) {
	view, _, diags, err := ListViewShadows(ctx, st, agentID)
	return view, diags, err
}

// ListViewShadows is ListView, also returning the global skills that the
// agent's own skills shadow (in key order), which the view leaves out: a
// report names the one each agent-local skill shadows.
func ListViewShadows(ctx context.Context, st store.Store, agentID string) (view, shadowed []SkillObject, diags []skill.Diagnostic, err error) {
	if err := skill.ValidateID(agentID); err != nil {
		return nil, nil, nil, fmt.Errorf("agent id %w", err)
	}
	local, err := st.List(ctx, skill.AgentPrefix(agentID))
	if err != nil {
		return nil, nil, nil, err
	}
	global, err := st.List(ctx, skill.GlobalPrefix)
	if err != nil {
		return nil, nil, nil, err
	}
	skills, diags := Classify(append(local, global...))
	view = View(skills, agentID)
	own := map[string]bool{}
	for _, o := range view {
		if o.Scope == skill.ScopeAgent {
			own[o.Dir] = true
		}
	}
	for _, o := range skills {
		if o.Scope == skill.ScopeGlobal && own[o.Dir] {
			shadowed = append(shadowed, o)
		}
	}
	slices.SortFunc(shadowed, func(a, b SkillObject) int { return strings.Compare(a.Key, b.Key) })
	return view, shadowed, diags, nil
}

// ListAll lists and classifies both skill prefixes of the bucket (every
// agent's skills and the global ones), as the gateway's snapshot needs.
// Other objects of a shared bucket are not listed: on R2 or S3 that would
// cost a request per 1,000 of them at every poll.
func ListAll(ctx context.Context, st store.Store) ([]SkillObject, []skill.Diagnostic, error) {
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

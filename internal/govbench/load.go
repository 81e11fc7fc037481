package govbench

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// setStore shows a set's skill directories to catalog's loader as a bucket
// would: the skill directory d of the set is skills/{key}/, where key is a
// name ParseKey accepts. Listing and reading go through store.Dir, so
// symlinks, files that are not regular and the size cap are handled as
// the gateway's directory store handles them.
type setStore struct {
	dir  *store.Dir
	keys map[string]string // skills/{key}/ → the skill directory in the set, with "/"
	objs []store.Object    // every skill's listing under its bucket key, sorted
}

// newSetStore lists the skill directories of skills in setDir, leaving out
// the files named in exclude. It returns the store and each skill's
// bucket-style directory name, by index in skills.
func newSetStore(setDir string, skills []Skill, exclude []string) (*setStore, []string, error) {
	d, err := store.NewDir(setDir)
	if err != nil {
		return nil, nil, err
	}
	st := &setStore{dir: d, keys: map[string]string{}}
	names := make([]string, len(skills))
	used := map[string]bool{}
	for i, s := range skills {
		// The directory's own name when it is free and valid, as an
		// operator would name it; else a numbered one. The name does not
		// reach the scan (governance.Scan names every skill "skill").
		name := path.Base(s.Dir)
		for n := i; used[name] || skill.ValidateID(name) != nil; n++ {
			name = fmt.Sprintf("skill-%d", n)
		}
		used[name] = true
		names[i] = name
		prefix := skill.GlobalPrefix + name + "/"
		st.keys[prefix] = s.Dir + "/"
		listed, err := d.List(context.Background(), s.Dir+"/")
		if err != nil {
			return nil, nil, fmt.Errorf("set %s: %w", setDir, err)
		}
		for _, o := range listed {
			rest := strings.TrimPrefix(o.Key, s.Dir+"/")
			if excluded(rest, exclude) {
				continue
			}
			o.Key = prefix + rest
			st.objs = append(st.objs, o)
		}
	}
	return st, names, nil
}

// excluded reports whether the file at rel (in a skill directory) is one
// of the set's label files: a top-level file of that name.
func excluded(rel string, exclude []string) bool {
	for _, x := range exclude {
		if rel == x {
			return true
		}
	}
	return false
}

// List implements store.Store.
func (st *setStore) List(_ context.Context, prefix string) ([]store.Object, error) {
	var out []store.Object
	for _, o := range st.objs {
		if strings.HasPrefix(o.Key, prefix) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Get implements store.Store.
func (st *setStore) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	rest, ok := strings.CutPrefix(key, skill.GlobalPrefix)
	i := strings.IndexByte(rest, '/')
	if !ok || i < 0 {
		return nil, "", fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	dir, ok := st.keys[skill.GlobalPrefix+rest[:i+1]]
	if !ok {
		return nil, "", fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	return st.dir.Get(ctx, dir+rest[i+1:], etag)
}

// load reads the skill directories of skills as the gateway would: the
// listing classified into skills (catalog.Classify) and loaded
// (catalog.Loader), each SKILL.md with the files of its directory within
// governance.Budget. It returns each skill's Input, by index in skills. A
// skill the gateway would not load (its SKILL.md over the size cap, not a
// regular file) is an error: it would be measured as nothing. listed is
// how many files the skill directories hold, SKILL.md files included.
func load(setDir string, skills []Skill, exclude []string) (ins []*governance.Input, listed int, err error) {
	st, names, err := newSetStore(setDir, skills, exclude)
	if err != nil {
		return nil, 0, err
	}
	objs, diags := catalog.Classify(st.objs)
	if len(diags) > 0 {
		return nil, 0, fmt.Errorf("set %s: %s: %s", setDir, diags[0].Location, diags[0].Message)
	}
	loaded, diags, err := catalog.NewLoader(st).Load(context.Background(), objs)
	if err != nil {
		return nil, 0, fmt.Errorf("set %s: %w", setDir, err)
	}
	if len(diags) > 0 {
		return nil, 0, fmt.Errorf("set %s: %s: %s", setDir, diags[0].Location, diags[0].Message)
	}
	byName := make(map[string]*governance.Input, len(loaded))
	for i := range loaded {
		byName[loaded[i].Skill.Dir] = &loaded[i].Input
	}
	ins = make([]*governance.Input, len(skills))
	for i, n := range names {
		if ins[i] = byName[n]; ins[i] == nil {
			return nil, 0, fmt.Errorf("set %s: skill %s (%s) was not loaded", setDir, skills[i].Name, skills[i].Dir)
		}
	}
	return ins, len(st.objs), nil
}

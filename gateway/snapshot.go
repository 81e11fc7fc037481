package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// snapshot is one consistent view of the whole bucket: every global skill
// and every agent's local skills, parsed.
type snapshot struct {
	global []*skill.Skill            // sorted by key
	agents map[string][]*skill.Skill // agent id → local skills, sorted by key
	all    []*skill.Skill            // every skill, sorted by key
	diags  []skill.Diagnostic        // listing and loading findings
	// listDiags are the listing's findings alone, to tell an unchanged
	// listing (loadSnapshot).
	listDiags []skill.Diagnostic
	sum       string // fingerprint of keys and ETags

	// inputs are the skills' directories as read, for the governance
	// scanner; reports their scans under the policy of fingerprint
	// govPolicy (no reports when it is off).
	inputs    map[*skill.Skill]*governance.Input
	reports   map[*skill.Skill]*governance.Report
	govPolicy string

	agentDiags map[string]bool // agents with diagnostics under their prefix
}

// view returns an agent's skills in listing order: agent-local first, then
// global skills whose directory is not shadowed (catalog.AgentView).
func (s *snapshot) view(agentID string) []*skill.Skill {
	return catalog.AgentView(s.agents[agentID], s.global, skillDir)
}

func skillDir(sk *skill.Skill) string { return sk.Dir }

// ownsAgent reports whether an agent has skills or findings of its own,
// so that its view differs from the global one.
func (s *snapshot) ownsAgent(agentID string) bool {
	return len(s.agents[agentID]) > 0 || s.agentDiags[agentID]
}

// findDir returns the skill of directory dir in the agent's view: the
// agent-local one if there is one, else the global one.
func (s *snapshot) findDir(agentID, dir string) (*skill.Skill, bool) {
	sk, _, ok := catalog.LookupDir(s.agents[agentID], s.global, skillDir, dir)
	return sk, ok
}

// shadowed returns the global skill an agent-local skill shadows (the
// one of its directory), or nil.
func (s *snapshot) shadowed(sk *skill.Skill) *skill.Skill {
	if sk.Scope != skill.ScopeAgent {
		return nil
	}
	key := skill.GlobalKey(sk.Dir)
	if i, ok := slices.BinarySearchFunc(s.global, key, func(g *skill.Skill, k string) int { return strings.Compare(g.Key, k) }); ok {
		return s.global[i]
	}
	return nil
}

// diagsFor returns the listing diagnostics that concern an agent's view:
// global keys and the agent's own keys.
func (s *snapshot) diagsFor(agentID string) []skill.Diagnostic {
	var out []skill.Diagnostic
	prefix := skill.AgentsPrefix + agentID + "/"
	for _, d := range s.diags {
		if strings.HasPrefix(d.Location, skill.GlobalPrefix) || strings.HasPrefix(d.Location, prefix) {
			out = append(out, d)
		}
	}
	return out
}

// loadSnapshot lists the whole bucket and loads what changed since the
// loader's last call (conditional reads by ETag). When the listing is
// prev's (every key and ETag the same) and every entry has an ETag, prev
// itself is returned with same set: the loader would answer every skill
// from its cache, and hashing each skill's content again for the scan
// cache would be the most of an unchanged poll's cost.
func loadSnapshot(ctx context.Context, st store.Store, loader *catalog.Loader, prev *snapshot) (snap *snapshot, same bool, err error) {
	objs, diags, err := catalog.ListAll(ctx, st)
	if err != nil {
		return nil, false, err
	}
	h := sha256.New()
	tagged := true
	// Every file of a skill directory counts: governance scans them all.
	for _, o := range objs {
		for _, f := range append([]store.Object{{Key: o.Key, ETag: o.ETag}}, o.Files...) {
			h.Write([]byte(f.Key))
			h.Write([]byte{0})
			h.Write([]byte(f.ETag))
			h.Write([]byte{0})
			tagged = tagged && f.ETag != "" && !f.NotRegular && !f.Unreadable
		}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if prev != nil && tagged && prev.inputs != nil && sum == prev.sum && slices.Equal(diags, prev.listDiags) {
		return prev, true, nil
	}
	loaded, loadDiags, err := loader.Load(ctx, objs)
	if err != nil {
		return nil, false, err
	}
	snap = &snapshot{agents: map[string][]*skill.Skill{}, diags: append(slices.Clip(diags), loadDiags...), listDiags: diags}
	snap.sum = sum
	snap.agentDiags = map[string]bool{}
	for _, d := range snap.diags {
		if rest, ok := strings.CutPrefix(d.Location, skill.AgentsPrefix); ok {
			id, _, _ := strings.Cut(rest, "/")
			snap.agentDiags[id] = true
		}
	}
	snap.inputs = make(map[*skill.Skill]*governance.Input, len(loaded))
	for i := range loaded {
		sk := loaded[i].Skill
		snap.inputs[sk] = &loaded[i].Input
		snap.all = append(snap.all, sk)
		if sk.Scope == skill.ScopeAgent {
			snap.agents[sk.Agent] = append(snap.agents[sk.Agent], sk)
		} else {
			snap.global = append(snap.global, sk)
		}
	}
	return snap, false, nil
}

// readScanned answers GET …/read?path=p (rest: the path in the skill's
// directory) from in, the skill directory as the poller read it: the bytes
// governance scanned (200), or the status and message of a file that is
// not served. A file the scanner did not read (over the caps, in a
// directory or a file the store may not read) is 403; one over the 256 KiB
// file limit 413; one that is not a regular file, or not in the snapshot,
// 404. in.Files and in.Skipped are in path order (catalog.Loader).
func readScanned(in *governance.Input, p, rest string) (body []byte, code int, msg string) {
	notFound := "no such file: " + p
	if in == nil {
		return nil, http.StatusNotFound, notFound
	}
	if rest == skill.FileName {
		return in.SkillMD, http.StatusOK, ""
	}
	byPath := func(f governance.File, path string) int { return strings.Compare(f.Path, path) }
	notScanned := func(why string) (body []byte, code int, msg string) {
		return nil, http.StatusForbidden, p + " was not scanned by governance (" + why + "); it is not served"
	}
	if i, ok := slices.BinarySearchFunc(in.Files, rest, byPath); ok {
		f := &in.Files[i]
		switch {
		case f.Err == "":
			return f.Data, http.StatusOK, ""
		case catalog.IsNotRegular(f):
			return nil, http.StatusNotFound, notFound + " (not a regular file)"
		case catalog.IsTooLarge(f):
			return nil, http.StatusRequestEntityTooLarge, p + " is " + governance.TooLargeText(store.MaxFileSize)
		}
		why, _, _ := strings.Cut(f.Err, ": ") // the count cap's "…: this and N more files are not read"
		return notScanned(why)
	}
	if _, ok := slices.BinarySearchFunc(in.Skipped, rest, byPath); ok {
		return notScanned(fmt.Sprintf("over the %d-file limit of a skill directory", governance.MaxFiles))
	}
	for i := range in.Files {
		// Nothing is listed under a directory the store may not read.
		if d := in.Files[i].Path; strings.HasSuffix(d, "/") && strings.HasPrefix(rest, d) && in.Files[i].Err != "" {
			return notScanned("in " + in.Files[i].Err)
		}
	}
	return nil, http.StatusNotFound, notFound
}

// storeHealth is what /readyz reports about storage.
type storeHealth struct {
	lastOK    time.Time     // last successful snapshot
	lastErr   error         // error of the last attempt, nil if it succeeded
	problem   store.Problem // lastErr explained
	lastTried time.Time
}

// has reports whether a skill with this key is in the snapshot.
func (s *snapshot) has(key string) bool {
	_, ok := slices.BinarySearchFunc(s.all, key, func(sk *skill.Skill, k string) int { return strings.Compare(sk.Key, k) })
	return ok
}

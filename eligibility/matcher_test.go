package eligibility

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMatcherAgreesWithMatches checks the Matcher against checking every
// list, on random requirements and hosts.
func TestMatcherAgreesWithMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	pick := func(vals []string, max int) []string {
		var out []string
		for range rng.IntN(max + 1) {
			out = append(out, vals[rng.IntN(len(vals))])
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	bins := []string{"gh", "git", "jq", "tmux", "uv", "docker"}
	env := []string{"A", "B", "C"}
	caps := []string{"filesystem.list", "filesystem.read", "shell.exec", "text.search"}
	oses := []string{"linux", "darwin", "windows"}
	roles := []string{"execution", "specialized"}
	var reqs []*Requirements
	for i := range 600 {
		r := &Requirements{
			HostRoles: pick(roles, 2), Capabilities: pick(caps, 2), AnyCapabilities: pick(caps, 3),
			OS: pick(oses, 2), Env: pick(env, 2), AnyEnv: pick(env, 3), Bins: pick(bins, 2), AnyBins: pick(bins, 3),
		}
		if i%2 == 1 {
			// One host requirement only: the lists a host satisfies by
			// the value it is filed under alone.
			one := hostStages[rng.IntN(len(hostStages))]
			vals := one.vals(r)
			*r = Requirements{}
			*r.field(one.field) = vals
		}
		reqs = append(reqs, r)
	}
	m := NewMatcher(reqs)
	for range 500 {
		h := &Host{ID: "h", OS: oses[rng.IntN(len(oses))], Roles: pick(roles, 2), Capabilities: pick(caps, 4), Env: pick(env, 3), Bins: pick(bins, 6)}
		if rng.IntN(10) == 0 {
			h = &Host{ID: "bare", OS: oses[rng.IntN(len(oses))]}
		}
		var want []int32
		for i, r := range reqs {
			if r.Matches(h) {
				want = append(want, int32(i))
			}
		}
		if got := m.Matching(nil, h); !slices.Equal(got, want) {
			t.Fatalf("host %+v: Matching %v, every list checked %v", h, got, want)
		}
		// What dst held is kept as it was.
		if got := m.Matching([]int32{7, 7}, h); !slices.Equal(got, append([]int32{7, 7}, want...)) {
			t.Fatalf("host %+v: Matching after [7 7]: %v, want [7 7] and %v", h, got, want)
		}
	}
	if got := m.Matching(nil, nil); got != nil {
		t.Errorf("nil host: %v", got)
	}
}

// TestHostStageValues: each stage's accessor reads the field it names.
func TestHostStageValues(t *testing.T) {
	var r Requirements
	for i := range hostStages {
		*r.field(hostStages[i].field) = []string{hostStages[i].field}
	}
	for _, st := range hostStages {
		if got := st.vals(&r); !slices.Equal(got, []string{st.field}) {
			t.Errorf("stage %s reads %v", st.field, got)
		}
	}
}

func TestLacking(t *testing.T) {
	h := &Host{ID: "h", OS: "linux", Roles: []string{"execution"}, Capabilities: []string{"filesystem.read", "shell.exec"},
		Env: []string{"A"}, Bins: []string{"gh", "jq"}}
	for _, tt := range []struct {
		field string
		vals  []string
		want  string // "" when met
	}{
		{FieldBins, []string{"gh", "tmux", "uv"}, "bins: tmux, uv"},
		{FieldBins, []string{"gh"}, ""},
		{FieldAnyBins, []string{"tmux", "uv"}, "anyBins: one of tmux, uv"},
		{FieldAnyBins, []string{"tmux", "jq"}, ""},
		{FieldEnv, []string{"A", "B"}, "env: B"},
		{FieldOS, []string{"darwin", "windows"}, "os: one of darwin, windows"},
		{FieldOS, []string{"linux"}, ""},
		{FieldHostRoles, []string{"specialized"}, "hostRoles: one of specialized"},
		{FieldCapabilities, []string{"shell.exec", "text.search"}, "capabilities: text.search"},
		{FieldAnyCapabilities, []string{"text.search"}, "anyCapabilities: one of text.search"},
		{FieldConfig, []string{"x"}, ""},
	} {
		got, ok := Lacking(h, tt.field, tt.vals)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Lacking(%s %v) = %q, %v; want %q", tt.field, tt.vals, got, ok, tt.want)
		}
	}
}

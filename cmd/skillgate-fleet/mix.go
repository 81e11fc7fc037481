package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/protocol"
	"github.com/tailscale/hujson"
)

// The synthetic vocabulary shared by the simulated nodes (mix profiles) and
// the generated skills: binaries bin000…bin299 and env names ENV_00…ENV_39.
const (
	binPool = 300
	envPool = 40

	// probeBin is the binary only the probe node has; the probe skill
	// (`skills --probe`) requires it.
	probeBin = "probe-bin"
	// probeSkill is the name and directory of the probe skill.
	probeSkill = "fleet-probe"
)

// binName returns the i-th synthetic binary name, "bin000"…
func binName(i int) string { return fmt.Sprintf("bin%03d", i) }

// envName returns the i-th synthetic env name, "ENV_00"…
func envName(i int) string { return fmt.Sprintf("ENV_%02d", i) }

// poolIndex parses a synthetic name (prefix followed by exactly digits
// decimal digits) and reports its index when it is below size.
func poolIndex(name, prefix string, digits, size int) (int, bool) {
	if len(name) != len(prefix)+digits || !strings.HasPrefix(name, prefix) {
		return 0, false
	}
	n := 0
	for _, c := range name[len(prefix):] {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n < size
}

// defaultMix is the built-in mix, matching the skills that `skills`
// generates: most nodes are Linux or macOS execution hosts with 30 of the
// 300 synthetic binaries and 3 of the 40 env names, drawn per node; a few
// Windows hosts are specialized.
const defaultMix = `{
  "profiles": [
    {"name": "linux", "weight": 60, "os": "linux", "roles": ["execution"],
     "capabilities": ["filesystem.list", "filesystem.read", "filesystem.write", "filesystem.edit", "text.search", "shell.exec"],
     "randomBins": 30, "randomEnv": 3},
    {"name": "darwin", "weight": 30, "os": "darwin", "roles": ["execution"],
     "capabilities": ["filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"],
     "randomBins": 30, "randomEnv": 3},
    {"name": "windows", "weight": 10, "os": "windows", "roles": ["specialized"],
     "capabilities": ["filesystem.list", "filesystem.read", "text.search"],
     "randomBins": 10, "randomEnv": 1},
  ],
}`

// profile is one weighted kind of simulated node.
type profile struct {
	Name         string   `json:"name"`
	Weight       float64  `json:"weight"`
	OS           string   `json:"os"`
	Roles        []string `json:"roles"`
	Capabilities []string `json:"capabilities"`
	Bins         []string `json:"bins"`       // present on every node of the profile
	Env          []string `json:"env"`        // set on every node of the profile
	RandomBins   int      `json:"randomBins"` // plus this many of bin000…bin299, per node
	RandomEnv    int      `json:"randomEnv"`  // plus this many of ENV_00…ENV_39, per node

	bins, env map[string]bool
}

// profileKeys lists the keys of a profile object, for error messages.
const profileKeys = "name, weight, os, roles, capabilities, bins, env, randomBins, randomEnv"

// mix is a validated set of profiles. Which profile a node gets, and which
// random names it has, depend only on the seed and the node's index, so a
// node that reconnects reports the same facts.
type mix struct {
	profiles []*profile
	cum      []float64 // cumulative weights, normalized to end at 1
	seed     uint64
}

// loadMix reads a mix file, or the built-in mix when path is "".
func loadMix(path string, seed uint64) (*mix, error) {
	name, data := "built-in mix", []byte(defaultMix)
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, cli.Usagef("--mix: %v", err)
		}
		name, data = path, b
	}
	m, err := parseMix(name, data, seed)
	if err != nil {
		return nil, cli.Usagef("--mix: %v", err)
	}
	return m, nil
}

// parseMix parses a HuJSON mix: an object {"profiles": [...]} or a bare
// array of profiles. Errors name the file and the field.
func parseMix(name string, data []byte, seed uint64) (*mix, error) {
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not valid HuJSON: %v", name, err)
	}
	std = bytes.TrimSpace(std)
	var raws []json.RawMessage
	if len(std) > 0 && std[0] == '{' {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(std, &top); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		for k := range top {
			if k != "profiles" {
				return nil, fmt.Errorf("%s: %q: unknown key (the top-level object has only \"profiles\")", name, k)
			}
		}
		if err := json.Unmarshal(top["profiles"], &raws); err != nil || raws == nil {
			return nil, fmt.Errorf("%s: profiles: must be a list of profile objects", name)
		}
	} else if err := json.Unmarshal(std, &raws); err != nil {
		return nil, fmt.Errorf("%s: must be an object {\"profiles\": [...]} or a list of profiles", name)
	}
	if len(raws) == 0 {
		return nil, fmt.Errorf("%s: profiles: is empty; give at least one profile {%s}", name, profileKeys)
	}
	m := &mix{seed: seed}
	total := 0.0
	for i, raw := range raws {
		p, err := parseProfile(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: profiles[%d]: %v", name, i, err)
		}
		if p.Name == "" {
			p.Name = fmt.Sprintf("profile%d", i)
		}
		m.profiles = append(m.profiles, p)
		total += p.Weight
		m.cum = append(m.cum, total)
	}
	for i := range m.cum {
		m.cum[i] /= total
	}
	return m, nil
}

func parseProfile(raw json.RawMessage) (*profile, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%v (a profile has the keys %s)", err, profileKeys)
	}
	switch {
	case !(p.Weight > 0):
		return nil, fmt.Errorf("weight: must be a positive number (the share of nodes, relative to the other profiles)")
	case p.RandomBins < 0 || p.RandomBins > binPool:
		return nil, fmt.Errorf("randomBins: must be between 0 and %d", binPool)
	case p.RandomEnv < 0 || p.RandomEnv > envPool:
		return nil, fmt.Errorf("randomEnv: must be between 0 and %d", envPool)
	}
	facts := protocol.NodeInfo{ID: "sim-0", OS: p.OS, Roles: p.Roles, Capabilities: p.Capabilities}.HostFacts()
	facts.Env = p.Env
	if err := facts.Validate(); err != nil {
		return nil, err
	}
	p.bins = map[string]bool{}
	for i, b := range p.Bins {
		if b == "" || len(b) > protocol.MaxNameLen {
			return nil, fmt.Errorf("bins[%d]: invalid binary name %q", i, b)
		}
		p.bins[b] = true
	}
	p.env = map[string]bool{}
	for _, e := range p.Env {
		p.env[e] = true
	}
	return &p, nil
}

// simNodeFacts is what one simulated node has: its profile and the random
// names drawn for it (bit i set = the i-th synthetic name is present).
type simNodeFacts struct {
	prof *profile
	bins [(binPool + 63) / 64]uint64
	env  [(envPool + 63) / 64]uint64
}

// node returns the facts of the node with this index. It allocates
// nothing that outlives the call, so nodes need not store their facts.
func (m *mix) node(idx int) simNodeFacts {
	r := rand.New(rand.NewPCG(m.seed, uint64(idx)))
	u := r.Float64()
	i, _ := slices.BinarySearch(m.cum, u)
	if i >= len(m.profiles) || m.cum[i] == u { // u exactly on a boundary belongs to the next profile
		i = min(i+1, len(m.profiles)-1)
	}
	f := simNodeFacts{prof: m.profiles[i]}
	sample(r, binPool, f.prof.RandomBins, f.bins[:])
	sample(r, envPool, f.prof.RandomEnv, f.env[:])
	return f
}

// sample sets k distinct bits among the first n of set (Floyd's algorithm).
func sample(r *rand.Rand, n, k int, set []uint64) {
	has := func(i int) bool { return set[i/64]>>(i%64)&1 == 1 }
	for j := n - k; j < n; j++ {
		t := r.IntN(j + 1)
		if has(t) {
			t = j
		}
		set[t/64] |= 1 << (t % 64)
	}
}

// hasBin reports whether the node has the binary.
func (f *simNodeFacts) hasBin(name string) bool {
	if f.prof.bins[name] {
		return true
	}
	i, ok := poolIndex(name, "bin", 3, binPool)
	return ok && f.bins[i/64]>>(i%64)&1 == 1
}

// hasEnv reports whether the env name is set on the node.
func (f *simNodeFacts) hasEnv(name string) bool {
	if f.prof.env[name] {
		return true
	}
	i, ok := poolIndex(name, "ENV_", 2, envPool)
	return ok && f.env[i/64]>>(i%64)&1 == 1
}

// info returns the identity the node sends in connect.
func (f *simNodeFacts) info(id string) protocol.NodeInfo {
	return protocol.NodeInfo{ID: id, OS: f.prof.OS, Roles: f.prof.Roles, Capabilities: f.prof.Capabilities}
}

// answer returns the facts.update for an interest: hostBinStatus for
// exactly the asked binaries, and the asked env names the node has.
func (f *simNodeFacts) answer(in protocol.Interest) protocol.FactsUpdate {
	u := protocol.FactsUpdate{Env: []string{}, HostBinStatus: make(map[string]bool, len(in.Bins))}
	for _, b := range in.Bins {
		u.HostBinStatus[b] = f.hasBin(b)
	}
	for _, e := range in.Env {
		if f.hasEnv(e) {
			u.Env = append(u.Env, e)
		}
	}
	return u
}

// appendFactsReq appends the req facts.update frame with this id that
// answers in, encoded directly: a frame for each of 10,000 nodes through
// encoding/json (a map of hundreds of names, sorted) was a large part of
// the simulator's CPU, which shares the machine with the gateway it
// measures. The params decode to answer(in).
func (f *simNodeFacts) appendFactsReq(dst []byte, id string, in protocol.Interest) []byte {
	dst = append(dst, `{"type":"req","id":`...)
	dst = appendJSONString(dst, id)
	dst = append(dst, `,"method":"facts.update","params":{"env":[`...)
	first := true
	for _, e := range in.Env {
		if f.hasEnv(e) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendJSONString(dst, e)
		}
	}
	dst = append(dst, `],"hostBinStatus":{`...)
	for i, b := range in.Bins {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, b)
		if f.hasBin(b) {
			dst = append(dst, ":true"...)
		} else {
			dst = append(dst, ":false"...)
		}
	}
	return append(dst, "}}}"...)
}

// appendJSONString appends s as a JSON string: as it is when it is
// printable ASCII without quotes or backslashes (every name the gateway
// asks for in practice), else through encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// probeProfile is the probe node's profile: an execution host whose only
// binary is probe-bin, so that it alone satisfies the probe skill.
func probeProfile() *profile {
	return &profile{
		Name: "probe", Weight: 1, OS: "linux", Roles: []string{protocol.RoleExecution},
		Capabilities: protocol.BaselineCapabilities, Bins: []string{probeBin},
		bins: map[string]bool{probeBin: true}, env: map[string]bool{},
	}
}

package gateway

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// benchServer is a gateway with nSkills global skills and nHosts hosts
// that reported facts, shaped like the eligibility benchmarks' fleet.
func benchServer(b *testing.B, nSkills, nHosts int) *Server {
	st, err := store.NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	bin := func() any { return fmt.Sprintf("bin%03d", r.IntN(300)) }
	snap := &snapshot{agents: map[string][]*skill.Skill{}}
	for i := range nSkills {
		dir := fmt.Sprintf("s%04d", i)
		req := map[string]any{"bins": []any{bin()}}
		if i%4 == 1 {
			req["env"] = []any{fmt.Sprintf("ENV_%02d", r.IntN(40))}
		}
		sk := &skill.Skill{Ref: skill.Ref{Key: skill.GlobalKey(dir), Dir: dir, Scope: skill.ScopeGlobal}, Name: dir,
			Description: "A synthetic skill with a description of typical length for the benchmark.", Requires: req}
		snap.global = append(snap.global, sk)
		snap.all = append(snap.all, sk)
	}
	s.mu.Lock()
	s.snap = snap
	s.rebuildLocked()
	s.notLoaded.Store(nil) // as refreshStore does once a snapshot is in
	for i := range nHosts {
		f := protocol.HostFacts{ID: fmt.Sprintf("host-%05d", i), OS: "linux", Roles: []string{"execution"},
			Capabilities: protocol.BaselineCapabilities, HostBinStatus: map[string]bool{}}
		for range 30 {
			f.HostBinStatus[bin().(string)] = true
		}
		for range 3 {
			f.Env = append(f.Env, fmt.Sprintf("ENV_%02d", r.IntN(40)))
		}
		s.hostChangedLocked(f.ID, nil, eligibility.NewHost(&f))
	}
	s.mu.Unlock()
	return s
}

// BenchmarkPromptBuild compares a cached prompt build (steady state) with
// one that must rebuild the block (after something changed).
func BenchmarkPromptBuild(b *testing.B) {
	for _, nHosts := range []int{1000, 10000} {
		s := benchServer(b, 1000, nHosts)
		b.Run(fmt.Sprintf("cached/skills=1000/hosts=%d", nHosts), func(b *testing.B) {
			s.promptFor("main")
			for b.Loop() {
				s.promptFor("main")
			}
		})
		// A miss under the default budget (30,000 bytes, 150 skills: the
		// 1,000 offered skills do not fit) ...
		b.Run(fmt.Sprintf("uncached/skills=1000/hosts=%d", nHosts), func(b *testing.B) {
			for b.Loop() {
				s.gen.Add(1)
				s.promptFor("main")
			}
		})
		// ... and without a budget (every skill whole), as before budgets.
		b.Run(fmt.Sprintf("uncached-unbudgeted/skills=1000/hosts=%d", nHosts), func(b *testing.B) {
			s.pol.file = &config.File{Gateway: config.Gateway{Prompt: config.Prompt{MaxChars: 1 << 30, MaxSkills: 1 << 20, Hosts: HostsNone}}}
			defer func() { s.pol.file = nil }()
			for b.Loop() {
				s.gen.Add(1)
				s.promptFor("main")
			}
		})
	}
}

// BenchmarkPromptBuildDeps is the uncached build of BenchmarkPromptBuild
// with dependencies between skills: every third skill names one or two
// others (requires.skills, requires.anySkills), so the dependency stage
// runs over the whole view at each build.
func BenchmarkPromptBuildDeps(b *testing.B) {
	s := benchServer(b, 1000, 10000)
	r := rand.New(rand.NewPCG(5, 6))
	s.mu.Lock()
	for i, sk := range s.snap.all {
		if i%3 != 0 {
			continue
		}
		req := sk.Requires.(map[string]any)
		req["skills"] = []any{fmt.Sprintf("s%04d", r.IntN(1000))}
		if i%2 == 0 {
			req["anySkills"] = []any{fmt.Sprintf("s%04d", r.IntN(1000)), fmt.Sprintf("s%04d", r.IntN(1000))}
		}
	}
	s.rebuildLocked()
	s.mu.Unlock()
	b.Run("uncached/skills=1000/hosts=10000", func(b *testing.B) {
		for b.Loop() {
			s.gen.Add(1)
			s.promptFor("main")
		}
	})
}

func BenchmarkNodeEvent(b *testing.B) {
	s := benchServer(b, 1000, 10000)
	f := protocol.HostFacts{ID: "host-00001", OS: "darwin", Roles: []string{"execution"},
		Capabilities: protocol.BaselineCapabilities, HostBinStatus: map[string]bool{"bin001": true, "bin002": true}}
	alt := eligibility.NewHost(&f)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.index.Get("host-00001")
	for b.Loop() {
		s.hostChangedLocked(f.ID, cur, alt)
		cur, alt = alt, cur
	}
}

// BenchmarkRebuild is the cost of a skills or config change at fleet scale:
// preparing every skill and recounting its hosts through the index.
func BenchmarkRebuild(b *testing.B) {
	s := benchServer(b, 1000, 10000)
	s.mu.Lock()
	defer s.mu.Unlock()
	for b.Loop() {
		s.rebuildLocked()
	}
}

// BenchmarkPromptHandler is a cached prompt build through the whole HTTP
// handler (routing, the Host check, auth, headers, gzip from the cache),
// without the network.
func BenchmarkPromptHandler(b *testing.B) {
	s := benchServer(b, 1000, 1000)
	req := httptest.NewRequest("GET", "http://127.0.0.1:7780/v1/agents/main/prompt", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	h := s.Handler()
	first := httptest.NewRecorder()
	h.ServeHTTP(first, req)
	b.Run("200", func(b *testing.B) {
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatal(w.Code)
			}
		}
	})
	// A client that has the block: If-None-Match, answered 304.
	cond := req.Clone(req.Context())
	cond.Header.Set("If-None-Match", first.Header().Get("ETag"))
	b.Run("304", func(b *testing.B) {
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, cond)
			if w.Code != 304 {
				b.Fatal(w.Code)
			}
		}
	})
}

// BenchmarkGovernanceScan scans a bucket of 1,000 skill directories, made
// from the real skills in testdata/openclaw-skills (each copy made unique
// by one line, so no two share a digest): cold is a gateway's first
// snapshot (every skill scanned, on every core); unchanged is a later
// snapshot where nothing changed (only digests are computed).
func BenchmarkGovernanceScan(b *testing.B) {
	sources := openClawSources(b)
	snap := &snapshot{inputs: map[*skill.Skill]*governance.Input{}}
	total := 0
	for i := range 1000 {
		dir := fmt.Sprintf("s%04d", i)
		sk := &skill.Skill{Ref: skill.Ref{Key: skill.GlobalKey(dir), Dir: dir, Scope: skill.ScopeGlobal}, Name: dir}
		md := append(bytes.Clone(sources[i%len(sources)]), fmt.Sprintf("\nCopy %d.\n", i)...)
		snap.all = append(snap.all, sk)
		snap.inputs[sk] = &governance.Input{SkillMD: md}
		total += len(md)
	}
	pol := governance.DefaultPolicy()
	counter := prometheus.NewCounter(prometheus.CounterOpts{Name: "scans"})
	b.Run("skills=1000/cold", func(b *testing.B) {
		b.SetBytes(int64(total))
		for range b.N {
			c := scanCache{scans: counter}
			c.scanSkills(snap, pol)
		}
	})
	b.Run("skills=1000/unchanged", func(b *testing.B) {
		c := scanCache{scans: counter}
		c.scanSkills(snap, pol)
		b.SetBytes(int64(total))
		b.ResetTimer()
		for range b.N {
			c.scanSkills(snap, pol)
		}
	})
}

// BenchmarkPollDirectory is one poll of a directory store of 1,000 skill
// directories (the OpenClaw skills, each with a script and a reference
// file beside it) that did not change: the listing (a stat of every
// file, whose ETag the loader compares with its cache), the loads from
// the cache, the fingerprint and the digests. content-hash is what a
// change detection by content would cost instead: reading and hashing
// every file of the bucket at every poll (issue 19, G6).
func BenchmarkPollDirectory(b *testing.B) {
	sources := openClawSources(b)
	root := b.TempDir()
	files, total := 0, 0
	write := func(key string, data []byte) {
		p := filepath.Join(root, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		files++
		total += len(data)
	}
	for i := range 1000 {
		dir := fmt.Sprintf("skills/s%04d/", i)
		write(dir+"SKILL.md", append(bytes.Clone(sources[i%len(sources)]), fmt.Sprintf("\nCopy %d.\n", i)...))
		write(dir+"scripts/run.sh", fmt.Appendf(nil, "#!/bin/sh\n# copy %d\n%s", i, bytes.Repeat([]byte("echo step\n"), 150)))
		write(dir+"references/notes.md", fmt.Appendf(nil, "# Notes %d\n\n%s", i, bytes.Repeat([]byte("Some reference text for the skill.\n"), 80)))
	}
	st, err := store.NewDir(root)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d files, %d bytes", files, total)
	l := catalog.NewLoader(st)
	c := scanCache{scans: prometheus.NewCounter(prometheus.CounterOpts{Name: "scans"})}
	pol := governance.DefaultPolicy()
	snap, _, err := loadSnapshot(b.Context(), st, l, nil)
	if err != nil {
		b.Fatal(err)
	}
	c.scanSkills(snap, pol)
	b.Run("skills=1000/unchanged", func(b *testing.B) {
		for b.Loop() {
			// As the poller does: the listing is the last snapshot's.
			next, same, err := loadSnapshot(b.Context(), st, l, snap)
			if err != nil || !same || next != snap {
				b.Fatal(same, err)
			}
		}
	})
	// Without the last snapshot (as before the listing was compared):
	// every skill loaded from the loader's cache and its content hashed
	// again for the scan cache.
	b.Run("skills=1000/unchanged-reloaded", func(b *testing.B) {
		for b.Loop() {
			snap, _, err := loadSnapshot(b.Context(), st, l, nil)
			if err != nil || len(snap.all) != 1000 {
				b.Fatal(len(snap.all), err)
			}
			c.scanSkills(snap, pol)
		}
		if s := l.Stats(); s.Gets != int64(files) {
			b.Fatalf("%d Gets, want %d (the first load only)", s.Gets, files)
		}
	})
	b.Run("skills=1000/content-hash", func(b *testing.B) {
		for b.Loop() {
			objs, err := st.List(b.Context(), "skills/")
			if err != nil || len(objs) != files {
				b.Fatal(len(objs), err)
			}
			for _, o := range objs {
				data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(o.Key)))
				if err != nil {
					b.Fatal(err)
				}
				sha256.Sum256(data)
			}
		}
	})
}

// openClawSources returns the SKILL.md of every skill in
// testdata/openclaw-skills, the real skills the benchmarks copy.
func openClawSources(b *testing.B) [][]byte {
	b.Helper()
	dirs, err := os.ReadDir("../testdata/openclaw-skills")
	if err != nil {
		b.Fatal(err)
	}
	var sources [][]byte
	for _, d := range dirs {
		if data, err := os.ReadFile(filepath.Join("../testdata/openclaw-skills", d.Name(), "SKILL.md")); err == nil {
			sources = append(sources, data)
		}
	}
	return sources
}

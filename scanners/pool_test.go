package scanners

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit"
)

func TestCache(t *testing.T) {
	a := Config{Name: "a", Exec: []string{"/a"}}
	b := Config{Name: "b", Exec: []string{"/b"}}
	ok := Result{Name: "a", Verdict: VerdictAllow, Findings: []Finding{}}
	c := NewCache(3)
	if c.Put("d0", &a, Result{Name: "a", Verdict: VerdictError, Error: "x"}) {
		t.Error("a failure was cached")
	}
	for i := range 3 {
		if !c.Put(fmt.Sprint("d", i), &a, ok) {
			t.Fatal("an answer was not cached")
		}
	}
	if _, hit := c.Get("d0", &b); hit {
		t.Error("another scanner's answer was returned")
	}
	c.Put("d0", &a, ok) // an update keeps its place
	c.Put("d3", &a, ok) // evicts d0, the oldest
	if _, hit := c.Get("d0", &a); hit || c.Len() != 3 {
		t.Errorf("d0 kept, len %d", c.Len())
	}
	for _, d := range []string{"d1", "d2", "d3"} {
		if r, hit := c.Get(d, &a); !hit || r.Verdict != VerdictAllow {
			t.Errorf("%s: %v %+v", d, hit, r)
		}
	}
	c.Put("d1", &b, ok) // evicts d1 of a
	fa := a.Fingerprint()
	c.Retain(func(digest, fp string) bool { return fp == fa && digest != "d2" })
	if c.Len() != 1 {
		t.Errorf("len %d after Retain", c.Len())
	}
	if _, hit := c.Get("d3", &a); !hit {
		t.Error("d3 dropped")
	}
	// Many puts after retains keep the order list bounded.
	for i := range 1000 {
		c.Put(strconv.Itoa(i), &a, ok)
		if i%10 == 0 {
			c.Retain(func(string, string) bool { return true })
		}
	}
	if c.Len() != 3 || len(c.order) > 2*3+64+1 {
		t.Errorf("len %d, order %d", c.Len(), len(c.order))
	}
}

// results collects a Pool's OnResult calls.
type results chan [2]any

func (ch results) on(digest string, r Result) { ch <- [2]any{digest, r} }

func (ch results) next(t *testing.T) (string, Result) {
	t.Helper()
	select {
	case x := <-ch:
		return x[0].(string), x[1].(Result)
	case <-time.After(20 * time.Second):
		t.Fatal("no result")
		return "", Result{}
	}
}

func TestPoolAnswersAreCached(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	cfg := shell(t, "ok", `echo run >> "$2"; echo '{"verdict": "warn", "findings": [{"rule": "r", "file": "SKILL.md", "line": 1}]}'`, runs)
	ch := make(results, 10)
	p := NewPool(PoolOptions{OnResult: ch.on})
	defer p.Close()
	if _, ok := p.Lookup("d1", &cfg); ok {
		t.Fatal("a result before any scan")
	}
	if !p.Schedule("d1", cfg, skillFiles()) {
		t.Fatal("not scheduled")
	}
	if p.Schedule("d1", cfg, skillFiles()) {
		t.Error("scheduled twice")
	}
	d, r := ch.next(t)
	if d != "d1" || r.Verdict != VerdictWarn {
		t.Fatalf("%s %+v", d, r)
	}
	got, ok := p.Lookup("d1", &cfg)
	if !ok || got.Verdict != VerdictWarn || got.Findings[0].Rule != "r" || p.Pending("d1", &cfg) {
		t.Fatalf("lookup %v %+v", ok, got)
	}
	if p.Schedule("d1", cfg, skillFiles()) {
		t.Error("an answered scan scheduled again")
	}
	// Another config of the same name is another scanner.
	cfg2 := cfg
	cfg2.Timeout = 5 * time.Second
	if _, ok := p.Lookup("d1", &cfg2); ok {
		t.Error("an answer under another config")
	}
	if b, _ := os.ReadFile(runs); strings.Count(string(b), "run") != 1 {
		t.Errorf("runs: %q", b)
	}
	if p.Cache().Len() != 1 {
		t.Errorf("cache len %d", p.Cache().Len())
	}
}

func TestPoolFailuresAreRetried(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "flag")
	cfg := shell(t, "flaky", `if [ -e "$2" ]; then echo '{"verdict": "allow"}'; else touch "$2"; echo boom >&2; exit 1; fi`, flag)
	ch := make(results, 10)
	p := NewPool(PoolOptions{OnResult: ch.on, Cache: NewCache(10)})
	defer p.Close()
	p.Schedule("d", cfg, skillFiles())
	if _, r := ch.next(t); r.Error != `exit status 1 and no answer; stderr: "boom"` {
		t.Fatalf("%+v", r)
	}
	// The failure is reported until an answer replaces it, and not cached.
	if r, ok := p.Lookup("d", &cfg); !ok || !r.Failed() || p.Cache().Len() != 0 {
		t.Fatalf("lookup %v %+v, cache %d", ok, r, p.Cache().Len())
	}
	if !p.Schedule("d", cfg, skillFiles()) {
		t.Fatal("a failure was not retried")
	}
	if r, ok := p.Lookup("d", &cfg); !ok || !r.Failed() {
		t.Errorf("while retrying: %v %+v", ok, r)
	}
	if _, r := ch.next(t); r.Verdict != VerdictAllow {
		t.Fatalf("%+v", r)
	}
	if r, ok := p.Lookup("d", &cfg); !ok || r.Verdict != VerdictAllow || p.Cache().Len() != 1 {
		t.Errorf("after the retry: %v %+v", ok, r)
	}
}

// At most Concurrency scans at once, and lookups never wait for them.
func TestPoolConcurrency(t *testing.T) {
	running := t.TempDir()
	cfg := shell(t, "count", `
mkdir "$2/$$"
sleep 0.4
n=$(ls "$2" | wc -l)
sleep 0.2
rmdir "$2/$$"
printf '{"verdict": "allow", "findings": [{"rule": "%s"}]}' "$n"
`, running)
	ch := make(results, 10)
	p := NewPool(PoolOptions{Concurrency: 2, OnResult: ch.on})
	defer p.Close()
	for i := range 6 {
		if !p.Schedule(fmt.Sprint("d", i), cfg, skillFiles()) {
			t.Fatal("not scheduled")
		}
	}
	start := time.Now()
	for i := range 6 {
		if _, ok := p.Lookup(fmt.Sprint("d", i), &cfg); ok {
			t.Errorf("d%d answered at once", i)
		}
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("lookups took %v", d)
	}
	most := 0
	for range 6 {
		_, r := ch.next(t)
		n, err := strconv.Atoi(r.Findings[0].Rule)
		if err != nil {
			t.Fatalf("%+v", r)
		}
		most = max(most, n)
	}
	if most != 2 {
		t.Errorf("at most %d scans at once, want 2", most)
	}
}

// Retain drops and cancels scans of contents no longer current; Close
// cancels the rest.
func TestPoolRetainAndClose(t *testing.T) {
	slow := shell(t, "slow", "sleep 300\n")
	ch := make(results, 10)
	p := NewPool(PoolOptions{Concurrency: 1, OnResult: ch.on})
	p.Schedule("old1", slow, skillFiles()) // running
	p.Schedule("old2", slow, skillFiles()) // queued
	p.Schedule("new", slow, skillFiles())  // queued
	testkit.Until(t, 10*time.Second, "old1 pending", func() bool { return p.Pending("old1", &slow) })
	p.Retain(func(digest, _ string) bool { return digest == "new" })
	if p.Pending("old1", &slow) || p.Pending("old2", &slow) || !p.Pending("new", &slow) {
		t.Error("pending after Retain")
	}
	// "new" starts once old1's scan has been killed.
	testkit.Until(t, 10*time.Second, "new running, nothing queued", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.running == 1 && len(p.queue) == 0
	})
	start := time.Now()
	p.Close()
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v", d)
	}
	select {
	case x := <-ch:
		t.Errorf("a canceled scan reported %v", x)
	default:
	}
	if p.Schedule("later", slow, skillFiles()) {
		t.Error("scheduled after Close")
	}
	if _, ok := p.Lookup("new", &slow); ok {
		t.Error("a canceled scan has a result")
	}
}

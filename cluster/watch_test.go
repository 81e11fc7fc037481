package cluster

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// entry is a KeyValueEntry as the watch delivers it.
type entry struct {
	key   string
	value []byte
	rev   uint64
	op    jetstream.KeyValueOp
}

func (e *entry) Bucket() string                  { return "test" }
func (e *entry) Key() string                     { return e.key }
func (e *entry) Value() []byte                   { return e.value }
func (e *entry) Revision() uint64                { return e.rev }
func (e *entry) Created() time.Time              { return time.Now() }
func (e *entry) Delta() uint64                   { return 0 }
func (e *entry) Operation() jetstream.KeyValueOp { return e.op }

// discard is a Handler that keeps nothing.
type discard struct{ puts, deletes int }

func (d *discard) Put(*Record)   { d.puts++ }
func (d *discard) Delete(string) { d.deletes++ }

func (d *discard) DeleteMany(ids []string) { d.deletes += len(ids) }

// testMirror is a watch loop without NATS, for what it does with entries.
func testMirror(h Handler) *mirror {
	m := &Member{
		cfg:   Config{Replica: "me", TTL: time.Minute, MaxRemote: DefaultMaxRemote},
		inc:   "this-run",
		seal:  sealer{secret: testSecret, bucket: "test"},
		h:     h,
		log:   slog.New(slog.DiscardHandler),
		seed:  maphash.MakeSeed(),
		epoch: time.Now(),
		local: map[string]*local{},
		gone:  map[string]tombstone{},
	}
	m.refusals.every = time.Minute
	return newMirror(m)
}

// sealed is rec as a replica of w's cluster writes it under key now.
func (w *mirror) sealed(t testing.TB, key string, rec *Record) []byte {
	return w.m.seal.seal(w.mac, key, encodeRecord(t, rec), time.Now())
}

func TestRemoteMemory(t *testing.T) {
	const n = 20_000
	h := &discard{}
	w := testMirror(h)
	values := make([][]byte, n)
	for i := range n {
		id := fmt.Sprintf("host-%06d.example.com", i)
		values[i] = w.sealed(t, id, as(testRecord(id, time.Now()), "other"))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		w.apply(&entry{key: fmt.Sprintf("host-%06d.example.com", i), value: values[i], rev: uint64(i + 1)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(values)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes a remote record", per)
	if h.puts != n || len(w.remotes) != n {
		t.Fatalf("%d puts, %d remote records; want %d", h.puts, len(w.remotes), n)
	}
	if per > 256 {
		t.Errorf("%d bytes a remote record, want at most 256", per)
	}
}

func TestApply(t *testing.T) {
	h := newRecorder()
	w := testMirror(h)
	rec := as(testRecord("n1", time.Now()), "other")
	b := w.sealed(t, "n1", rec)
	changed := as(testRecord("n1", rec.ConnectedAt, "PATH"), "other")
	c := w.sealed(t, "n1", changed)
	mine := as(testRecord("n2", time.Now()), "me")
	d := w.sealed(t, "n2", mine)

	renewed := w.sealed(t, "n1", rec) // signed again, the same record

	w.apply(&entry{key: "n1", value: b, rev: 1})
	w.apply(&entry{key: "n1", value: renewed, rev: 2}) // a renewal
	w.apply(&entry{key: "n1", value: c, rev: 3})       // a change
	w.apply(&entry{key: "n2", value: d, rev: 4})       // ours, from a run before
	w.apply(&entry{key: "n3", rev: 5, op: jetstream.KeyValueDelete})
	w.apply(&entry{key: "n2", rev: 6, op: jetstream.KeyValueDelete})
	w.apply(&entry{key: "=!!", rev: 7, op: jetstream.KeyValuePurge})
	w.apply(&entry{key: "n4", value: b, rev: 8}) // under the wrong key: not signed for it
	if got, want := fmt.Sprint(h.events()), "[put n1 other put n1 other put n2 me delete n2]"; got != want {
		t.Errorf("Handler got %s, want %s", got, want)
	}
	sameRecord(t, "n1", h.get("n1"), changed)

	// Expiry: n1 not renewed within the TTL.
	w.sweep(time.Now())
	if h.get("n1") == nil {
		t.Fatal("n1 expired early")
	}
	w.sweep(time.Now().Add(w.m.cfg.TTL + time.Second))
	if h.get("n1") != nil || len(w.remotes) != 0 || w.m.remoteN.Load() != 0 {
		t.Errorf("n1 not expired: %d remote", len(w.remotes))
	}

	// A replay that leaves a record out (a NATS restart lost the bucket)
	// keeps it until the sweep: its replica writes it again within
	// moments, or it goes a TTL after it was last seen.
	w.apply(&entry{key: "n1", value: b, rev: 9})
	w.replaying = true
	w.apply(&entry{key: "n2", value: d, rev: 10})
	w.endReplay()
	if h.get("n1") == nil || h.get("n2") == nil {
		t.Errorf("after the replay: n1 %v, n2 %v; want both kept", h.get("n1"), h.get("n2"))
	}
	w.sweep(time.Now().Add(w.m.cfg.TTL + time.Second))
	if h.get("n1") != nil || h.get("n2") != nil {
		t.Errorf("a TTL later: n1 %v, n2 %v; want both expired", h.get("n1"), h.get("n2"))
	}
}

// beatEntry is the heartbeat of replica name, incarnation inc, signed at
// at, as an entry of w's bucket.
func (w *mirror) beatEntry(t testing.TB, name, inc string, at time.Time, rev uint64) *entry {
	b, err := json.Marshal(&heartbeat{Replica: name, Incarnation: inc, TTLMs: w.m.cfg.TTL.Milliseconds(), Since: at.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	key := HeartbeatPrefix + inc
	return &entry{key: key, value: w.m.seal.seal(w.mac, key, b, at), rev: rev}
}

// record is rec of incarnation inc as an entry of w's bucket.
func (w *mirror) record(t testing.TB, rec *Record, inc string, rev uint64) *entry {
	b, err := json.Marshal(&wireRecord{Record: *rec, Incarnation: inc})
	if err != nil {
		t.Fatal(err)
	}
	return &entry{key: Key(rec.ID), value: w.m.seal.seal(w.mac, Key(rec.ID), b, time.Now()), rev: rev}
}

// TestHeartbeats: the records of an incarnation live while its heartbeat
// does; a lapse drops them all, unless another incarnation of the same
// replica name lives; a copy of an older heartbeat counts for nothing.
func TestHeartbeats(t *testing.T) {
	h := newRecorder()
	w := testMirror(h)
	ttl := w.m.cfg.TTL
	// pass makes d go by for the mirror (its monotonic origin moves back).
	pass := func(d time.Duration) { w.m.epoch = w.m.epoch.Add(-d) }
	// beat is a heartbeat signed now, in a later millisecond than any before.
	beat := func(name, inc string, rev uint64) *entry {
		time.Sleep(2 * time.Millisecond)
		return w.beatEntry(t, name, inc, time.Now(), rev)
	}
	now := time.Now()
	w.apply(beat("other", "i1", 1))
	w.apply(w.record(t, as(testRecord("n1", now), "other"), "i1", 2))
	w.apply(w.record(t, as(testRecord("n2", now), "other"), "i1", 3))
	third := beat("third", "j1", 4)
	w.apply(third)
	w.apply(w.record(t, as(testRecord("n3", now), "third"), "j1", 5))
	if h.len() != 3 {
		t.Fatalf("%d records delivered, want 3", h.len())
	}
	pass(ttl / 2)
	w.sweep(time.Now())
	if h.len() != 3 || w.m.replicas.Load() != 2 {
		t.Fatalf("half a TTL on: %d records, %d replicas", h.len(), w.m.replicas.Load())
	}
	// other restarts as i2 before i1 lapses; third beats on.
	w.apply(beat("other", "i2", 6))
	third2 := beat("third", "j1", 7)
	w.apply(third2)
	pass(ttl/2 + time.Second)
	w.apply(beat("other", "i2", 8))
	w.apply(beat("third", "j1", 9))
	w.sweep(time.Now())
	if h.len() != 3 {
		t.Fatalf("after i1 lapsed with i2 alive: %d records, want 3 (i2 takes them back)", h.len())
	}
	// An older copy of third's heartbeat is refused and keeps nothing.
	before := w.m.Refused()[RefusedTime]
	w.apply(third)
	if w.m.Refused()[RefusedTime] != before+1 {
		t.Error("an older heartbeat copy was not refused")
	}
	// third stops; other beats on.
	pass(ttl + time.Second)
	w.apply(beat("other", "i2", 10))
	w.sweep(time.Now())
	if h.get("n3") != nil || h.get("n1") == nil || h.get("n2") == nil {
		t.Errorf("after third lapsed: n3 %v, n1 %v; want n3 dropped, n1 and n2 kept", h.get("n3"), h.get("n1"))
	}
	if w.m.replicas.Load() != 1 {
		t.Errorf("%d replicas, want 1", w.m.replicas.Load())
	}
	// other stops too: i1's records go with i2.
	pass(ttl + time.Second)
	w.sweep(time.Now())
	if h.len() != 0 {
		t.Errorf("%d records after every other replica lapsed", h.len())
	}
	// A new watch reads third's last heartbeat again: not refused.
	before = w.m.Refused()[RefusedTime]
	w.replaying = true
	w.apply(w.beatEntry(t, "third", "j1", time.Now(), 11))
	w.replaying = false
	if w.m.Refused()[RefusedTime] != before {
		t.Error("a later heartbeat of a replica dropped was refused")
	}
}

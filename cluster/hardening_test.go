package cluster

// Issue 19's attacks on the bucket, each on a real NATS server: whoever
// can write the bucket (but holds no cluster secret) forging records, a
// record whose times no replica could write, the bucket deleted or made
// again with settings under which replicas cannot write, and records or
// buckets too large.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
)

// encodeRecord is rec as JSON, as a replica's record holds it.
func encodeRecord(t testing.TB, rec *Record) []byte {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForgedRecordsRefused: someone who may write the bucket adds a node
// no replica holds, and keeps a real node kicked off with a connectedAt in
// 2099 rewritten ten times a second. Neither reaches any replica; the real
// node stays held and renewed by its replica.
func TestForgedRecordsRefused(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, ha, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	real := testRecord("n1", time.Now())
	a.Publish(real)
	testkit.Until(t, 5*time.Second, "b sees n1", func() bool { return hb.get("n1") != nil })

	kv := bucketKV(t, srv)
	ghost := encodeRecord(t, as(testRecord("ghost", time.Now()), "b"))
	kick := encodeRecord(t, as(testRecord("n1", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)), "mallory"))
	// Signed too, but with a secret of the attacker's own.
	mallory := &sealer{secret: Secret("not the cluster's secret, but 32 bytes long"), bucket: testBucket(t)}
	var ghosted, kicked, superseded bool
	until := time.Now().Add(3 * testTTL)
	for i := 0; time.Now().Before(until) && !(ghosted && kicked && superseded); i++ {
		g, k := ghost, kick
		if i%2 == 1 {
			g, k = mallory.seal(mallory.newHash(), "ghost", ghost, time.Now()), mallory.seal(mallory.newHash(), "n1", kick, time.Now())
		}
		if _, err := kv.Put(t.Context(), "ghost", g); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(t.Context(), "n1", k); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if !ghosted && (ha.get("ghost") != nil || hb.get("ghost") != nil) {
			ghosted = true
			t.Error("a forged record of a node no replica holds was delivered")
		}
		if r := hb.get("n1"); !kicked && (r == nil || r.Replica != "a") {
			kicked = true
			t.Errorf("b's record of n1 is %s, want a's", show(r))
		}
		if st := a.State(); !superseded && st.Local != 1 {
			superseded = true
			t.Errorf("a.State() = %+v: a stopped renewing n1 for a forged newer connection", st)
		}
	}
	if ev := ha.events(); len(ev) != 0 {
		t.Errorf("a's Handler got %q", ev)
	}
	for _, m := range []*Member{a, b} {
		if r := m.Refused(); r[RefusedUnsigned] < 10 || r[RefusedSignature] < 10 {
			t.Errorf("%s.Refused() = %v; want every forged record counted", m.cfg.Replica, r)
		}
	}
	if st := b.State(); !st.Connected {
		t.Errorf("b.State() = %+v", st)
	}
}

// TestRecordTimesBounded: a record whose connectedAt or factsAt is out of
// what a replica writes (a year past 9999 in UTC, which no JSON encoder
// writes back; later than now + TTL) is refused, never delivered.
func TestRecordTimesBounded(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	kv := bucketKV(t, srv)
	now := time.Now().UTC().Round(0)
	// Signed with the cluster's secret: only the times are wrong, as
	// from a replica with a broken clock, or one that was broken into.
	s := testSealer(t)
	year10000 := func(field string) []byte {
		id := "n-" + strings.ToLower(field)
		var m map[string]any
		if err := json.Unmarshal(encodeRecord(t, as(testRecord(id, now), "a")), &m); err != nil {
			t.Fatal(err)
		}
		// A valid RFC 3339 time, in year 10000 in UTC.
		m[field] = "9999-12-31T23:59:59-23:59"
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return s.seal(s.newHash(), id, b, time.Now())
	}
	future := signed(t, as(testRecord("n-future", now.Add(time.Hour)), "a"))
	for key, v := range map[string][]byte{
		"n-connectedat": year10000("connectedAt"),
		"n-factsat":     year10000("factsAt"),
		"n-future":      future,
	} {
		if _, err := kv.Put(t.Context(), key, v); err != nil {
			t.Fatal(err)
		}
	}
	// A good record written after them is delivered: they were seen.
	good := testRecord("n-good", now)
	a.Publish(good)
	testkit.Until(t, 5*time.Second, "b sees n-good", func() bool { return hb.get("n-good") != nil })
	for _, id := range []string{"n-connectedat", "n-factsat", "n-future"} {
		if r := hb.get(id); r != nil {
			t.Errorf("b got %s: %s", id, show(r))
		}
	}
	if r := b.Refused(); r[RefusedTime] != 3 {
		t.Errorf("b.Refused() = %v, want 3 for their time", r)
	}
}

// TestBucketDeletedWatchReopened: the bucket deleted under the replicas
// (an operator, or anyone allowed to) is made again, and each replica
// follows the new one: a replica holding no node, which never writes,
// sees the nodes published after the deletion.
func TestBucketDeletedWatchReopened(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, b, hb, _ := twoReplicas(t, srv)

	js := bucketKVConn(t, srv)
	if err := js.DeleteKeyValue(t.Context(), testBucket(t)); err != nil {
		t.Fatal(err)
	}
	a.Publish(testRecord("n2", time.Now()))
	testkit.Until(t, 5*testTTL, "b sees n2, published after the bucket was deleted", func() bool { return hb.get("n2") != nil })
	testkit.Until(t, 5*testTTL, "b in sync", func() bool { return b.State().Connected })
	testkit.Until(t, 5*testTTL, "b sees n1 again", func() bool { return hb.get("n1") != nil })
	stays(t, 2*testTTL, "b keeps n1 and n2", func() bool { return hb.get("n1") != nil && hb.get("n2") != nil })
}

// TestBucketRecreatedWithTinyValues: the bucket deleted and made again
// with a maximum value size no record fits in: every write fails, so the
// replicas no longer see each other. They say so (not connected, naming
// the bucket's setting) instead of "ok".
func TestBucketRecreatedWithTinyValues(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, b, _, _ := twoReplicas(t, srv)

	js := bucketKVConn(t, srv)
	if err := js.DeleteKeyValue(t.Context(), testBucket(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{
		Bucket: testBucket(t), TTL: testTTL, History: 1, Storage: jetstream.MemoryStorage, MaxValueSize: 16,
	}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Member{a, b} {
		testkit.Until(t, 5*testTTL, "member "+m.cfg.Replica+" says the bucket cannot be used", func() bool {
			st := m.State()
			return !st.Connected && strings.Contains(st.Reason, "max value size")
		})
	}
}

// TestExistingBucketTinyValuesRefused: a bucket found with a maximum
// value size under a record's is refused at once, naming the setting.
func TestExistingBucketTinyValuesRefused(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	js := bucketKVConn(t, srv)
	if _, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{
		Bucket: testBucket(t), TTL: testTTL, History: 1, Storage: jetstream.MemoryStorage, MaxValueSize: 100,
	}); err != nil {
		t.Fatal(err)
	}
	a, _, _ := join(t, srv, "a", testTTL)
	testkit.Until(t, 5*time.Second, "a refuses the bucket", func() bool {
		st := a.State()
		return !st.Connected && strings.Contains(st.Reason, "max value size")
	})
	stays(t, 2*testTTL, "a not connected", func() bool { return !a.State().Connected })
}

// TestWriteFailuresNotReady: the bucket full (someone filled it): the
// replica's writes fail, and it is not ready, saying why, until a write
// succeeds again.
func TestWriteFailuresNotReady(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	js := bucketKVConn(t, srv)
	kv, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{
		Bucket: testBucket(t), History: 1, Storage: jetstream.MemoryStorage,
		MaxValueSize: MaxRecordBytes, MaxBytes: 2 * MaxRecordBytes,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Filled with values smaller and smaller, until not even a short one
	// fits.
	n := 0
	for size := 64 << 10; size >= 16; size /= 4 {
		for {
			if _, err := kv.Put(t.Context(), fmt.Sprintf("junk%d", n), make([]byte, size)); err != nil {
				break
			}
			if n++; n > 10000 {
				t.Fatal("the bucket never filled up")
			}
		}
	}
	t.Logf("full after %d junk values", n)
	a, _, _ := join(t, srv, "a", testTTL)
	waitConnected(t, a)
	a.Publish(testRecord("n1", time.Now()))
	testkit.Until(t, 5*testTTL, "a not ready while its writes fail", func() bool {
		st := a.State()
		return !st.Connected && strings.Contains(st.Reason, "writing")
	})
	// Room again: ready.
	for i := range n {
		if err := kv.Purge(t.Context(), fmt.Sprintf("junk%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Until(t, 5*testTTL, "a ready again", func() bool { return a.State().Connected })
}

// TestBucketBounded: the bucket a replica creates bounds its bytes and
// each value, so that whoever may write it cannot fill NATS's memory or
// the replicas' with huge records.
func TestBucketBounded(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", testTTL)
	waitConnected(t, a)
	kv := bucketKV(t, srv)
	st, err := kv.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	info := st.(*jetstream.KeyValueBucketStatus).StreamInfo()
	if info.Config.MaxBytes != BucketMaxBytes || info.Config.MaxMsgSize != MaxRecordBytes {
		t.Errorf("the bucket's max bytes %d, max value size %d; want %d and %d",
			info.Config.MaxBytes, info.Config.MaxMsgSize, BucketMaxBytes, MaxRecordBytes)
	}
	if _, err := kv.Put(t.Context(), "huge", make([]byte, 700<<10)); err == nil {
		t.Error("a 700 KiB value was written to the bucket")
	}
}

// TestRecordCopiedBack: a copy of an older state of a node's record,
// written back while the node is still held, is written over at once by
// its replica (not at its next renewal: with a TTL of 10 s, not before
// 1.6 s).
func TestRecordCopiedBack(t *testing.T) {
	t.Parallel()
	const ttl = 10 * time.Second
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", ttl)
	b, hb, _ := join(t, srv, "b", ttl)
	waitConnected(t, a, b)
	kv := bucketKV(t, srv)

	// n1's first facts, copied; then new facts.
	r1 := testRecord("n1", time.Now())
	a.Publish(r1)
	testkit.Until(t, 5*time.Second, "b sees n1", func() bool { return hb.get("n1") != nil })
	e, err := kv.Get(t.Context(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	copied := e.Value()
	a.Publish(testRecord("n1", r1.ConnectedAt, "HOME", "PATH"))
	testkit.Until(t, 5*time.Second, "b sees n1's new facts", func() bool { return len(hb.get("n1").Env) == 2 })
	if _, err := kv.Put(t.Context(), "n1", copied); err != nil {
		t.Fatal(err)
	}
	testkit.Until(t, time.Second, "a writes n1's facts back over the copy", func() bool {
		r, err := bucketRecord(t, kv, "n1")
		return err == nil && len(r.Env) == 2
	})
	testkit.Until(t, time.Second, "b back on n1's new facts", func() bool { return len(hb.get("n1").Env) == 2 })
}

// TestRecordCopiedBackLater: the record of a node that left, copied from
// the bucket and written back once it was signed more than twice the TTL
// ago, is refused: the node does not come back.
func TestRecordCopiedBackLater(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	kv := bucketKV(t, srv)
	r1 := testRecord("n1", time.Now())
	a.Publish(r1)
	testkit.Until(t, 5*time.Second, "b sees n1", func() bool { return hb.get("n1") != nil })
	e, err := kv.Get(t.Context(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	copied := e.Value()
	a.Withdraw("n1", r1.ConnectedAt)
	testkit.Until(t, 5*time.Second, "b drops n1", func() bool { return hb.get("n1") == nil })
	time.Sleep(2*testTTL + 100*time.Millisecond)
	before := b.Refused()[RefusedTime]
	if _, err := kv.Put(t.Context(), "n1", copied); err != nil {
		t.Fatal(err)
	}
	testkit.Until(t, 5*time.Second, "the copy refused for its time", func() bool { return b.Refused()[RefusedTime] > before })
	if hb.get("n1") != nil {
		t.Error("b brought back n1 from a copy of its record")
	}
}

// TestRemoteCap: past gateway.cluster.maxRemoteNodes, new remote records
// are refused and counted; the ones held stay.
func TestRemoteCap(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", testTTL)
	b, hb, logs := joinWith(t, srv, Config{Replica: "b", TTL: testTTL, MaxRemote: 3})
	waitConnected(t, a, b)
	for i := range 5 {
		a.Publish(testRecord(fmt.Sprint("n", i), time.Now()))
	}
	testkit.Until(t, 5*time.Second, "b refuses two", func() bool { return b.Refused()[RefusedFull] >= 2 })
	stays(t, 2*testTTL, "b holds 3", func() bool { return hb.len() == 3 && b.State().Remote == 3 })
	if n := strings.Count(logs.String(), "holding the most remote records allowed"); n != 1 {
		t.Errorf("logged %d times, want once", n)
	}
}

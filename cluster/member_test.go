package cluster

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
)

const testTTL = time.Second

func TestPublishWithdraw(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, ha, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	// The Handlers call into their Member: a Handler called under the
	// Member's mutex would deadlock here.
	ha.probe = func() { a.State() }
	hb.probe = func() { b.State() }
	waitConnected(t, a, b)

	r1 := testRecord("n1", time.Now())
	a.Publish(r1)
	testkit.Until(t, 5*time.Second, "b sees n1", func() bool { return hb.get("n1") != nil })
	sameRecord(t, "b's record of n1", hb.get("n1"), as(r1, "a"))

	// A change of facts is delivered; the same record again is not.
	r1b := testRecord("n1", r1.ConnectedAt, "HOME", "PATH")
	a.Publish(r1b)
	a.Publish(r1b)
	testkit.Until(t, 5*time.Second, "b sees n1's new facts", func() bool { return len(hb.get("n1").Env) == 2 })
	sameRecord(t, "b's record of n1", hb.get("n1"), as(r1b, "a"))

	// A node with an id that is not a key of its own.
	r2 := testRecord("n 2/ü", time.Now())
	r2.ID = "n 2 ü"
	b.Publish(r2)
	testkit.Until(t, 5*time.Second, "a sees n 2 ü", func() bool { return ha.get("n 2 ü") != nil })
	sameRecord(t, "a's record of n 2 ü", ha.get("n 2 ü"), as(r2, "b"))

	if st := a.State(); !st.Connected || st.Reason != "" || st.Local != 1 || st.Remote != 1 {
		t.Errorf("a.State() = %+v, want connected, 1 local, 1 remote", st)
	}

	// A withdraw of another connection does nothing.
	a.Withdraw("n1", r1.ConnectedAt.Add(-time.Second))
	a.Withdraw("n1", r1.ConnectedAt)
	testkit.Until(t, 5*time.Second, "b sees n1 go", func() bool { return hb.get("n1") == nil })
	b.Withdraw("n 2 ü", r2.ConnectedAt)
	testkit.Until(t, 5*time.Second, "a sees n 2 ü go", func() bool { return ha.get("n 2 ü") == nil })

	if got, want := strings.Join(hb.events(), "; "), "put n1 a; put n1 a; delete n1"; got != want {
		t.Errorf("b's Handler got %q, want %q", got, want)
	}
	if got, want := strings.Join(ha.events(), "; "), "put n 2 ü b; delete n 2 ü"; got != want {
		t.Errorf("a's Handler got %q, want %q", got, want)
	}
	kv := bucketKV(t, srv)
	for _, id := range []string{"n1", "n 2 ü"} {
		if _, err := kv.Get(t.Context(), Key(id)); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Errorf("the bucket's %s after Withdraw: %v, want ErrKeyNotFound", id, err)
		}
	}
	if st := a.State(); st.Local != 0 || st.Remote != 0 {
		t.Errorf("a.State() = %+v, want nothing held", st)
	}
}

// TestNoRenewal: a record is written once and left alone while nothing
// changes; the replica's heartbeat is what is renewed (every TTL/3), and
// keeps the record alive on the other replicas.
func TestNoRenewal(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	r := testRecord("n1", time.Now())
	a.Publish(r)
	testkit.Until(t, 5*time.Second, "b sees n1", func() bool { return hb.get("n1") != nil })
	kv := bucketKV(t, srv)
	first, err := kv.Get(t.Context(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	beat, err := kv.Get(t.Context(), HeartbeatPrefix+a.inc)
	if err != nil {
		t.Fatalf("a's heartbeat: %v", err)
	}
	// Past twice the TTL, the record is alive on b, never written again.
	stays(t, 2*testTTL+testTTL/2, "b holds n1", func() bool { return hb.get("n1") != nil })
	last, err := kv.Get(t.Context(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	if last.Revision() != first.Revision() {
		t.Errorf("n1 written again while nothing changed: revision %d then %d", first.Revision(), last.Revision())
	}
	beat2, err := kv.Get(t.Context(), HeartbeatPrefix+a.inc)
	if err != nil {
		t.Fatal(err)
	}
	if beat2.Revision() <= beat.Revision() {
		t.Errorf("a's heartbeat not renewed: revision %d then %d", beat.Revision(), beat2.Revision())
	}
	if puts, deletes := hb.counts(); puts != 1 || deletes != 0 {
		t.Errorf("b's Handler: %d puts, %d deletes; want 1, 0", puts, deletes)
	}
	if st := b.State(); st.Replicas != 1 {
		t.Errorf("b.State() = %+v, want 1 other replica", st)
	}
}

func TestCloseWithoutWithdraw(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, _, hb, _ := twoReplicas(t, srv)
	if err := a.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := a.Close(t.Context()); err != nil {
		t.Fatalf("Close again: %v", err)
	}
	if st := a.State(); st.Connected || st.Reason != "nats: closed" {
		t.Errorf("a.State() after Close = %+v", st)
	}
	closed := time.Now()
	testkit.Until(t, testTTL+time.Second, "b drops n1 within the TTL", func() bool { return hb.get("n1") == nil })
	t.Logf("n1 dropped %v after Close", time.Since(closed).Round(time.Millisecond))
	a.Publish(testRecord("n2", time.Now())) // ignored after Close, no panic
}

func TestNewestConnectionWins(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, ha, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	kv := bucketKV(t, srv)
	t0 := time.Now()

	// n1 connects to a, then to b: b's newer connection wins.
	older, newer := testRecord("n1", t0), testRecord("n1", t0.Add(time.Second), "NEWER")
	a.Publish(older)
	testkit.Until(t, 5*time.Second, "b sees a's n1", func() bool { return hb.get("n1") != nil })
	b.Publish(newer)
	testkit.Until(t, 5*time.Second, "a gets b's n1", func() bool {
		r := ha.get("n1")
		return r != nil && r.Replica == "b"
	})
	sameRecord(t, "a's record of n1", ha.get("n1"), as(newer, "b"))
	testkit.Until(t, 5*time.Second, "b drops a's n1", func() bool { return hb.get("n1") == nil })
	testkit.Until(t, 5*time.Second, "a stops renewing n1", func() bool { return a.State().Local == 0 })

	// n2 connects to a, then an older connection of it is published by
	// b (published late): a's newer connection still wins.
	older2, newer2 := testRecord("n2", t0), testRecord("n2", t0.Add(time.Second))
	a.Publish(newer2)
	testkit.Until(t, 5*time.Second, "b sees a's n2", func() bool { return hb.get("n2") != nil })
	b.Publish(older2)
	testkit.Until(t, 5*time.Second, "b stops renewing n2", func() bool { return b.State().Local == 1 })

	// Past twice the TTL, the bucket holds the newer connections, each
	// replica the other's, and nothing flaps.
	putsA, _ := ha.counts()
	stays(t, 2*testTTL, "the newer connections stay", func() bool {
		r1, r2 := hb.get("n2"), ha.get("n1")
		return r1 != nil && r1.Replica == "a" && r2 != nil && r2.Replica == "b"
	})
	for _, c := range []struct {
		id   string
		want *Record
	}{{"n1", as(newer, "b")}, {"n2", as(newer2, "a")}} {
		got, err := bucketRecord(t, kv, c.id)
		if err != nil {
			t.Fatal(err)
		}
		sameRecord(t, "the bucket's "+c.id, got, c.want)
	}
	sameRecord(t, "b's record of n2", hb.get("n2"), as(newer2, "a"))
	if puts, _ := ha.counts(); puts != putsA {
		t.Errorf("a's Handler got %d more puts while nothing changed", puts-putsA)
	}
	if st := a.State(); st.Local != 1 || st.Remote != 1 {
		t.Errorf("a.State() = %+v, want 1 local (n2), 1 remote (n1)", st)
	}
	if st := b.State(); st.Local != 1 || st.Remote != 1 {
		t.Errorf("b.State() = %+v, want 1 local (n1), 1 remote (n2)", st)
	}

	// The old connection leaving changes nothing; the newer one leaving
	// deletes the key.
	a.Withdraw("n1", older.ConnectedAt)
	b.Withdraw("n2", older2.ConnectedAt)
	b.Withdraw("n1", newer.ConnectedAt)
	testkit.Until(t, 5*time.Second, "a sees n1 go", func() bool { return ha.get("n1") == nil })
	if hb.get("n2") == nil {
		t.Error("b's withdraw of its old n2 connection removed a's n2")
	}
	if _, err := kv.Get(t.Context(), "n2"); err != nil {
		t.Errorf("the bucket's n2: %v", err)
	}
}

func TestNATSStopAndRestart(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, ha, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	ra, rb := testRecord("na", time.Now()), testRecord("nb", time.Now())
	a.Publish(ra)
	b.Publish(rb)
	testkit.Until(t, 5*time.Second, "both see the other's node", func() bool { return ha.get("nb") != nil && hb.get("na") != nil })

	srv.Stop()
	stopped := time.Now()
	testkit.Until(t, testTTL+time.Second, "remote records dropped after the TTL", func() bool { return ha.len() == 0 && hb.len() == 0 })
	t.Logf("remote records dropped %v after the stop", time.Since(stopped).Round(time.Millisecond))
	st := a.State()
	want := fmt.Sprintf("nats: not connected to nats://127.0.0.1:%d (", srv.Port())
	if st.Connected || !strings.HasPrefix(st.Reason, want) ||
		!strings.HasSuffix(st.Reason, "; serving this replica's nodes only, other replicas' nodes expire after the ttl") {
		t.Errorf("a.State() = %+v, want not connected, reason starting %q", st, want)
	}
	if st.Local != 1 || st.Remote != 0 {
		t.Errorf("a.State() = %+v, want 1 local, 0 remote", st)
	}
	// A node leaving and another coming while NATS is down.
	b.Withdraw("nb", rb.ConnectedAt)
	rb2 := testRecord("nb2", time.Now())
	b.Publish(rb2)

	srv.Restart(t) // memory storage: the bucket is gone
	waitConnected(t, a, b)
	testkit.Until(t, 10*time.Second, "both see the other's nodes again", func() bool {
		return ha.get("nb2") != nil && hb.get("na") != nil
	})
	sameRecord(t, "a's nb2", ha.get("nb2"), as(rb2, "b"))
	sameRecord(t, "b's na", hb.get("na"), as(ra, "a"))
	if ha.get("nb") != nil {
		t.Error("a holds nb, withdrawn while NATS was down")
	}
	if st := a.State(); !st.Connected || st.Reason != "" || st.Local != 1 || st.Remote != 1 {
		t.Errorf("a.State() = %+v, want connected, 1 local, 1 remote", st)
	}
	kv := bucketKV(t, srv)
	if keys := nodeKeys(t, kv); strings.Join(keys, ",") != "na,nb2" {
		t.Errorf("the bucket's node keys = %q; want na and nb2", keys)
	}
}

func TestJoinUnreachable(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t, "a")
	// A port nobody listens on: a stopped server's.
	srv := natstest.Start(t)
	srv.Stop()
	h := newRecorder()
	a, err := Join(Config{URL: "nats://u:secret@127.0.0.1:" + fmt.Sprint(srv.Port()), Replica: "a", TTL: testTTL, Secret: testSecret, Logger: log}, h)
	if err != nil {
		t.Fatal(err)
	}
	a.Publish(testRecord("n1", time.Now()))
	want := fmt.Sprintf("nats: not connected to nats://redacted@127.0.0.1:%d (connection refused) for ", srv.Port())
	testkit.Until(t, 5*time.Second, "a reason naming the refused connection", func() bool {
		return strings.HasPrefix(a.State().Reason, want)
	})
	if st := a.State(); st.Connected || st.Local != 1 || strings.Contains(st.Reason, "secret") {
		t.Errorf("State() = %+v", st)
	}
	start := time.Now()
	err = a.Close(t.Context())
	if err == nil || !strings.Contains(err.Error(), "1 writes not flushed: not connected to nats") {
		t.Errorf("Close = %v, want 1 write not flushed", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
}

func TestHostileEntries(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, b, hb, logs := twoReplicas(t, srv)

	kv := bucketKV(t, srv)
	put := func(key, value string) {
		t.Helper()
		if _, err := kv.Put(t.Context(), key, []byte(value)); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	invalid := *as(testRecord("bad-facts", time.Now()), "evil")
	invalid.Roles = []string{"root"}
	other := as(testRecord("n9", time.Now()), "evil")
	s := testSealer(t)
	sign := func(key string, r *Record) string {
		return string(s.seal(s.newHash(), key, encodeRecord(t, r), time.Now()))
	}
	put("bad-json", "{not json")
	put("signed-bad-json", string(s.seal(s.newHash(), "signed-bad-json", []byte("{not json"), time.Now())))
	put("mismatch", sign("mismatch", other))
	put("bad-facts", sign("bad-facts", &invalid))
	put("=Zm9v", sign("=Zm9v", other))                         // "foo", whose key is foo
	put("moved", sign("n9", other))                            // signed for another key
	put("old-format", "sg1 1 "+strings.Repeat("A", 43)+"\n{}") // a replica of a version before
	if err := kv.Delete(t.Context(), "not-a-node"); err != nil {
		t.Fatal(err)
	}
	// Past the hostile entries, a good record of a third replica is still
	// delivered, and n1 stays.
	good := testRecord("n3", time.Now())
	put("n3", sign("n3", as(good, "c")))
	testkit.Until(t, 5*time.Second, "b sees n3", func() bool { return hb.get("n3") != nil })
	sameRecord(t, "b's n3", hb.get("n3"), as(good, "c"))
	if got := strings.Join(hb.events(), "; "); got != "put n1 a; put n3 c" {
		t.Errorf("b's Handler got %q", got)
	}
	// A format this replica does not read is said apart, once.
	testkit.Until(t, time.Second, "the format logged", func() bool {
		return strings.Contains(logs.String(), `level=ERROR msg="cluster: refused records of a format this replica does not read; every replica must run the same version" replica=b key=old-format err="format sg1: written by a replica of an earlier version`)
	})
	// Only the first other refusal is logged at once; the rest are counted.
	testkit.Until(t, time.Second, "a refusal logged", func() bool {
		return strings.Contains(logs.String(), `level=WARN msg="cluster: refused a record of the bucket" replica=b reason=unsigned key=bad-json err="not signed`)
	})
	if n := strings.Count(logs.String(), "refused a record"); n != 1 {
		t.Errorf("%d refusals logged at once, want 1 (rate-limited)", n)
	}
	if got, want := b.Refused(), map[string]uint64{RefusedUnsigned: 1, RefusedSignature: 1, RefusedInvalid: 4, RefusedTime: 0, RefusedSize: 0, RefusedFull: 0, RefusedFormat: 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("b.Refused() = %v, want %v", got, want)
	}
	if st := b.State(); !st.Connected || st.Remote != 2 {
		t.Errorf("b.State() = %+v, want connected with 2 remote", st)
	}

	// Garbage over a live record's key: the owner writes its record back
	// at its next renewal, and the others keep it meanwhile.
	put("n1", "garbage")
	testkit.Until(t, 5*time.Second, "a writes n1 back over the garbage", func() bool {
		r, err := bucketRecord(t, kv, "n1")
		return err == nil && r.Replica == "a"
	})
	if hb.get("n1") == nil {
		t.Error("b dropped n1")
	}
}

func TestRestartedMemberRepublishes(t *testing.T) {
	t.Parallel()
	const n = 1000
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", 2*time.Second)
	b, hb, _ := join(t, srv, "b", 2*time.Second)
	waitConnected(t, a, b)
	t0 := time.Now()
	for i := range n {
		a.Publish(testRecord(fmt.Sprintf("node-%04d", i), t0))
	}
	testkit.Until(t, 10*time.Second, "b sees every node", func() bool { return hb.len() == n })
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	// The replica restarts; its nodes connect again.
	a2, ha2, _ := join(t, srv, "a", 2*time.Second)
	waitConnected(t, a2)
	// Its records of the run before are not its own yet: remote records
	// until its nodes are back (or they expire).
	if st := a2.State(); st.Remote != n || ha2.len() != n {
		t.Errorf("a2.State() = %+v with %d records delivered; want the %d of the run before", st, ha2.len(), n)
	}
	t1 := time.Now()
	start := time.Now()
	for i := range n {
		a2.Publish(testRecord(fmt.Sprintf("node-%04d", i), t1))
	}
	testkit.Until(t, 10*time.Second, "b sees every node's new connection", func() bool {
		for i := range n {
			if r := hb.get(fmt.Sprintf("node-%04d", i)); r == nil || !r.ConnectedAt.Equal(t1.UTC().Round(0)) {
				return false
			}
		}
		return true
	})
	t.Logf("%d records republished and seen in %v", n, time.Since(start).Round(time.Millisecond))
	stays(t, 3*time.Second, "b holds exactly the nodes", func() bool { return hb.len() == n && b.State().Remote == n })
	if puts, deletes := hb.counts(); puts != 2*n || deletes != 0 {
		t.Errorf("b's Handler: %d puts, %d deletes; want %d, 0", puts, deletes, 2*n)
	}
	kv := bucketKV(t, srv)
	if keys := nodeKeys(t, kv); len(keys) != n {
		t.Errorf("the bucket has %d node keys, want %d", len(keys), n)
	}
	if st := a2.State(); st.Remote != 0 || st.Local != n || ha2.len() != 0 {
		t.Errorf("a2.State() = %+v with %d records held by its Handler; want %d local, none remote", st, ha2.len(), n)
	}
}

func TestOwnRecordsNotDelivered(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, ha, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	// Nodes connecting and leaving at once, some again: the member's own
	// writes come back from the watch after the record is gone.
	for i := range 200 {
		r := testRecord(fmt.Sprint("n", i%50), time.Now())
		a.Publish(r)
		if i%3 != 0 {
			time.Sleep(time.Duration(i%5) * time.Millisecond)
		}
		a.Withdraw(r.ID, r.ConnectedAt)
	}
	kv := bucketKV(t, srv)
	testkit.Until(t, 5*time.Second, "every node gone from the bucket", func() bool { return len(nodeKeys(t, kv)) == 0 })
	testkit.Until(t, 5*time.Second, "b holds nothing", func() bool { return hb.len() == 0 })
	if ev := ha.events(); len(ev) != 0 {
		t.Errorf("a's Handler got its own records: %q", ev)
	}
	if st := a.State(); st.Local != 0 || st.Remote != 0 {
		t.Errorf("a.State() = %+v", st)
	}
}

// TestExistingBucketWithMaxAgeRefused: a bucket with a max age (made by a
// version before issue 23, or by hand) would lose the records, which are
// no longer rewritten: it is refused, naming the setting, and the replica
// is not ready.
func TestExistingBucketWithMaxAgeRefused(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	nc := bucketKVConn(t, srv)
	if _, err := nc.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: testBucket(t), TTL: 5 * time.Second, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	a, _, _ := join(t, srv, "a", testTTL)
	testkit.Until(t, 5*time.Second, "a refuses the bucket", func() bool {
		st := a.State()
		return !st.Connected && strings.Contains(st.Reason, "the bucket has a max age (ttl) of 5s")
	})
	t.Log(a.State().Reason)
}

// TestExistingBucketKept: a bucket made by someone else without a max age
// and without per-message TTLs is used, with a warning.
func TestExistingBucketKept(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	nc := bucketKVConn(t, srv)
	if _, err := nc.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: testBucket(t), Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	a, _, logs := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	if !strings.Contains(logs.String(), `msg="cluster: the bucket does not allow per-message TTLs`) {
		t.Errorf("no warning of the markers in the logs:\n%s", logs)
	}
	r := testRecord("n1", time.Now())
	a.Publish(r)
	testkit.Until(t, 5*time.Second, "b sees n1", func() bool { return hb.get("n1") != nil })
	a.Withdraw("n1", r.ConnectedAt)
	testkit.Until(t, 5*time.Second, "b drops n1", func() bool { return hb.get("n1") == nil })
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	for _, natsUp := range []bool{true, false} {
		t.Run(fmt.Sprint("natsUp=", natsUp), func(t *testing.T) {
			srv := natstest.Start(t)
			ignore := goleak.IgnoreCurrent()
			log, _ := testLogger(t, "a")
			a, err := Join(Config{URL: srv.URL(), Replica: "a", Bucket: testBucket(t), TTL: testTTL, Secret: testSecret, Logger: log}, newRecorder())
			if err != nil {
				t.Fatal(err)
			}
			waitConnected(t, a)
			a.Publish(testRecord("n1", time.Now()))
			if !natsUp {
				srv.Stop()
				testkit.Until(t, 5*time.Second, "a disconnected", func() bool { return !a.State().Connected })
			}
			a.Close(t.Context())
			goleak.VerifyNone(t, ignore)
		})
	}
}

// nodeKeys lists the node keys of kv (not the heartbeats), sorted.
func nodeKeys(t testing.TB, kv jetstream.KeyValue) []string {
	t.Helper()
	keys, err := kv.Keys(t.Context())
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		if !strings.HasPrefix(k, HeartbeatPrefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

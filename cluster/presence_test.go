package cluster

// Issue 23, item 2: presence by a heartbeat per replica, not by renewing
// each record.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
)

// publishN publishes n records of ids prefix-0000… on m, connected at t0.
func publishN(m *Member, prefix string, n int, t0 time.Time) {
	for i := range n {
		m.Publish(testRecord(fmt.Sprintf("%s-%04d", prefix, i), t0))
	}
}

// TestHeartbeatLapseDropsAll: a replica that stops without withdrawing
// its nodes (kill -9) has them all dropped by the others at once, within
// the TTL and a sweep, and one survivor deletes its records and its
// heartbeat from the bucket.
func TestHeartbeatLapseDropsAll(t *testing.T) {
	t.Parallel()
	const n = 200
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	c, hc, _ := join(t, srv, "c", testTTL)
	waitConnected(t, a, b, c)
	publishN(a, "a", n, time.Now())
	testkit.Until(t, 5*time.Second, "b and c see a's nodes", func() bool { return hb.len() == n && hc.len() == n })
	testkit.Until(t, 5*time.Second, "b sees two replicas", func() bool { return b.State().Replicas == 2 })

	// a stops beating; its records stay in the bucket (no withdraw).
	a.cancel() // as a kill: no flush, nothing deleted
	stopped := time.Now()
	testkit.Until(t, testTTL+time.Second, "b and c drop a's nodes", func() bool { return hb.len() == 0 && hc.len() == 0 })
	t.Logf("a's %d nodes dropped %v after its last heartbeat at most", n, time.Since(stopped).Round(time.Millisecond))
	if d := time.Since(stopped); d < testTTL-testTTL/3 {
		t.Errorf("dropped %v after a stopped, before its TTL could lapse", d)
	}
	kv := bucketKV(t, srv)
	testkit.Until(t, 5*time.Second, "a's records and heartbeat deleted from the bucket", func() bool {
		if len(nodeKeys(t, kv)) != 0 {
			return false
		}
		_, err := kv.Get(t.Context(), HeartbeatPrefix+a.inc)
		return err != nil
	})
	if st := b.State(); st.Remote != 0 || st.Replicas != 1 {
		t.Errorf("b.State() = %+v, want no remote node, one other replica", st)
	}
	// A replica joining later reads nothing of a.
	d, hd, _ := join(t, srv, "d", testTTL)
	waitConnected(t, d)
	if hd.len() != 0 {
		t.Errorf("d got %d records of a", hd.len())
	}
}

// TestRestartTakesRecordsBack: a replica stopped without withdrawing and
// started again under the same name within the TTL takes its records back
// as its nodes reconnect; the other replica never drops one of them
// meanwhile. The records of nodes that did not come back are deleted by
// the restarted replica a TTL after the old heartbeat lapsed.
func TestRestartTakesRecordsBack(t *testing.T) {
	t.Parallel()
	const n, back = 300, 200
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	publishN(a, "a", n, time.Now())
	testkit.Until(t, 5*time.Second, "b sees a's nodes", func() bool { return hb.len() == n })

	var mu sync.Mutex
	var low = n
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		end := time.Now().Add(testTTL + testTTL/2) // before the records left over go, a TTL after the lapse
		for time.Now().Before(end) {
			if k := hb.len(); k < n {
				mu.Lock()
				low = min(low, k)
				mu.Unlock()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	a.cancel() // killed
	a2, _, logs := join(t, srv, "a", testTTL)
	waitConnected(t, a2)
	publishN(a2, "a", back, time.Now()) // two thirds come back
	<-watching
	mu.Lock()
	if low != n {
		t.Errorf("b held only %d of a's %d nodes while a restarted", low, n)
	}
	mu.Unlock()
	testkit.Until(t, 3*testTTL, "the nodes that did not come back dropped", func() bool { return hb.len() == back })
	kv := bucketKV(t, srv)
	testkit.Until(t, 3*testTTL, "their records deleted", func() bool { return len(nodeKeys(t, kv)) == back })
	if !strings.Contains(logs.String(), "cluster: deleting the records of a run before of this replica that its nodes did not take back") {
		t.Errorf("a2 did not say it deleted the records left over:\n%s", logs)
	}
	stays(t, testTTL, "b keeps the nodes that came back", func() bool { return hb.len() == back })
	if st := b.State(); st.Remote != back || st.Replicas != 1 {
		t.Errorf("b.State() = %+v", st)
	}
}

// TestRestartSlowerThanTTL: a replica restarted after its TTL lapsed: the
// others drop its nodes at the lapse and count them again as they come.
func TestRestartSlowerThanTTL(t *testing.T) {
	t.Parallel()
	const n = 50
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", testTTL)
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	publishN(a, "a", n, time.Now())
	testkit.Until(t, 5*time.Second, "b sees a's nodes", func() bool { return hb.len() == n })
	a.cancel()
	testkit.Until(t, testTTL+time.Second, "b drops a's nodes", func() bool { return hb.len() == 0 })
	a2, _, _ := join(t, srv, "a", testTTL)
	waitConnected(t, a2)
	publishN(a2, "a", n, time.Now())
	testkit.Until(t, 5*time.Second, "b sees them again", func() bool { return hb.len() == n })
	stays(t, 2*testTTL, "b keeps them", func() bool { return hb.len() == n })
}

// TestHeartbeatCopyIgnored: a heartbeat copied from the bucket and written
// back after its replica stopped does not keep its nodes: only a heartbeat
// signed after the last one read counts (and one signed long before it
// was stored is refused).
func TestHeartbeatCopyIgnored(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, _, hb, _ := twoReplicas(t, srv)
	kv := bucketKV(t, srv)
	e, err := kv.Get(t.Context(), HeartbeatPrefix+a.inc)
	if err != nil {
		t.Fatal(err)
	}
	copied := e.Value()
	a.cancel()
	stopped := time.Now()
	for time.Since(stopped) < testTTL+time.Second && hb.get("n1") != nil {
		if _, err := kv.Put(t.Context(), HeartbeatPrefix+a.inc, copied); err != nil {
			t.Fatal(err)
		}
		time.Sleep(testTTL / 5)
	}
	if hb.get("n1") != nil {
		t.Fatalf("b still holds n1 %v after a stopped, kept alive by copies of its heartbeat", time.Since(stopped))
	}
}

// TestReadyMeansRead: a replica joining a bucket of many records while
// another replica writes is not in sync (ready) before it has read them:
// at the first moment it is, every record not written again since its
// watch began has been delivered (one written again comes as a change
// right after). The NATS client's end-of-replay marker counts the writes
// made meanwhile among the records to read.
func TestReadyMeansRead(t *testing.T) {
	t.Parallel()
	const n = 3000
	srv := natstest.Start(t)
	a, _, _ := join(t, srv, "a", 5*time.Second)
	waitConnected(t, a)
	publishN(a, "a", n, time.Now())
	kv := bucketKV(t, srv)
	testkit.Until(t, 10*time.Second, "a's records written", func() bool { return len(nodeKeys(t, kv)) == n })
	var mu sync.Mutex
	rewritten := map[string]bool{} // ids written again once b joined
	var joined atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() { // facts of half the nodes change all the time on a
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			id := fmt.Sprintf("a-%04d", i%(n/2)) // the other half stays as it is
			if joined.Load() {
				mu.Lock()
				rewritten[id] = true
				mu.Unlock()
			}
			a.Publish(testRecord(id, time.Now().Add(-time.Hour), "HOME", fmt.Sprint("E", i)))
			time.Sleep(100 * time.Microsecond)
		}
	}()
	// b's Handler is slow (a gateway busy indexing): the replay takes a
	// while, and a's writes meanwhile rewrite records b read already.
	var bm atomic.Pointer[Member]
	var checked atomic.Bool
	missing := -1
	hb := newRecorder()
	hb.probe = func() {
		time.Sleep(200 * time.Microsecond)
		if m := bm.Load(); m != nil && m.State().Connected && !checked.Swap(true) {
			mu.Lock()
			missing = 0
			for i := range n {
				if id := fmt.Sprintf("a-%04d", i); !rewritten[id] && hb.get(id) == nil {
					missing++
				}
			}
			mu.Unlock()
		}
	}
	log, _ := testLogger(t, "b")
	joined.Store(true)
	time.Sleep(time.Millisecond)
	b, err := Join(Config{URL: srv.URL(), Replica: "b", Bucket: testBucket(t), TTL: 5 * time.Second, Secret: testSecret, Logger: log}, hb)
	if err != nil {
		t.Fatal(err)
	}
	bm.Store(b)
	t.Cleanup(func() { b.Close(context.Background()) })
	testkit.Until(t, 20*time.Second, "b in sync", func() bool { return b.State().Connected })
	testkit.Until(t, 20*time.Second, "b reads every record", func() bool { return hb.len() == n })
	mu.Lock()
	defer mu.Unlock()
	if !checked.Load() {
		t.Fatal("b was never seen in sync while records were delivered")
	}
	if missing != 0 {
		t.Errorf("b in sync with %d records not written again since it began to read not delivered yet", missing)
	}
	t.Logf("%d records written again while b read the bucket", len(rewritten))
}

// TestOwnRecordCopiedBack: the record of a node that left, copied from the
// bucket and written back soon after (signed less than two TTLs before):
// its replica, alive, deletes it at once, as a record of its own run for a
// connection it does not hold.
func TestOwnRecordCopiedBack(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, _, hb, _ := twoReplicas(t, srv)
	kv := bucketKV(t, srv)
	e, err := kv.Get(t.Context(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	copied := e.Value()
	a.Withdraw("n1", hb.get("n1").ConnectedAt)
	testkit.Until(t, 5*time.Second, "b drops n1", func() bool { return hb.get("n1") == nil })
	time.Sleep(testTTL + 200*time.Millisecond) // past a's memory of its last write
	if _, err := kv.Put(t.Context(), "n1", copied); err != nil {
		t.Fatal(err)
	}
	testkit.Until(t, 5*time.Second, "a deletes the copy", func() bool { return len(nodeKeys(t, kv)) == 0 })
	testkit.Until(t, 5*time.Second, "b holds no n1", func() bool { return hb.get("n1") == nil })
}

// TestBehindIsNotLapsed: a replica whose watch falls behind (its Handler
// slow, a burst of writes) reads every heartbeat late; it must not take
// that for a lapse: it drops no node of the live replica, and, though of
// the least name, deletes none of its records.
func TestBehindIsNotLapsed(t *testing.T) {
	t.Parallel()
	const n = 3000
	srv := natstest.Start(t)
	slow := newRecorder()
	slow.probe = func() { time.Sleep(time.Millisecond) } // 3 s of work for 3,000 records, three TTLs
	log, logs := testLogger(t, "a")
	a, err := Join(Config{URL: srv.URL(), Replica: "a", Bucket: testBucket(t), TTL: testTTL, Secret: testSecret, Logger: log}, slow)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	b, hb, _ := join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	publishN(b, "b", n, time.Now())
	testkit.Until(t, 20*time.Second, "a reads b's records", func() bool { return slow.len() == n })
	stays(t, 2*testTTL, "a keeps them", func() bool { return slow.len() == n })
	if _, deletes := slow.counts(); deletes != 0 {
		t.Errorf("a dropped %d of b's nodes while reading late", deletes)
	}
	kv := bucketKV(t, srv)
	if k := len(nodeKeys(t, kv)); k != n {
		t.Errorf("the bucket holds %d of b's %d records", k, n)
	}
	if strings.Contains(logs.String(), "heartbeat lapsed") {
		t.Errorf("a took its late reading for a lapse:\n%s", logs)
	}
	_ = hb
}

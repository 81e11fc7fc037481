package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/protocol"
)

// recorder is a Handler keeping what it was told, in order.
type recorder struct {
	mu      sync.Mutex
	recs    map[string]*Record
	puts    int
	deletes int
	log     []string // "put id replica" and "delete id"
	// probe, if set, is called from Put and Delete: it calls into the
	// Member to prove the Handler is never called under its mutex.
	probe func()
}

func newRecorder() *recorder { return &recorder{recs: map[string]*Record{}} }

func (r *recorder) Put(rec *Record) {
	if r.probe != nil {
		r.probe()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs[rec.ID] = rec
	r.puts++
	r.log = append(r.log, "put "+rec.ID+" "+rec.Replica)
}

func (r *recorder) Delete(id string) {
	if r.probe != nil {
		r.probe()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.recs, id)
	r.deletes++
	r.log = append(r.log, "delete "+id)
}

func (r *recorder) DeleteMany(ids []string) {
	for _, id := range ids {
		r.Delete(id)
	}
}

func (r *recorder) get(id string) *Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recs[id]
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.recs)
}

func (r *recorder) counts() (puts, deletes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.puts, r.deletes
}

func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

// stays checks that cond holds all through d.
func stays(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("%s: no longer true", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testRecord is a valid record of node id, as the gateway publishes it.
// Times are UTC without a monotonic reading so that a decoded copy is
// reflect.DeepEqual to it.
func testRecord(id string, connectedAt time.Time, env ...string) Record {
	connectedAt = connectedAt.UTC().Round(0)
	factsAt := connectedAt.Add(time.Millisecond)
	if env == nil {
		env = []string{"HOME"}
	}
	return Record{
		HostFacts: protocol.HostFacts{
			ID:            id,
			OS:            "linux",
			Roles:         []string{protocol.RoleExecution},
			Capabilities:  append([]string(nil), protocol.BaselineCapabilities...),
			Env:           env,
			HostBinStatus: map[string]bool{"git": true, "docker": false},
		},
		ConnectedAt: connectedAt,
		FactsAt:     &factsAt,
	}
}

// as returns rec as replica publishes it.
func as(rec Record, replica string) *Record {
	rec.Replica = replica
	return &rec
}

// testBucket is a bucket name of t's own.
func testBucket(t testing.TB) string {
	var b strings.Builder
	for _, r := range t.Name() {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// testLogger collects a member's logs, shown when t fails.
func testLogger(t testing.TB, name string) (*slog.Logger, *syncbuf.Buffer) {
	buf := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs of %s:\n%s", name, buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// join makes a member of replica on srv's bucket for t, closed when t ends.
func join(t testing.TB, srv *natstest.Server, replica string, ttl time.Duration) (*Member, *recorder, *syncbuf.Buffer) {
	t.Helper()
	return joinWith(t, srv, Config{Replica: replica, TTL: ttl})
}

// twoReplicas joins replicas a and b to srv and waits until b sees the
// node n1 that a publishes: the start of most two-replica tests. It
// returns b's recorder and logs.
func twoReplicas(t testing.TB, srv *natstest.Server) (a, b *Member, hb *recorder, blogs *syncbuf.Buffer) {
	t.Helper()
	a, _, _ = join(t, srv, "a", testTTL)
	b, hb, blogs = join(t, srv, "b", testTTL)
	waitConnected(t, a, b)
	a.Publish(testRecord("n1", time.Now()))
	testkit.Until(t, 5*time.Second, "b sees n1", func() bool { return hb.get("n1") != nil })
	return a, b, hb, blogs
}

// joinWith is join with more of the Config: URL, Bucket, Secret and
// Logger are set when empty.
func joinWith(t testing.TB, srv *natstest.Server, cfg Config) (*Member, *recorder, *syncbuf.Buffer) {
	t.Helper()
	rec := newRecorder()
	log, buf := testLogger(t, cfg.Replica)
	if cfg.URL == "" {
		cfg.URL = srv.URL()
	}
	if cfg.Bucket == "" {
		cfg.Bucket = testBucket(t)
	}
	if cfg.Secret == nil {
		cfg.Secret = testSecret
	}
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	m, err := Join(cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	return m, rec, buf
}

// waitConnected waits until every member is connected and in sync.
func waitConnected(t testing.TB, ms ...*Member) {
	t.Helper()
	for _, m := range ms {
		testkit.Until(t, 10*time.Second, "member "+m.cfg.Replica+" connected", func() bool { return m.State().Connected })
	}
}

// bucketKV opens t's bucket with a client of its own, to read it and to
// write what no member would.
func bucketKV(t testing.TB, srv *natstest.Server) jetstream.KeyValue {
	t.Helper()
	kv, err := bucketKVConn(t, srv).KeyValue(t.Context(), testBucket(t))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// bucketKVConn is a JetStream client of srv's, closed when t ends.
func bucketKVConn(t testing.TB, srv *natstest.Server) jetstream.JetStream {
	t.Helper()
	return srv.JetStream(t)
}

// testSecret is the cluster secret of the tests' members.
var testSecret = Secret("the cluster secret of the tests, at least 32 bytes")

// testSealer signs and checks records of t's bucket with testSecret.
func testSealer(t testing.TB) *sealer { return &sealer{secret: testSecret, bucket: testBucket(t)} }

// signed is rec as a replica of t's cluster writes it under its key now.
func signed(t testing.TB, rec *Record) []byte {
	t.Helper()
	s := testSealer(t)
	return s.seal(s.newHash(), Key(rec.ID), encodeRecord(t, rec), time.Now())
}

// bucketRecord reads the record of id from kv, checked as a replica
// checks it.
func bucketRecord(t testing.TB, kv jetstream.KeyValue, id string) (*Record, error) {
	e, err := kv.Get(t.Context(), Key(id))
	if err != nil {
		return nil, err
	}
	s := testSealer(t)
	body, _, err := s.unseal(s.newHash(), e.Key(), e.Value(), time.Now(), time.Minute)
	if err != nil {
		return nil, err
	}
	rec, _, err := decodeRecord(e.Key(), body, time.Now(), time.Minute)
	return rec, err
}

// sameRecord fails t unless got is want.
func sameRecord(t testing.TB, what string, got, want *Record) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %s\n want %s", what, show(got), show(want))
	}
}

func show(r *Record) string {
	if r == nil {
		return "nil"
	}
	return fmt.Sprintf("%+v", *r)
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Timings of the NATS calls.
const (
	openTimeout  = 5 * time.Second // opening the bucket and its watch
	writeTimeout = 5 * time.Second // one write, with its conflict check
	reopenEvery  = time.Second     // at most one reopen a second on write errors
	minProbe     = 250 * time.Millisecond
	maxOpenWait  = 5 * time.Second // longest wait between attempts to open the bucket
	writers      = 32              // writes in flight at once (see local.go)
)

// Member is this replica in the cluster: it publishes the records of the
// nodes the replica holds and delivers the other replicas' records to a
// Handler. Its methods are safe for concurrent use.
//
// Five kinds of goroutine, each owning its part: the connector opens the
// bucket and its watch on every (re)connect; the watch loop owns the
// remote records and the other replicas' heartbeats, and is the only
// caller of the Handler; the dispatcher picks the next write (fresh
// changes first, then deletes of records left over, then retries) for the
// writers, which make the KV calls; the beater writes this replica's
// heartbeat every TTL/3. Close ends and waits for all of them.
type Member struct {
	cfg  Config
	h    Handler
	log  *slog.Logger
	url  string // cfg.URL without credentials
	seed maphash.Seed
	// epoch is the monotonic origin of remote records' seen times.
	epoch time.Time
	// inc is this run's incarnation (random): its records and heartbeat
	// carry it, hbKey is its heartbeat's key.
	inc, hbKey string

	nc *nats.Conn // set by the connector once it runs
	js jetstream.JetStream

	ctx       context.Context // canceled by Close: ends every goroutine and call
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	events   chan struct{} // connector's wake-up: the connection changed, or reopen
	connSeq  atomic.Uint64 // bumped on every disconnect and reconnect
	reopen   atomic.Bool   // the bucket or its watch seems gone: open them again
	sessions chan *session // connector → watch loop
	wake     chan struct{} // dispatcher's wake-up
	ops      chan *op      // dispatcher → writers
	beatNow  chan struct{} // beater's wake-up: a new session, or our heartbeat deleted

	seal      sealer
	remoteN   atomic.Int64                     // remote records held, for State
	replicas  atomic.Int64                     // other incarnations with a live heartbeat, for State
	capFull   atomic.Bool                      // MaxRemote reached (logged once)
	refused   [len(refusalIndex)]atomic.Uint64 // records refused, by reason (RefusalReasons order)
	refusals  limiter                          // warnings about entries refused
	formatsMu sync.Mutex
	formats   map[string]bool // formats refused, logged once each
	failures  limiter         // warnings about writes that failed

	// mu guards the fields below. It is never held while calling the
	// Handler or NATS: the gateway calls Publish under its own lock, and
	// its Handler takes that lock.
	mu        sync.Mutex
	local     map[string]*local
	gone      map[string]tombstone // local records forgotten lately
	fresh     []*local             // records to write now, in order
	foreign   []foreign            // keys of others to delete (left over, or of a replica gone)
	retry     retryHeap            // records whose write failed, by when to retry
	sess      *session             // the bucket writes go to; nil while not connected
	natsUp    bool
	downSince time.Time
	lastErr   string // the last connection error, for State
	bucketErr string // why the bucket could not be opened, for State
	synced    bool   // the watch of sess has replayed the bucket
	// readOnce is set when a watch first replayed the bucket to its end
	// (ReadingAtStart).
	readOnce atomic.Bool
	nlocal   int // active local records
	closed   bool
	// Writes failing in a row (any record; a success ends the run), since
	// when, and the last error: for State.
	failRun   int
	failSince time.Time
	failErr   string
	// The beater's: when its last heartbeat was written, and when its run
	// of heartbeats without a gap began (heartbeat.Since).
	beatOK    time.Time
	beatSince time.Time
}

// session is the bucket as opened on one NATS connection, with its watch.
type session struct {
	kv      jetstream.KeyValue
	w       jetstream.KeyWatcher
	cancel  context.CancelFunc // ends the watch
	conn    uint64             // Member.connSeq when opened
	created time.Time          // when the bucket's stream was created: another time is another bucket
	// markerTTL: the bucket allows per-message TTLs, so that the marker a
	// delete leaves is removed after a while (else it stays).
	markerTTL bool
	// lastSeq is the stream's last sequence before the watch began: its
	// replay has read the bucket once an entry at or past it is read.
	lastSeq uint64
}

// Join validates cfg, connects to NATS in the background and returns at
// once: NATS being unreachable is not an error (the replica serves its own
// nodes; State says why). Errors name the setting, e.g.
// "gateway.cluster.ttl: …".
func Join(cfg Config, h Handler) (*Member, error) {
	if h == nil {
		return nil, errors.New("cluster: Join: the Handler is nil")
	}
	cfg = cfg.withDefaults()
	opts, err := cfg.natsOptions()
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	inc := newIncarnation()
	m := &Member{
		cfg:       cfg,
		h:         h,
		inc:       inc,
		hbKey:     HeartbeatPrefix + inc,
		log:       log.With("replica", cfg.Replica),
		url:       redactURLs(cfg.URL),
		seal:      sealer{secret: append([]byte(nil), cfg.Secret...), bucket: cfg.Bucket},
		seed:      maphash.MakeSeed(),
		epoch:     time.Now(),
		events:    make(chan struct{}, 1),
		sessions:  make(chan *session),
		wake:      make(chan struct{}, 1),
		beatNow:   make(chan struct{}, 1),
		ops:       make(chan *op),
		refusals:  limiter{every: 10 * time.Second},
		failures:  limiter{every: 10 * time.Second},
		local:     map[string]*local{},
		gone:      map[string]tombstone{},
		downSince: time.Now(),
	}
	opts = append(opts,
		nats.ConnectHandler(func(*nats.Conn) { m.signal() }),
		nats.ReconnectHandler(func(*nats.Conn) { m.connSeq.Add(1); m.signal() }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			m.connSeq.Add(1)
			m.setLastErr(err, false)
			m.signal()
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { m.setLastErr(err, true) }),
		nats.ClosedHandler(func(*nats.Conn) { m.signal() }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if ok, held := m.failures.allow(); ok {
				m.log.Warn("cluster: nats error", "err", err, "held", held)
			}
		}),
	)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.wg.Add(4 + writers)
	go m.connect(opts)
	go m.watch()
	go m.dispatch()
	go m.beat()
	for range writers {
		go m.writer()
	}
	m.signal()
	return m, nil
}

// signal wakes the connector.
func (m *Member) signal() {
	select {
	case m.events <- struct{}{}:
	default:
	}
}

// setLastErr keeps the last connection error for State. An error of a
// connection attempt is logged when it differs from the one before
// (attempts are made every second); a disconnect is logged by setUp.
func (m *Member) setLastErr(err error, attempt bool) {
	if err == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := shortErr(err)
	if attempt && s != m.lastErr {
		m.log.Warn("cluster: cannot connect to nats; retrying every second", "url", m.url, "err", err)
	}
	m.lastErr = s
}

// shortErr is the last part of a connection error ("connection refused"
// of "dial tcp 127.0.0.1:4222: connect: connection refused"): the address
// is in State's reason already.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		s = s[i+2:]
	}
	return s
}

// State says whether the member is connected and in sync, and if not why.
func (m *Member) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := State{Remote: int(m.remoteN.Load()), Local: m.nlocal, Replicas: int(m.replicas.Load())}
	const serving = "; serving this replica's nodes only, other replicas' nodes expire after the ttl"
	switch {
	case m.closed:
		st.Reason = "nats: closed"
	case !m.natsUp:
		why := ""
		if m.lastErr != "" {
			why = " (" + m.lastErr + ")"
		}
		st.Reason = fmt.Sprintf("nats: not connected to %s%s for %v%s",
			m.url, why, time.Since(m.downSince).Round(time.Second), serving)
	case m.sess == nil && m.bucketErr != "":
		st.Reason = fmt.Sprintf("nats: connected, but the bucket %s cannot be used (%s)%s", m.cfg.Bucket, m.bucketErr, serving)
	case m.sess == nil:
		st.Reason = "nats: connected, opening the bucket"
	case !m.synced:
		st.Reason = "nats: connected, reading the bucket"
	case m.failing(time.Now()):
		st.Reason = fmt.Sprintf("nats: connected, but writing to the bucket %s fails (%d writes in a row for %v; the last: %s): the other replicas drop this replica's nodes after the ttl",
			m.cfg.Bucket, m.failRun, time.Since(m.failSince).Round(time.Millisecond), m.failErr)
	default:
		st.Connected = true
	}
	return st
}

// ReadingAtStart reports whether the member is still reading the bucket
// for the first time since Join, for at most half the TTL: until then the
// other replicas' nodes are not all known, and a replica's own nodes
// reconnecting all at once would slow the reading (the gateway holds them
// off). Past TTL/2 (a bucket too large to read by then, or NATS
// unreachable) it is false; once the bucket was read it never turns true
// again (a reconnect's replay is State's matter).
func (m *Member) ReadingAtStart() bool {
	return !m.readOnce.Load() && time.Since(m.epoch) < m.cfg.TTL/2
}

// failing reports whether writes have failed in a row long enough for the
// member not to be ready: at least twice, for at least TTL/3 (a renewal's
// interval), with no success since. mu is held.
func (m *Member) failing(now time.Time) bool {
	return m.failRun >= 2 && now.Sub(m.failSince) >= m.cfg.TTL/3
}

// refusalIndex is the index of each reason in Member.refused.
var refusalIndex = [...]string{RefusedUnsigned, RefusedSignature, RefusedTime, RefusedInvalid, RefusedSize, RefusedFull, RefusedFormat}

// RefusalReasons lists the reasons a record is refused (Refused*).
var RefusalReasons = append([]string(nil), refusalIndex[:]...)

// count counts a record refused for reason.
func (m *Member) count(reason string) {
	for i, r := range refusalIndex {
		if r == reason {
			m.refused[i].Add(1)
		}
	}
}

// refuse counts a record refused for reason and logs it, rate-limited.
// A value of a format this replica does not read is also logged once per
// format, apart: a replica of another version writing the bucket.
func (m *Member) refuse(reason, key string, err error) {
	m.count(reason)
	if reason == RefusedFormat && m.newFormat(err.Error()) {
		m.log.Error("cluster: refused records of a format this replica does not read; every replica must run the same version", "key", clip(key), "err", err)
		return
	}
	if ok, held := m.refusals.allow(); ok {
		m.log.Warn("cluster: refused a record of the bucket", "reason", reason, "key", clip(key), "err", err, "held", held)
	}
}

// newFormat reports whether a format error was not logged yet (at most
// 8 are remembered).
func (m *Member) newFormat(msg string) bool {
	m.formatsMu.Lock()
	defer m.formatsMu.Unlock()
	if m.formats[msg] || len(m.formats) >= 8 {
		return false
	}
	if m.formats == nil {
		m.formats = map[string]bool{}
	}
	m.formats[msg] = true
	return true
}

// Refused returns how many records of the bucket were refused, by reason
// (RefusalReasons), since Join.
func (m *Member) Refused() map[string]uint64 {
	out := make(map[string]uint64, len(refusalIndex))
	for i, r := range refusalIndex {
		out[r] = m.refused[i].Load()
	}
	return out
}

// Close flushes pending writes and deletes (bounded by ctx), stops the
// goroutines and closes the NATS connection. Records not withdrawn stay
// in the bucket until the TTL. Close is idempotent; later calls return
// the first one's error.
func (m *Member) Close(ctx context.Context) error {
	m.closeOnce.Do(func() {
		m.closeErr = m.flush(ctx)
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		m.cancel()
		m.wg.Wait()
		if m.nc != nil {
			m.nc.Close()
		}
	})
	return m.closeErr
}

// flush waits until no write is pending or in flight, while connected.
func (m *Member) flush(ctx context.Context) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		m.mu.Lock()
		n, up := m.pendingLocked(), m.sess != nil
		m.mu.Unlock()
		switch {
		case n == 0:
			return nil
		case !up:
			return fmt.Errorf("cluster: close: %d writes not flushed: not connected to nats", n)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: close: %d writes not flushed: %w", n, ctx.Err())
		case <-tick.C:
		}
	}
}

// dial makes the NATS connection. It is done here, not in Join, because
// the client tries every server once (up to its dial timeout each) before
// it returns, even when it is to go on trying in the background.
func (m *Member) dial(opts []nats.Option) bool {
	wait := time.Second
	for {
		nc, err := nats.Connect(m.cfg.URL, opts...)
		if err == nil {
			var js jetstream.JetStream
			if js, err = jetstream.New(nc); err == nil {
				m.nc, m.js = nc, js
				return true
			}
			nc.Close()
		}
		// With RetryOnFailedConnect only an option the client refuses
		// fails Connect; its error may quote the URL.
		msg := strings.ReplaceAll(err.Error(), m.cfg.URL, m.url)
		m.log.Error("cluster: cannot start the nats client; retrying", "err", msg, "retry", wait)
		m.mu.Lock()
		m.lastErr = msg
		m.mu.Unlock()
		select {
		case <-m.ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, maxOpenWait)
	}
}

// connect makes the NATS connection, then opens the bucket and its watch
// whenever the connection comes (back), and hands them to the watch loop
// and the writers.
func (m *Member) connect(opts []nats.Option) {
	defer m.wg.Done()
	if !m.dial(opts) {
		return
	}
	var cur *session
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	probe := time.NewTicker(m.probeEvery())
	defer probe.Stop()
	wait := 250 * time.Millisecond
	var opened time.Time
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.events:
		case <-retry.C:
		case <-probe.C:
			if cur == nil || cur.conn != m.connSeq.Load() {
				continue
			}
			if err := m.probe(cur); err != nil {
				m.log.Warn("cluster: the bucket changed under the watch; opening it again", "bucket", m.cfg.Bucket, "err", err)
				m.reopen.Store(true)
			}
		}
		up := m.nc.IsConnected()
		m.setUp(up)
		if !up {
			if cur != nil {
				cur = nil
				m.setSession(nil)
				if !m.handOver(nil) {
					return
				}
			}
			continue
		}
		if cur != nil && cur.conn == m.connSeq.Load() {
			if !m.reopen.Load() {
				continue
			}
			// Asked for by failing writes, an ended watch or the probe,
			// on the same connection: not more than once a second (or
			// every TTL/4, when shorter).
			if d := min(reopenEvery, m.cfg.TTL/4) - time.Since(opened); d > 0 {
				retry.Reset(d)
				continue
			}
		}
		m.reopen.Store(false)
		opened = time.Now()
		s, err := m.open()
		if err != nil {
			if m.ctx.Err() != nil {
				return
			}
			m.log.Warn("cluster: cannot use the bucket; retrying", "bucket", m.cfg.Bucket, "err", err, "retry", wait)
			m.mu.Lock()
			m.bucketErr = err.Error()
			m.mu.Unlock()
			if cur != nil {
				cur = nil
				m.setSession(nil)
				if !m.handOver(nil) {
					return
				}
			}
			retry.Reset(wait)
			wait = min(2*wait, maxOpenWait)
			continue
		}
		wait = 250 * time.Millisecond
		m.setSession(s)
		if !m.handOver(s) {
			s.cancel()
			return
		}
		cur = s
	}
}

// probeEvery is how often the bucket is looked at: TTL/4, at least every
// 250 ms.
func (m *Member) probeEvery() time.Duration {
	return max(m.cfg.TTL/4, minProbe)
}

// probe checks that the bucket s watches is still there, is still the
// same (deleted and made again, it is another stream, which the watch does
// not follow), and can still be used. A call that fails for another
// reason (NATS slow or unreachable) is not held against the bucket.
func (m *Member) probe(s *session) error {
	ctx, cancel := context.WithTimeout(m.ctx, openTimeout)
	defer cancel()
	st, err := s.kv.Status(ctx)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound):
		return errors.New("the bucket is gone")
	case err != nil:
		return nil
	}
	info := streamInfo(st)
	if info == nil {
		return nil
	}
	if !s.created.IsZero() && !info.Created.Equal(s.created) {
		return errors.New("the bucket was deleted and made again")
	}
	return m.checkBucket(info.Config)
}

// streamInfo is the stream behind a bucket's status, nil if not known.
func streamInfo(st jetstream.KeyValueStatus) *jetstream.StreamInfo {
	if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok {
		return bs.StreamInfo()
	}
	return nil
}

// checkBucket says why a bucket with these settings cannot be used,
// naming the setting as `nats kv add` does: one where a record cannot be
// written never lets the replicas see each other.
func (m *Member) checkBucket(c jetstream.StreamConfig) error {
	const remedy = "delete the bucket (nats kv del %s) for the replicas to make it again, or make it as docs/deploy-cluster.md says"
	switch {
	case c.MaxMsgSize > 0 && int(c.MaxMsgSize) < MaxRecordBytes:
		return fmt.Errorf("the bucket's max value size is %d bytes, less than a record may take (%d): "+remedy, c.MaxMsgSize, MaxRecordBytes, m.cfg.Bucket)
	case c.MaxBytes > 0 && c.MaxBytes < MaxRecordBytes:
		return fmt.Errorf("the bucket's max bucket size is %d bytes, less than a record may take (%d): "+remedy, c.MaxBytes, MaxRecordBytes, m.cfg.Bucket)
	case c.Sealed:
		return fmt.Errorf("the bucket is sealed: no record can be written: "+remedy, m.cfg.Bucket)
	case c.MaxAge > 0:
		return fmt.Errorf("the bucket has a max age (ttl) of %v: records are written once and kept while their replica's heartbeat lives, so NATS would remove them (buckets of a version before issue 23 have one): "+remedy, c.MaxAge, m.cfg.Bucket)
	}
	return nil
}

// setUp records whether NATS is connected, and since when it is not.
func (m *Member) setUp(up bool) {
	url := m.url
	if up {
		url = m.nc.ConnectedUrlRedacted()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if up == m.natsUp {
		return
	}
	m.natsUp = up
	if up {
		m.lastErr = ""
		m.log.Info("cluster: connected to nats", "url", url)
	} else {
		m.downSince = time.Now()
		m.log.Warn("cluster: disconnected from nats; other replicas' nodes expire after the ttl", "url", m.url, "err", m.lastErr)
	}
}

// handOver gives the watch loop its new session (nil: not connected).
func (m *Member) handOver(s *session) bool {
	select {
	case m.sessions <- s:
		return true
	case <-m.ctx.Done():
		return false
	}
}

// open gets the bucket, creating it when missing (a NATS server with
// memory storage loses it on restart), and starts watching it.
func (m *Member) open() (*session, error) {
	ctx, cancel := context.WithTimeout(m.ctx, openTimeout)
	defer cancel()
	conn := m.connSeq.Load()
	kv, err := m.js.KeyValue(ctx, m.cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		cfg := jetstream.KeyValueConfig{
			Bucket:      m.cfg.Bucket,
			Description: "skillgate: the nodes each gateway replica holds, and the replicas' heartbeats",
			History:     1,
			// No max age: a record stays while its replica's heartbeat
			// lives. The marker of a deleted key goes after a while.
			LimitMarkerTTL: m.markerTTL(),
			Storage:        jetstream.MemoryStorage,
			MaxValueSize:   MaxRecordBytes,
			MaxBytes:       BucketMaxBytes,
			Replicas:       1,
		}
		kv, err = m.js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrLimitMarkerTTLNotSupported) {
			// A NATS server before 2.11: the markers of deleted keys stay.
			cfg.LimitMarkerTTL = 0
			kv, err = m.js.CreateKeyValue(ctx, cfg)
		}
		if errors.Is(err, jetstream.ErrBucketExists) {
			// Another replica created it first, with other settings.
			kv, err = m.js.KeyValue(ctx, m.cfg.Bucket)
		} else if err == nil {
			m.log.Info("cluster: created the bucket", "bucket", m.cfg.Bucket, "markerTTL", cfg.LimitMarkerTTL)
		}
	}
	if err != nil {
		return nil, err
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the bucket's settings: %w", err)
	}
	var created time.Time
	var lastSeq uint64
	markers := false
	if info := streamInfo(st); info != nil {
		lastSeq = info.State.LastSeq
		if err := m.checkBucket(info.Config); err != nil {
			return nil, err
		}
		if info.Config.MaxBytes <= 0 {
			m.log.Warn("cluster: the bucket has no max bucket size: whoever may write it can fill the NATS server's memory; make it with --max-bucket-size (docs/deploy-cluster.md)",
				"bucket", m.cfg.Bucket)
		}
		if markers = info.Config.AllowMsgTTL; !markers {
			m.log.Warn("cluster: the bucket does not allow per-message TTLs: the marker every deleted record leaves stays in NATS's memory until the bucket is made again; make it with --marker-ttl (docs/deploy-cluster.md; NATS 2.11 or later)",
				"bucket", m.cfg.Bucket)
		}
		created = info.Created
	}
	// The watch's context must outlive open: the client unsubscribes
	// when it ends. A timer bounds the call instead.
	wctx, wcancel := context.WithCancel(m.ctx)
	late := time.AfterFunc(openTimeout, wcancel)
	w, err := kv.WatchAll(wctx)
	if !late.Stop() && err == nil {
		w.Stop()
		err = context.DeadlineExceeded
	}
	if err != nil {
		wcancel()
		return nil, fmt.Errorf("watching: %w", err)
	}
	return &session{kv: kv, w: w, conn: conn, cancel: wcancel, created: created, markerTTL: markers, lastSeq: lastSeq}, nil
}

// limiter lets a log line through at most once per interval and counts
// the ones it held back, so that a flood of bad entries or failing writes
// cannot flood the log.
type limiter struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time
	held  int
}

// allow reports whether to log now, and how many were held back since.
func (l *limiter) allow() (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.Before(l.next) {
		l.held++
		return false, 0
	}
	l.next = now.Add(l.every)
	held := l.held
	l.held = 0
	return true, held
}

package cluster

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/maphash"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The watch loop: one goroutine follows the bucket, keeps what it needs
// of the other replicas' records, expires those not renewed within the
// TTL, and is the only caller of the Handler.

// remote is what a replica keeps of another replica's record: enough to
// tell a change from a renewal and to expire it, not the record (the
// Handler has that). With its map entry (id string, hash-map slot) it is
// well under 200 bytes a record.
type remote struct {
	hash uint64 // of the value as written
	seen int64  // when last written, in ns since Member.epoch (monotonic)
}

// mirror is the watch loop's state; only the loop touches it.
type mirror struct {
	m         *Member
	mac       hash.Hash // the loop's HMAC of the cluster secret
	remotes   map[string]remote
	s         *session // the watch followed; nil while not connected
	replaying bool     // the watch has not yet sent the end of its replay
}

// sweepEvery is how often records not renewed within the TTL are looked
// for: TTL/20, and at least every 500 ms.
func (m *Member) sweepEvery() time.Duration {
	return min(m.cfg.TTL/20, 500*time.Millisecond)
}

// watch runs the watch loop until Close.
func (m *Member) watch() {
	defer m.wg.Done()
	w := &mirror{m: m, mac: m.seal.newHash(), remotes: map[string]remote{}}
	sweep := time.NewTicker(m.sweepEvery())
	defer sweep.Stop()
	var updates <-chan jetstream.KeyValueEntry
	for {
		select {
		case <-m.ctx.Done():
			if w.s != nil {
				m.stopWatch(w.s)
			}
			return
		case s := <-m.sessions:
			if w.s != nil {
				m.stopWatch(w.s)
			}
			w.s, updates = s, nil
			if s != nil {
				updates = s.w.Updates()
				w.replaying = true
			}
		case e, ok := <-updates:
			switch {
			case !ok:
				// The watch ended without a reconnect: open it again.
				updates = nil
				m.log.Warn("cluster: the watch of the bucket ended; opening it again", "bucket", m.cfg.Bucket)
				m.reopen.Store(true)
				m.signal()
			case e == nil:
				if w.replaying {
					w.replaying = false
					w.endReplay()
				}
			default:
				w.apply(e)
			}
		case now := <-sweep.C:
			w.sweep(now)
			m.pruneGone(now)
		}
	}
}

// stopWatch stops a watch in the background: the client's Unsubscribe
// also deletes the consumer, a request that waits out its timeout while
// NATS is unreachable; and the subscription, blocked on the full channel,
// closes it only once drained.
func (m *Member) stopWatch(s *session) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		s.cancel() // the client unsubscribes when the watch's context ends
		timeout := time.NewTimer(5 * time.Second)
		defer timeout.Stop()
		for {
			select {
			case _, ok := <-s.w.Updates():
				if !ok {
					return
				}
			case <-timeout.C:
				return
			}
		}
	}()
}

// mono is t as ns since the member's epoch, on the monotonic clock.
func (m *Member) mono(t time.Time) int64 { return int64(t.Sub(m.epoch)) }

// apply takes one entry of the watch.
func (w *mirror) apply(e jetstream.KeyValueEntry) {
	m := w.m
	key := e.Key()
	if op := e.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		id, ok := idOfKey(key)
		if !ok {
			return
		}
		m.keyDeleted(w.s, id, e.Revision())
		w.drop(id)
		return
	}
	now := time.Now()
	seen := m.mono(now)
	if w.replaying {
		// A replayed record was written when it was created (not later
		// than now: clocks differ); one older than the TTL was not
		// renewed in time and is only waiting to be removed.
		if age := now.Sub(e.Created()); age > 0 {
			if age > m.cfg.TTL {
				return
			}
			seen -= int64(age)
		}
	}
	// Every entry is checked before anything else: its size, then its
	// signature and when it was signed.
	value := e.Value()
	if len(value) > MaxRecordBytes {
		m.refuse(RefusedSize, key, fmt.Errorf("%d bytes, more than %d", len(value), MaxRecordBytes))
		return
	}
	body, reason, err := m.seal.unseal(w.mac, key, value, now, m.cfg.TTL)
	if err != nil {
		m.refuse(reason, key, err)
		return
	}
	// Most entries are renewals: of a record delivered already (the same
	// JSON under the same key, told by the hash), or our own coming
	// back. Neither is decoded.
	sum := maphash.Bytes(m.seed, body)
	if id, ok := idOfKey(key); ok {
		held, echo := m.localView(id, body)
		if echo {
			w.drop(id)
			return
		}
		if r, known := w.remotes[id]; known && r.hash == sum && !held {
			w.remotes[id] = remote{hash: sum, seen: seen}
			return
		}
	}
	rec, reason, err := decodeRecord(key, body, now, m.cfg.TTL)
	if err != nil {
		m.refuse(reason, key, err)
		return
	}
	switch m.resolve(w.s, rec, e.Revision()) {
	case skip:
		return
	case ours:
		w.drop(rec.ID)
		return
	}
	r, known := w.remotes[rec.ID]
	if !known && len(w.remotes) >= m.cfg.MaxRemote {
		m.count(RefusedFull) // logged once
		if !m.capFull.Swap(true) {
			m.log.Warn("cluster: holding the most remote records allowed (gateway.cluster.maxRemoteNodes); refusing new ones", "max", m.cfg.MaxRemote, "node", rec.ID)
		}
		return
	}
	w.remotes[rec.ID] = remote{hash: sum, seen: seen}
	if !known {
		m.remoteN.Store(int64(len(w.remotes)))
	}
	if !known || r.hash != sum {
		m.h.Put(rec)
	}
}

// drop forgets the remote record of id, if there is one, and tells the
// Handler.
func (w *mirror) drop(id string) {
	if _, ok := w.remotes[id]; !ok {
		return
	}
	delete(w.remotes, id)
	w.m.remoteN.Store(int64(len(w.remotes)))
	w.m.h.Delete(id)
}

// endReplay marks the member in sync. The remote records the new watch
// did not replay are left to the sweep, which drops them a TTL after they
// were last seen: after a NATS restart the bucket comes back empty and
// the other replicas write their records again within moments, so that
// dropping them here would take their skills away and back for nothing.
func (w *mirror) endReplay() {
	m := w.m
	m.mu.Lock()
	if m.sess == w.s {
		m.synced = true
	}
	local := m.nlocal
	m.mu.Unlock()
	m.log.Info("cluster: in sync with the bucket", "bucket", m.cfg.Bucket, "remote", len(w.remotes), "local", local)
}

// sweep drops the remote records not renewed within the TTL, connected
// or not: a replica never keeps facts it can no longer confirm.
func (w *mirror) sweep(now time.Time) {
	cut := w.m.mono(now) - int64(w.m.cfg.TTL)
	n := len(w.remotes)
	for id, r := range w.remotes {
		if r.seen < cut {
			delete(w.remotes, id)
			w.m.h.Delete(id)
		}
	}
	if len(w.remotes) != n {
		w.m.remoteN.Store(int64(len(w.remotes)))
	}
}

// verdict is how the watch treats a record of an id this replica may hold.
type verdict uint8

const (
	theirs verdict = iota // a remote record: deliver it
	ours                  // the key is (to be) ours: no remote record of the id
	skip                  // an entry of a watch being replaced: the next one replays the key
)

// resolve decides between a record of the bucket and the local record of
// the same id, if any: the newer connection wins (Newer). Ours losing, we
// stop writing it; ours winning, it is written over the other at once.
func (m *Member) resolve(s *session, rec *Record, rev uint64) verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.local[rec.ID]
	switch {
	case l == nil:
		if t, ok := m.gone[rec.ID]; ok && m.own(rec, t.connectedAt) {
			return skip // our write of a record since withdrawn: its delete follows
		}
		return theirs
	case l.state != active:
		if m.own(rec, l.connectedAt) {
			return skip // our write of a record withdrawn or superseded since
		}
		return theirs
	case s != m.sess:
		return skip
	case rev <= l.rev:
		return ours // our own write coming back, or since overwritten by ours
	case m.own(rec, l.connectedAt):
		// Our record, but not as we hold it (localView): an earlier write
		// of ours, written back by someone else. Ours goes over it now.
		if !l.dirty && !l.inFlight {
			l.rev = rev
			m.markDirty(l)
		}
		return ours
	case Newer(rec, &Record{Replica: m.cfg.Replica, ConnectedAt: l.connectedAt}):
		m.supersede(l)
		return theirs
	}
	l.rev = rev // overwrite exactly this record
	m.markDirty(l)
	return ours
}

// localView reports whether id has an active local record, and whether
// value is that record as we wrote it.
func (m *Member) localView(id string, value []byte) (held, echo bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.local[id]
	if l == nil || l.state != active {
		return false, false
	}
	return true, bytes.Equal(l.value, value)
}

// keyDeleted writes a local record again when its key was deleted by
// someone else (an operator, or a delete racing our write).
func (m *Member) keyDeleted(s *session, id string, rev uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.local[id]
	if l == nil || l.state != active || s != m.sess || rev < l.rev {
		return
	}
	l.rev = rev
	m.markDirty(l)
}

// decodeRecord decodes the JSON of a record signed under key, refusing
// what no replica writes: not JSON of a Record, a record that fails
// Validate (skew is the TTL), or one under another id's key. It returns
// the reason of a refusal (Refused*).
func decodeRecord(key string, body []byte, now time.Time, skew time.Duration) (*Record, string, error) {
	var rec Record
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, RefusedInvalid, fmt.Errorf("not a record: %w", err)
	}
	if err := rec.Validate(now, skew); err != nil {
		reason := RefusedInvalid
		if errors.Is(err, errTime) {
			reason = RefusedTime
		}
		return nil, reason, fmt.Errorf("invalid record: %w", err)
	}
	if k := Key(rec.ID); k != key {
		return nil, RefusedInvalid, fmt.Errorf("the record of node %q belongs under key %q", rec.ID, clip(k))
	}
	return &rec, "", nil
}

// readRecord checks a value of the bucket under key (its size and
// signature) and decodes it: the checks of the watch, for a writer. It
// returns the reason of a refusal (Refused*).
func (m *Member) readRecord(h hash.Hash, key string, value []byte, now time.Time) (*Record, string, error) {
	if len(value) > MaxRecordBytes {
		return nil, RefusedSize, fmt.Errorf("%d bytes, more than %d", len(value), MaxRecordBytes)
	}
	body, reason, err := m.seal.unseal(h, key, value, now, m.cfg.TTL)
	if err != nil {
		return nil, reason, err
	}
	return decodeRecord(key, body, now, m.cfg.TTL)
}

// idOfKey is the node id of a bucket key (the inverse of Key); false for
// a key Key never makes.
func idOfKey(key string) (string, bool) {
	if len(key) > 0 && key[0] == '=' {
		b, err := base64.RawURLEncoding.DecodeString(key[1:])
		if err != nil || Key(string(b)) != key {
			return "", false
		}
		return string(b), true
	}
	return key, plainKey(key)
}

// clip shortens s for a log line.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

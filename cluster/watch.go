package cluster

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/maphash"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The watch loop: one goroutine follows the bucket, keeps what it needs
// of the other replicas' records and heartbeats, drops the records of an
// incarnation whose heartbeat lapsed, and is the only caller of the
// Handler.

// remote is what a replica keeps of another replica's record: enough to
// tell a change from a record read again, to know whose it is and to
// delete it when its replica is gone, not the record (the Handler has
// that). With its map entry (id string, hash-map slot) it is well under
// 200 bytes a record.
type remote struct {
	hash uint64 // of the value as written
	rev  uint64 // its revision: a record left over is deleted at exactly it
	own  *owner // the incarnation that wrote it
	gen  uint32 // mirror.gen when it was last read: of this session, or of one before
}

// owner is one incarnation of another replica (or of this one's run
// before), as its heartbeat and records show it.
type owner struct {
	name, inc string
	beat      int64         // mono ns: its last heartbeat read (before one: its last record read)
	ttl       time.Duration // its heartbeat's (before one: this replica's)
	signed    int64         // unix ms of its last heartbeat read: only a later one counts
	since     int64         // its heartbeat's Since
	rev       uint64        // of its heartbeat
	heard     bool          // a heartbeat of it was read
	n         int           // its records held
	lapsed    int64         // mono ns when its heartbeat lapsed; 0 while alive
	swept     int64         // mono ns when this replica last deleted its records (as their adopter)
}

// gone is an owner dropped lately: its last heartbeat's time, so that a
// copy of an older one does not bring it back, and when it was dropped.
type gone struct {
	signed int64
	at     int64
}

// goneFor is how long a dropped owner is remembered.
const goneFor = 10 * time.Minute

// mirror is the watch loop's state; only the loop touches it.
type mirror struct {
	m       *Member
	mac     hash.Hash // the loop's HMAC of the cluster secret
	remotes map[string]remote
	owners  map[string]*owner // by ownerKey
	gone    map[string]gone   // by ownerKey
	s       *session          // the watch followed; nil while not connected
	gen     uint32            // bumped with each session
	// unconfirmed, when not 0, is when (mono ns) the remote records not
	// read again in this session are dropped: the bucket did not hold
	// them at its replay (lost by a NATS restart, or deleted while this
	// replica was not watching), and their replicas did not write them
	// again within a TTL.
	unconfirmed int64

	replaying bool      // the watch has not yet read the bucket to its end
	replayed  int       // entries read in the replay
	nilSeen   bool      // the client's end-of-replay marker came (see watch)
	lastEntry time.Time // when the last entry was read

	// Whether the watch is current, for judging lapses: the last entry
	// read had nothing pending after it (caughtUp), and this replica's own
	// heartbeat came back through it lately (ownEcho: unix ms it was
	// signed at). A watch that falls behind (a replica busy, NATS slow)
	// reads every heartbeat late: it must not take that for a lapse.
	caughtUp    bool
	ownEcho     int64
	behindSince int64 // mono ns since when it is not current; 0 while it is
}

func newMirror(m *Member) *mirror {
	return &mirror{m: m, mac: m.seal.newHash(), remotes: map[string]remote{}, owners: map[string]*owner{}, gone: map[string]gone{}}
}

// ownerKey names an incarnation of a replica.
func ownerKey(name, inc string) string { return name + "/" + inc }

// sweepEvery is how often lapsed heartbeats are looked for: TTL/20, and
// at least every 250 ms (a sweep looks at incarnations, not records).
func (m *Member) sweepEvery() time.Duration {
	return min(m.cfg.TTL/20, 250*time.Millisecond)
}

// watch runs the watch loop until Close.
//
// The replay of a new watch ends at the first entry read at or past the
// stream's last sequence before the watch began, or with nothing pending
// after it (or at once for an empty bucket): entries come in stream order,
// so that every record the bucket held then has been read, or was written
// again since (then it comes later, as a change). The client's own
// end-of-replay marker comes once as many entries arrived as were pending
// when the watch began, and writes made during the replay count among
// them, so that it could come before the bucket was read; waiting for
// nothing to be pending instead would wait out a storm of writes (a
// restarted replica's nodes reconnecting).
func (m *Member) watch() {
	defer m.wg.Done()
	w := newMirror(m)
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
				w.gen++
				w.replaying, w.replayed, w.nilSeen = true, 0, false
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
				w.nilSeen = true
				if w.replaying && w.replayed == 0 {
					w.endReplay()
				}
			default:
				w.lastEntry = time.Now()
				w.apply(e)
				w.caughtUp = e.Delta() == 0
				if w.replaying {
					w.replayed++
					if e.Delta() == 0 || w.s.lastSeq > 0 && e.Revision() >= w.s.lastSeq {
						w.endReplay()
					}
				}
			}
		case now := <-sweep.C:
			if w.replaying && w.nilSeen && now.Sub(w.lastEntry) > time.Second {
				// Entries stopped coming, none of them the last: as the
				// client counts, the replay is over.
				w.endReplay()
			}
			if !w.replaying {
				w.sweep(now)
			}
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

// seenAt is when an entry read now was written, as mono ns: now for a
// live entry; for one of a replay, when NATS stored it (not later than
// now: clocks differ).
func (w *mirror) seenAt(e jetstream.KeyValueEntry, now time.Time) int64 {
	seen := w.m.mono(now)
	if w.replaying {
		if age := now.Sub(e.Created()); age > 0 {
			seen -= int64(age)
		}
	}
	return seen
}

// apply takes one entry of the watch.
func (w *mirror) apply(e jetstream.KeyValueEntry) {
	m := w.m
	key := e.Key()
	if strings.HasPrefix(key, HeartbeatPrefix) {
		w.applyHeartbeat(e)
		return
	}
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
	// Every entry is checked before anything else: its size, then its
	// signature and when it was signed. A refused entry over the key of
	// a record this replica holds is written over at once.
	value := e.Value()
	if len(value) > MaxRecordBytes {
		m.refuse(RefusedSize, key, fmt.Errorf("%d bytes, more than %d", len(value), MaxRecordBytes))
		w.overwritten(key, e.Revision())
		return
	}
	body, reason, err := m.seal.unseal(w.mac, key, value, e.Created(), m.cfg.TTL)
	if err != nil {
		m.refuse(reason, key, err)
		w.overwritten(key, e.Revision())
		return
	}
	// Many entries are read before: a record delivered already (the same
	// JSON under the same key, told by the hash; read again by a new
	// watch), or our own coming back. Neither is decoded.
	sum := maphash.Bytes(m.seed, body)
	if id, ok := idOfKey(key); ok {
		held, echo := m.localView(w.s, id, body, e.Revision())
		if echo {
			w.drop(id)
			return
		}
		if r, known := w.remotes[id]; known && r.hash == sum && !held {
			r.rev, r.gen = e.Revision(), w.gen
			w.remotes[id] = r
			return
		}
	}
	rec, reason, err := decodeWire(key, body, now, m.cfg.TTL)
	if err != nil {
		m.refuse(reason, key, err)
		w.overwritten(key, e.Revision())
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
	own := w.owner(rec.Replica, rec.Incarnation, w.seenAt(e, now))
	switch {
	case !known:
		own.n++
	case r.own != own:
		r.own.n--
		own.n++
	}
	w.remotes[rec.ID] = remote{hash: sum, rev: e.Revision(), own: own, gen: w.gen}
	if !known {
		m.remoteN.Store(int64(len(w.remotes)))
	}
	if !known || r.hash != sum {
		m.h.Put(&rec.Record)
	}
}

// owner returns the owner of a record of replica name, incarnation inc,
// read at seen: made when new. Until a heartbeat of it is read, each of
// its records keeps it alive for a TTL.
func (w *mirror) owner(name, inc string, seen int64) *owner {
	k := ownerKey(name, inc)
	o := w.owners[k]
	if o == nil {
		o = &owner{name: name, inc: inc, beat: seen, ttl: w.m.cfg.TTL}
		w.owners[k] = o
	} else if !o.heard && seen > o.beat {
		o.beat = seen
	}
	return o
}

// maxHeartbeatBytes bounds a heartbeat's value.
const maxHeartbeatBytes = 4 << 10

// applyHeartbeat takes an entry of a heartbeat key.
func (w *mirror) applyHeartbeat(e jetstream.KeyValueEntry) {
	m := w.m
	key := e.Key()
	if op := e.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		// Another replica's heartbeat deleted changes nothing here: its
		// nodes go when no heartbeat came for its TTL (a replica deletes
		// the heartbeat of one gone). Ours is written again at once.
		if key == m.hbKey && w.s != nil {
			m.kickBeat()
		}
		return
	}
	value := e.Value()
	if len(value) > maxHeartbeatBytes {
		m.refuse(RefusedSize, key, fmt.Errorf("a heartbeat of %d bytes, more than %d", len(value), maxHeartbeatBytes))
		return
	}
	body, reason, err := m.seal.unseal(w.mac, key, value, e.Created(), m.cfg.TTL)
	if err != nil {
		m.refuse(reason, key, err)
		if key == m.hbKey && w.s != nil {
			m.kickBeat()
		}
		return
	}
	signed := signedAt(value)
	if key == m.hbKey {
		w.ownEcho = max(w.ownEcho, signed.UnixMilli()) // ours, read back
		return
	}
	var hb heartbeat
	if err := json.Unmarshal(body, &hb); err != nil {
		m.refuse(RefusedInvalid, key, fmt.Errorf("not a heartbeat: %w", err))
		return
	}
	if err := hb.validate(key, signed, m.cfg.TTL); err != nil {
		reason := RefusedInvalid
		if errors.Is(err, errTime) {
			reason = RefusedTime
		}
		m.refuse(reason, key, fmt.Errorf("invalid heartbeat: %w", err))
		return
	}
	ms := signed.UnixMilli()
	k := ownerKey(hb.Replica, hb.Incarnation)
	o := w.owners[k]
	if o == nil || !o.heard {
		if g, ok := w.gone[k]; ok {
			if ms < g.signed {
				m.refuse(RefusedTime, key, errors.New("a heartbeat signed before the last one read: an old copy written back"))
				return
			}
			delete(w.gone, k)
			if !w.replaying && ms > g.signed && hb.Since <= g.signed {
				// Its heartbeats never stopped: this replica alone missed
				// them (its watch fell behind) and dropped its nodes, whose
				// records it will not write again. Read the bucket again.
				m.log.Warn("cluster: a replica whose nodes were dropped here never stopped its heartbeat; reading the bucket again",
					"other", hb.Replica, "incarnation", hb.Incarnation)
				m.reopen.Store(true)
				m.signal()
			}
		}
		if o == nil {
			o = &owner{name: hb.Replica, inc: hb.Incarnation}
			w.owners[k] = o
		}
	} else if ms <= o.signed {
		if ms < o.signed {
			m.refuse(RefusedTime, key, errors.New("a heartbeat signed before the last one read: an old copy written back"))
		}
		return // or the same one, read again by a new watch
	}
	if o.lapsed != 0 {
		m.log.Info("cluster: a replica's heartbeat is back", "other", hb.Replica, "incarnation", hb.Incarnation, "nodes", o.n)
		o.lapsed = 0
	}
	o.signed, o.since, o.rev, o.heard = ms, hb.Since, e.Revision(), true
	o.ttl = time.Duration(hb.TTLMs) * time.Millisecond
	o.beat = w.seenAt(e, time.Now())
}

// overwritten writes a local record again at once when the entry under
// its key was refused: whoever wrote it has no secret, and the others
// keep the record they had meanwhile.
func (w *mirror) overwritten(key string, rev uint64) {
	if id, ok := idOfKey(key); ok {
		w.m.keyDeleted(w.s, id, rev)
	}
}

// drop forgets the remote record of id, if there is one, and tells the
// Handler.
func (w *mirror) drop(id string) {
	r, ok := w.remotes[id]
	if !ok {
		return
	}
	r.own.n--
	delete(w.remotes, id)
	w.m.remoteN.Store(int64(len(w.remotes)))
	w.m.h.Delete(id)
}

// endReplay marks the member in sync, once the bucket is read: the
// incarnations whose heartbeat lapsed long ago (read in the bucket, left
// over) are dropped first, and the local records the bucket did not
// hold are written again. The remote records of the session before that
// the replay did not show are dropped a TTL from now unless their
// replicas write them again: after a NATS restart the bucket comes back
// empty and the other replicas write their records again within moments,
// so that dropping them at once would take their skills away and back
// for nothing.
func (w *mirror) endReplay() {
	m := w.m
	now := time.Now()
	w.replaying = false
	for _, r := range w.remotes {
		if r.gen != w.gen {
			w.unconfirmed = m.mono(now) + int64(m.cfg.TTL)
			break
		}
	}
	w.sweep(now)
	m.mu.Lock()
	rewritten := 0
	if m.sess == w.s {
		m.synced = true
		m.readOnce.Store(true)
		rewritten = m.confirmLocals(w.s)
	}
	local := m.nlocal
	m.mu.Unlock()
	m.log.Info("cluster: in sync with the bucket", "bucket", m.cfg.Bucket, "remote", len(w.remotes), "local", local,
		"replicas", m.replicas.Load(), "rewritten", rewritten)
}

// sweep looks at every incarnation's heartbeat. One that lapsed (none
// read for its TTL, connected to NATS or not: a replica never keeps facts
// it can no longer confirm) has its records dropped at once, and deleted
// from the bucket by one survivor, unless another incarnation of the same
// replica name lives: that one (a restart) takes them back as its nodes
// reconnect, and deletes the ones they do not take back a TTL after the
// lapse.
func (w *mirror) sweep(now time.Time) {
	m := w.m
	t := m.mono(now)
	if w.s != nil && !w.current(now, t) {
		return
	}
	if w.unconfirmed != 0 && t >= w.unconfirmed {
		w.unconfirmed = 0
		var ids []string
		for id, r := range w.remotes {
			if r.gen != w.gen {
				r.own.n--
				delete(w.remotes, id)
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			m.remoteN.Store(int64(len(w.remotes)))
			m.h.DeleteMany(ids)
		}
	}
	var del []foreign
	live := 0
	for k, o := range w.owners {
		if t-o.beat <= int64(o.ttl) {
			if o.heard {
				live++
			}
			continue
		}
		if o.lapsed == 0 {
			o.lapsed = t
		}
		if o.n > 0 {
			if mine, ok := w.adopted(o, t); ok {
				if o.lapsed != t && mine && w.s != nil && t-o.lapsed >= int64(m.cfg.TTL) && t-o.swept >= int64(m.cfg.TTL) {
					// Taken back by this run where their nodes reconnected
					// here; the others go.
					o.swept = t
					keys := w.keysOf(o)
					m.log.Info("cluster: deleting the records of a run before of this replica that its nodes did not take back",
						"incarnation", o.inc, "records", len(keys))
					del = append(del, keys...)
				} else if o.lapsed == t {
					m.log.Info("cluster: a replica's heartbeat lapsed; another run of it takes its nodes back as they reconnect",
						"other", o.name, "incarnation", o.inc, "nodes", o.n)
				}
				continue
			}
		}
		// Gone: its nodes leave this replica's answers now.
		keys := w.dropOwner(o)
		if len(keys) > 0 {
			m.log.Warn("cluster: a replica's heartbeat lapsed; dropping its nodes", "other", o.name, "incarnation", o.inc,
				"nodes", len(keys), "lapsed", time.Duration(t-o.beat).Round(time.Millisecond))
		}
		delete(w.owners, k)
		w.gone[k] = gone{signed: max(o.signed, w.gone[k].signed), at: t}
		if w.designated(t) {
			// Its heartbeat is read again first (Member.purge): the records
			// go only if it did not change since.
			m.log.Info("cluster: deleting the records of a replica whose heartbeat lapsed", "other", o.name, "incarnation", o.inc, "records", len(keys))
			if keys == nil {
				keys = []foreign{}
			}
			del = append(del, foreign{key: HeartbeatPrefix + o.inc, rev: o.rev, gone: keys})
		}
	}
	for k, g := range w.gone {
		if t-g.at > int64(goneFor) {
			delete(w.gone, k)
		}
	}
	m.replicas.Store(int64(live))
	m.deleteForeign(del)
}

// current reports whether the watch is current enough to judge lapses by
// (see mirror.caughtUp). One behind for three TTLs that read nothing for
// a TTL (stalled, not busy: this replica's heartbeat alone comes every
// TTL/3) is opened again: a fresh read of the bucket.
func (w *mirror) current(now time.Time, t int64) bool {
	m := w.m
	if w.caughtUp && now.UnixMilli()-w.ownEcho <= (m.cfg.TTL/2).Milliseconds() {
		w.behindSince = 0
		return true
	}
	switch {
	case w.behindSince == 0:
		w.behindSince = t
	case t-w.behindSince > int64(3*m.cfg.TTL) && now.Sub(w.lastEntry) > m.cfg.TTL:
		m.log.Warn("cluster: the watch of the bucket is stalled (this replica's own heartbeat does not come back); reading the bucket again",
			"behind", time.Duration(t-w.behindSince).Round(time.Millisecond))
		w.behindSince = t
		m.reopen.Store(true)
		m.signal()
	}
	return false
}

// adopted reports whether a live incarnation of o's replica name other
// than o takes o's records back, and whether it is this replica.
func (w *mirror) adopted(o *owner, t int64) (mine, ok bool) {
	if o.name == w.m.cfg.Replica && w.s != nil {
		return true, true
	}
	for _, p := range w.owners {
		if p != o && p.name == o.name && p.heard && t-p.beat <= int64(p.ttl) {
			return false, true
		}
	}
	return false, false
}

// designated reports whether this replica is the one that deletes a gone
// replica's records: connected, through its replay, and of the least
// name (and incarnation) among the live replicas it sees. Deletes are
// made at the revision read, so that two replicas deciding so at once
// (they see different heartbeats for a moment) do no harm.
func (w *mirror) designated(t int64) bool {
	m := w.m
	if w.s == nil || w.replaying {
		return false
	}
	me := ownerKey(m.cfg.Replica, m.inc)
	for k, p := range w.owners {
		if p.heard && t-p.beat <= int64(p.ttl) && k < me {
			return false
		}
	}
	return true
}

// keysOf lists the keys and revisions of o's records held.
func (w *mirror) keysOf(o *owner) []foreign {
	var keys []foreign
	for id, r := range w.remotes {
		if r.own == o {
			keys = append(keys, foreign{key: Key(id), rev: r.rev})
		}
	}
	return keys
}

// dropOwner drops every record of o and tells the Handler, in one call;
// it returns their keys and revisions.
func (w *mirror) dropOwner(o *owner) []foreign {
	var keys []foreign
	var ids []string
	for id, r := range w.remotes {
		if r.own == o {
			keys = append(keys, foreign{key: Key(id), rev: r.rev})
			ids = append(ids, id)
			delete(w.remotes, id)
		}
	}
	o.n = 0
	if len(ids) > 0 {
		w.m.remoteN.Store(int64(len(w.remotes)))
		w.m.h.DeleteMany(ids)
	}
	return keys
}

// verdict is how the watch treats a record of an id this replica may hold.
type verdict uint8

const (
	theirs verdict = iota // a remote record: deliver it
	ours                  // the key is (to be) ours: no remote record of the id
	skip                  // an entry of a watch being replaced, or ours of a node gone: the next one replays the key, or the delete follows
)

// resolve decides between a record of the bucket and the local record of
// the same id, if any: the newer connection wins (Newer). Ours losing, we
// stop writing it; ours winning, it is written over the other at once. A
// record of this run of this replica for a connection it does not hold
// (a copy written back, or a write of ours coming back late) is deleted,
// if it is still there.
func (m *Member) resolve(s *session, rec *wireRecord, rev uint64) verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.local[rec.ID]
	switch {
	case l == nil:
		if t, ok := m.gone[rec.ID]; ok && m.own(rec, t.connectedAt) {
			return skip // our write of a record since withdrawn: its delete follows
		}
		if m.mine(rec) {
			m.foreign = append(m.foreign, foreign{key: Key(rec.ID), rev: rev})
			m.kick()
			return skip
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
	case Newer(&rec.Record, &Record{Replica: m.cfg.Replica, ConnectedAt: l.connectedAt}):
		m.supersede(l)
		return theirs
	}
	l.rev = rev // overwrite exactly this record
	m.markDirty(l)
	return ours
}

// localView reports whether id has an active local record, and whether
// value is that record as we wrote it. When it is, read in session s, the
// bucket holds it at revision rev.
func (m *Member) localView(s *session, id string, value []byte, rev uint64) (held, echo bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.local[id]
	if l == nil || l.state != active {
		return false, false
	}
	if !bytes.Equal(l.value, value) {
		return true, false
	}
	if s != nil && s == m.sess {
		l.seenIn = s
		l.rev = max(l.rev, rev)
	}
	return true, true
}

// keyDeleted writes a local record again when its key was deleted (or
// written with what no replica writes) by someone else: an operator, a
// replica that saw this one's heartbeat lapse, or a delete racing our
// write.
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
	w, reason, err := decodeWire(key, body, now, skew)
	if err != nil {
		return nil, reason, err
	}
	return &w.Record, "", nil
}

// decodeWire is decodeRecord, with the record's incarnation.
func decodeWire(key string, body []byte, now time.Time, skew time.Duration) (*wireRecord, string, error) {
	var rec wireRecord
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
	if err := validateIncarnation(rec.Incarnation); err != nil {
		return nil, RefusedInvalid, fmt.Errorf("invalid record: incarnation: %w", err)
	}
	if k := Key(rec.ID); k != key {
		return nil, RefusedInvalid, fmt.Errorf("the record of node %q belongs under key %q", rec.ID, clip(k))
	}
	return &rec, "", nil
}

// readRecord checks an entry of the bucket (its size and signature) and
// decodes it: the checks of the watch, for a writer.
func (m *Member) readRecord(h hash.Hash, key string, e jetstream.KeyValueEntry) (*wireRecord, error) {
	value := e.Value()
	if len(value) > MaxRecordBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", len(value), MaxRecordBytes)
	}
	body, _, err := m.seal.unseal(h, key, value, e.Created(), m.cfg.TTL)
	if err != nil {
		return nil, err
	}
	rec, _, err := decodeWire(key, body, time.Now(), m.cfg.TTL)
	return rec, err
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

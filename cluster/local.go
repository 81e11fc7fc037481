package cluster

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Writes. Publish and Withdraw only change the local map and queue the
// record; a dispatcher hands the queued records (fresh changes first,
// then deletes of other replicas' records, then retries that are due) to
// a pool of writers making synchronous KV calls, so that up to `writers`
// calls are in flight at once while each record has at most one: its
// revision (for Update and Delete) is always the one its last write
// returned. Writes of one record are coalesced: what is written is its
// latest value. A record is written when it changes, never to renew it:
// the replica's heartbeat (heartbeat.go) says it is alive.

// localState is what is to become of a local record.
type localState uint8

const (
	active     localState = iota // written, and kept in the bucket
	withdrawn                    // its node left: the key is to be deleted, then the record forgotten
	superseded                   // another replica holds a newer connection: not written until the node connects again
)

// local is a record of a node this replica holds.
type local struct {
	id, key     string
	value       []byte // the record's JSON, as signed at each write; nil unless active
	connectedAt time.Time
	state       localState
	rev         uint64 // the revision of our last write; 0 when unknown (then Put, not Update)
	written     bool   // a write was sent: the bucket may hold the record
	dirty       bool   // to be written or deleted
	queued      bool   // in Member.fresh
	inFlight    bool   // a writer has it
	fails       int    // writes failed in a row
	due         time.Time
	hidx        int      // index in Member.retry, -1 when not there
	seenIn      *session // the session whose watch read it back as written: the bucket holds it
	wroteIn     *session // the session its last write was made in
}

// op is one write (or delete) of a record, as a writer makes it. An op
// without l deletes a key of another replica (or of this one's run
// before) at exactly rev: its heartbeat lapsed, or the record was left
// over (foreign).
type op struct {
	l           *local
	key         string
	value       []byte
	connectedAt time.Time
	rev         uint64
	del         bool
	sess        *session
	gone        []foreign // see foreign
}

// foreign is a key of the bucket this replica deletes though it did not
// write it, if it still holds revision rev. A foreign with gone set is
// the heartbeat of an incarnation whose heartbeat lapsed here (key, at rev
// 0 if none was read): it is read first, and the records in gone are
// deleted only if it did not change since (else this replica is behind,
// not the other gone).
type foreign struct {
	key  string
	rev  uint64
	gone []foreign
}

type resultKind uint8

const (
	written   resultKind = iota // written at rev
	deleted                     // deleted, or not ours to delete
	overtaken                   // the bucket holds a newer connection of another replica
	failed                      // to be retried
)

type result struct {
	kind resultKind
	rev  uint64
	err  error
}

// Publish sets the local record of rec.ID and queues its write; rec.Replica
// is set to this replica. It never blocks: the gateway calls it under its
// lock. Writes of one id are coalesced (the latest record wins); a record
// equal to the one held is not written again. A record
// that would be refused by the other replicas (Validate, MaxRecordBytes)
// is logged and not published.
func (m *Member) Publish(rec Record) {
	rec.Replica = m.cfg.Replica
	data, err := json.Marshal(&wireRecord{Record: rec, Incarnation: m.inc})
	if err == nil && len(data)+sealOverhead > MaxRecordBytes {
		err = fmt.Errorf("%d bytes, more than %d with its signature", len(data), MaxRecordBytes-sealOverhead)
	}
	if err == nil {
		err = rec.Validate(time.Now(), m.cfg.TTL)
	}
	if err != nil {
		m.log.Warn("cluster: not publishing an invalid record", "node", rec.ID, "err", err)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	l := m.local[rec.ID]
	switch {
	case l == nil:
		// Not active yet: it becomes so, and is counted, below.
		l = &local{id: rec.ID, key: Key(rec.ID), hidx: -1, state: withdrawn}
		m.local[rec.ID] = l
		delete(m.gone, rec.ID)
	case l.state == superseded && l.connectedAt.Equal(rec.ConnectedAt):
		return // the same old connection: the newer one keeps the key
	case l.state == active && bytes.Equal(l.value, data):
		return
	}
	if l.state != active {
		l.state = active
		m.nlocal++
	}
	l.value, l.connectedAt = data, rec.ConnectedAt
	m.markDirty(l)
}

// Withdraw says the local node id left: its key is deleted, if the local
// record still is the connection of connectedAt (else nothing happens: the
// node connected again). It never blocks.
func (m *Member) Withdraw(id string, connectedAt time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.local[id]
	if l == nil || !l.connectedAt.Equal(connectedAt) || l.state == withdrawn {
		return
	}
	if l.state == superseded {
		m.forget(l) // the key is the newer connection's
		return
	}
	m.nlocal--
	l.state, l.value = withdrawn, nil
	m.retry.remove(l)
	if !l.written && !l.inFlight {
		m.forget(l)
		return
	}
	m.markDirty(l)
}

// markDirty queues l to be written now. mu is held.
func (m *Member) markDirty(l *local) {
	l.dirty = true
	if !l.queued {
		l.queued = true
		m.fresh = append(m.fresh, l)
	}
	m.kick()
}

// kick wakes the dispatcher.
func (m *Member) kick() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// forget drops l from the local records. mu is held.
func (m *Member) forget(l *local) {
	if l.state == active {
		m.nlocal--
	}
	delete(m.local, l.id)
	m.retry.remove(l)
	if l.written {
		// Our last write of it may still be on its way to the watch.
		m.gone[l.id] = tombstone{connectedAt: l.connectedAt, at: time.Now()}
	}
	l.state, l.value, l.dirty = withdrawn, nil, false
}

// tombstone is a local record forgotten less than a TTL ago: the watch
// may yet bring back our last write of it, which is not another
// replica's record.
type tombstone struct {
	connectedAt time.Time
	at          time.Time
}

// pruneGone drops the tombstones older than the TTL.
func (m *Member) pruneGone(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, t := range m.gone {
		if now.Sub(t.at) > m.cfg.TTL {
			delete(m.gone, id)
		}
	}
}

// supersede stops writing l: the bucket holds a newer connection of its
// node, which the watch delivers to the Handler. mu is held.
func (m *Member) supersede(l *local) {
	m.log.Info("cluster: a newer connection of the node is held by another replica; not writing ours", "node", l.id)
	if l.state == active {
		m.nlocal--
	}
	l.state, l.value, l.dirty = superseded, nil, false
	m.retry.remove(l)
}

// setSession makes s the bucket writes go to (nil: none). Revisions of
// another session mean nothing (another bucket, or another server): each
// local record's is learned again from the watch's replay, and the
// records the replay does not show are written again (confirmLocals). mu
// is not held.
func (m *Member) setSession(s *session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sess, m.synced = s, false
	m.failRun = 0
	if s == nil {
		return
	}
	m.bucketErr = ""
	for _, l := range m.local {
		l.rev = 0
	}
	m.kickBeat()
	m.kick() // writes queued while there was no session
}

// confirmLocals writes again, at the end of the replay of session s, the
// active local records the replay did not show as written, nor written in
// s since: the bucket was lost (a NATS restart), or someone deleted them
// meanwhile. mu is held.
func (m *Member) confirmLocals(s *session) int {
	n := 0
	for _, l := range m.local {
		if l.state == active && l.seenIn != s && l.wroteIn != s && !l.dirty && !l.inFlight {
			l.rev = 0
			m.markDirty(l)
			n++
		}
	}
	return n
}

// rewriteAll writes every active local record again: after a gap in
// this replica's heartbeats the others may have dropped its nodes, and
// not every record is sure to be deleted from the bucket for it to be
// written back. mu is held.
func (m *Member) rewriteAll() int {
	n := 0
	for _, l := range m.local {
		if l.state == active && !l.dirty {
			m.markDirty(l)
			n++
		}
	}
	return n
}

// deleteForeign queues deletes of keys this replica did not write (at
// exactly their revision). mu is not held.
func (m *Member) deleteForeign(keys []foreign) {
	if len(keys) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.foreign = append(m.foreign, keys...)
	m.kick()
}

// pendingLocked counts the records with a write or delete to do or in
// flight. mu is held.
func (m *Member) pendingLocked() int {
	n := len(m.foreign)
	for _, l := range m.local {
		if l.dirty || l.inFlight {
			n++
		}
	}
	return n
}

// retryDelay is how long to wait after n failed writes in a row.
func (m *Member) retryDelay(n int) time.Duration {
	d := 100 * time.Millisecond << min(n-1, 5)
	d = min(d, 2*time.Second, m.cfg.TTL/6)
	return d/2 + rand.N(d/2+1)
}

// dispatch hands writes to the writers: fresh changes first, in order,
// then deletes of other replicas' records, then retries as they fall due.
func (m *Member) dispatch() {
	defer m.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		m.mu.Lock()
		o, wait := m.next(time.Now())
		m.mu.Unlock()
		if o != nil {
			select {
			case m.ops <- o:
				continue
			case <-m.ctx.Done():
				return
			}
		}
		timer.Stop()
		var due <-chan time.Time
		if wait > 0 {
			timer.Reset(wait)
			due = timer.C
		}
		select {
		case <-m.wake:
		case <-due:
		case <-m.ctx.Done():
			return
		}
	}
}

// next returns the next write to make, or how long until one falls due (0:
// none). mu is held.
func (m *Member) next(now time.Time) (*op, time.Duration) {
	if m.sess == nil {
		return nil, 0
	}
	for len(m.fresh) > 0 {
		l := m.fresh[0]
		m.fresh[0] = nil
		m.fresh = m.fresh[1:]
		if len(m.fresh) == 0 {
			m.fresh = nil // let the array go after a burst
		}
		l.queued = false
		if m.local[l.id] != l || l.inFlight || !l.dirty {
			continue // forgotten, or done() queues it again when its write ends
		}
		return m.start(l), 0
	}
	if len(m.foreign) > 0 {
		f := m.foreign[0]
		m.foreign = m.foreign[1:]
		if len(m.foreign) == 0 {
			m.foreign = nil
		}
		return &op{key: f.key, rev: f.rev, del: true, sess: m.sess, gone: f.gone}, 0
	}
	for m.retry.Len() > 0 {
		l := m.retry[0]
		if l.due.After(now) {
			return nil, l.due.Sub(now)
		}
		heap.Pop(&m.retry)
		if l.inFlight || l.state == superseded || !l.dirty {
			continue
		}
		return m.start(l), 0
	}
	return nil, 0
}

// start makes the op of l's next write. mu is held.
func (m *Member) start(l *local) *op {
	l.dirty, l.inFlight = false, true
	o := &op{l: l, key: l.key, rev: l.rev, connectedAt: l.connectedAt, sess: m.sess}
	if l.state == withdrawn {
		o.del = true
	} else {
		o.value = l.value
		l.written = true
	}
	return o
}

// writer makes the writes dispatch hands it.
func (m *Member) writer() {
	defer m.wg.Done()
	for {
		select {
		case <-m.ctx.Done():
			return
		case o := <-m.ops:
			if o.l == nil {
				m.foreignDone(o, m.purge(o))
				continue
			}
			m.done(o, m.write(o))
		}
	}
}

// write makes one write and, when the key's revision is not the one we
// wrote last, settles who owns the key: a missing key, our own record
// (its revision was lost) or an older connection are overwritten; a newer
// connection of another replica wins.
func (m *Member) write(o *op) result {
	ctx, cancel := context.WithTimeout(m.ctx, writeTimeout)
	defer cancel()
	kv := o.sess.kv
	h := m.seal.newHash()
	if o.del {
		return m.delete(ctx, kv, h, o)
	}
	// Signed now: a copy of it written back later is refused once signed
	// more than twice the TTL before NATS stores it.
	value := m.seal.seal(h, o.key, o.value, time.Now())
	var rev uint64
	var err error
	if o.rev == 0 {
		rev, err = kv.Put(ctx, o.key, value)
	} else {
		rev, err = kv.Update(ctx, o.key, value, o.rev)
	}
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		var e jetstream.KeyValueEntry
		e, err = kv.Get(ctx, o.key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			rev, err = kv.Put(ctx, o.key, value)
		case err == nil:
			// What the key holds counts only if a replica of this
			// cluster wrote it: anything else is written over.
			cur, derr := m.readRecord(h, o.key, e)
			ours := &Record{Replica: m.cfg.Replica, ConnectedAt: o.connectedAt}
			if derr == nil && !m.own(cur, o.connectedAt) && Newer(&cur.Record, ours) {
				return result{kind: overtaken}
			}
			rev, err = kv.Update(ctx, o.key, value, e.Revision())
		}
	}
	if err != nil {
		return result{kind: failed, err: err}
	}
	return result{kind: written, rev: rev}
}

// delete deletes our record of a withdrawn node, if the key still holds
// it: at the revision we wrote last, else (a revision lost, or another
// write since) after reading the key.
func (m *Member) delete(ctx context.Context, kv jetstream.KeyValue, h hash.Hash, o *op) result {
	if o.rev != 0 {
		err := m.remove(ctx, o.sess, o.key, o.rev)
		if err == nil {
			return result{kind: deleted}
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return result{kind: failed, err: err}
		}
	}
	e, err := kv.Get(ctx, o.key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return result{kind: deleted}
	}
	if err != nil {
		return result{kind: failed, err: err}
	}
	if cur, err := m.readRecord(h, o.key, e); err != nil || !m.own(cur, o.connectedAt) {
		return result{kind: deleted} // not ours (any more)
	}
	err = m.remove(ctx, o.sess, o.key, e.Revision())
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return result{kind: failed, err: err}
	}
	return result{kind: deleted}
}

// remove deletes key if it is still at revision rev: a purge whose marker
// NATS removes after the TTL when the bucket allows per-message TTLs (a
// delete marker otherwise, which stays).
func (m *Member) remove(ctx context.Context, s *session, key string, rev uint64) error {
	if s.markerTTL {
		return s.kv.Purge(ctx, key, jetstream.LastRevision(rev), jetstream.PurgeTTL(m.markerTTL()))
	}
	return s.kv.Delete(ctx, key, jetstream.LastRevision(rev))
}

// markerTTL is how long NATS keeps the marker of a deleted key: the
// watches see the delete at once; a replica reading the bucket later
// does not need it.
func (m *Member) markerTTL() time.Duration { return max(m.cfg.TTL, time.Second) }

// purge deletes another replica's key at exactly the revision seen. For a
// heartbeat with its records (o.gone), the heartbeat is read first: one
// written since the revision seen means its replica lives and this
// replica's watch is behind: nothing is deleted.
func (m *Member) purge(o *op) error {
	ctx, cancel := context.WithTimeout(m.ctx, writeTimeout)
	defer cancel()
	if o.gone != nil || strings.HasPrefix(o.key, HeartbeatPrefix) {
		e, err := o.sess.kv.Get(ctx, o.key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return err
		case e.Revision() != o.rev:
			m.log.Warn("cluster: not deleting the records of a replica whose heartbeat seemed to lapse: it was written since; this replica reads the bucket late",
				"key", clip(o.key), "records", len(o.gone))
			return nil
		}
		m.deleteForeign(o.gone)
		if err != nil {
			return nil // no heartbeat to delete
		}
	}
	err := m.remove(ctx, o.sess, o.key, o.rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return nil // written since: not the record we meant
	}
	return err
}

// foreignDone logs a failed delete of another replica's key. It is not
// retried here: whoever still sees the key left over deletes it at its
// next look.
func (m *Member) foreignDone(o *op, err error) {
	if err == nil || m.ctx.Err() != nil {
		return
	}
	if m.isBucketGone(err) {
		m.reopen.Store(true)
		m.signal()
	}
	if ok, held := m.failures.allow(); ok {
		m.log.Warn("cluster: deleting a record left over failed", "key", clip(o.key), "err", err, "held", held)
	}
}

// own reports whether rec is this replica's (this run's) record of the
// connection of connectedAt.
func (m *Member) own(rec *wireRecord, connectedAt time.Time) bool {
	return m.mine(rec) && rec.ConnectedAt.Equal(connectedAt)
}

// mine reports whether rec was written by this run of this replica.
func (m *Member) mine(rec *wireRecord) bool {
	return rec.Replica == m.cfg.Replica && rec.Incarnation == m.inc
}

// done applies the result of a write to its record.
func (m *Member) done(o *op, res result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := o.l
	l.inFlight = false
	if m.local[l.id] != l {
		return // forgotten meanwhile
	}
	if o.sess != m.sess {
		// The connection changed under the write: write it again on the
		// new bucket (or once there is one).
		if l.state != superseded {
			m.markDirty(l)
		}
		return
	}
	now := time.Now()
	if res.kind == failed {
		if m.failRun == 0 {
			m.failSince = now
		}
		m.failRun++
		m.failErr = clip(res.err.Error())
	} else {
		m.failRun = 0
	}
	switch res.kind {
	case written:
		l.fails = 0
		l.wroteIn = o.sess
		// The watch may have seen a later revision (another replica's
		// older record, which we are to overwrite): keep the later.
		l.rev = max(l.rev, res.rev)
	case deleted:
		l.fails = 0
		if l.state == withdrawn {
			m.forget(l)
			return
		}
		l.rev = 0 // published again meanwhile: the key now holds a delete marker
	case overtaken:
		if l.state == active && l.connectedAt.Equal(o.connectedAt) {
			m.supersede(l)
			return
		}
	case failed:
		l.fails++
		if m.isBucketGone(res.err) {
			m.reopen.Store(true)
			m.signal()
		}
		if m.ctx.Err() != nil {
			return // closing
		}
		if ok, held := m.failures.allow(); ok {
			m.log.Warn("cluster: writing a record failed; retrying", "node", l.id, "key", l.key, "err", res.err, "held", held)
		}
		l.dirty = true
		m.retry.schedule(l, now.Add(m.retryDelay(l.fails)))
		m.kick()
		return
	}
	if l.dirty && !l.queued {
		l.queued = true
		m.fresh = append(m.fresh, l)
	}
	m.kick()
}

// isBucketGone reports whether a write failed because the bucket's stream
// is missing (deleted, or lost by a NATS restart not yet noticed).
func (m *Member) isBucketGone(err error) bool {
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrBucketNotFound)
}

// retryHeap orders local records by when their failed write is retried
// (a min-heap, with each record's index kept in it so it can be moved or
// removed).
type retryHeap []*local

func (h retryHeap) Len() int           { return len(h) }
func (h retryHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h retryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}

func (h *retryHeap) Push(x any) {
	l := x.(*local)
	l.hidx = len(*h)
	*h = append(*h, l)
}

func (h *retryHeap) Pop() any {
	old := *h
	l := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	l.hidx = -1
	return l
}

// schedule sets l's due time, adding it if needed.
func (h *retryHeap) schedule(l *local, due time.Time) {
	l.due = due
	if l.hidx >= 0 {
		heap.Fix(h, l.hidx)
	} else {
		heap.Push(h, l)
	}
}

// remove takes l out, if it is there.
func (h *retryHeap) remove(l *local) {
	if l.hidx >= 0 {
		heap.Remove(h, l.hidx)
	}
}

package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Presence. A replica does not renew its records: it keeps one heartbeat,
// the key replica/<incarnation>, written every TTL/3 (and at once on a new
// session, or when someone deleted it). The others drop every record of
// an incarnation whose heartbeat they have not seen for its TTL
// (watch.go), unless another incarnation of the same replica name lives:
// a replica restarted under its name takes its records back as its nodes
// reconnect, and deletes the ones they did not take back.

// newIncarnation returns a random incarnation: 16 hex digits.
func newIncarnation() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// kickBeat makes the beater write the heartbeat now.
func (m *Member) kickBeat() {
	select {
	case m.beatNow <- struct{}{}:
	default:
	}
}

// beat writes this replica's heartbeat every TTL/3 while a session is
// open, and at once when asked (kickBeat).
func (m *Member) beat() {
	defer m.wg.Done()
	every := m.cfg.TTL / 3
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.beatNow:
		case <-timer.C:
		}
		m.mu.Lock()
		s := m.sess
		m.mu.Unlock()
		next := every
		if s != nil && !m.writeHeartbeat(s) {
			next = min(every, time.Second) // retried sooner: the others drop this replica's nodes after the TTL
		}
		timer.Stop()
		timer.Reset(next)
	}
}

// writeHeartbeat writes the heartbeat on session s. After a gap of more
// than TTL/2 since the last one written (NATS unreachable, writes
// failing), its run begins again (heartbeat.Since) and every local record
// is written again once it is through: the others may have dropped this
// replica's nodes meanwhile.
func (m *Member) writeHeartbeat(s *session) bool {
	now := time.Now()
	m.mu.Lock()
	gap := !m.beatOK.IsZero() && now.Sub(m.beatOK) > m.cfg.TTL/2
	if m.beatSince.IsZero() || gap {
		m.beatSince = now
	}
	hb := heartbeat{Replica: m.cfg.Replica, Incarnation: m.inc, TTLMs: m.cfg.TTL.Milliseconds(), Since: m.beatSince.UnixMilli()}
	m.mu.Unlock()
	body, _ := json.Marshal(&hb)
	ctx, cancel := context.WithTimeout(m.ctx, writeTimeout)
	defer cancel()
	_, err := s.kv.Put(ctx, m.hbKey, m.seal.seal(m.seal.newHash(), m.hbKey, body, now))

	m.mu.Lock()
	defer m.mu.Unlock()
	if s != m.sess {
		return true
	}
	if err != nil {
		if m.ctx.Err() != nil {
			return true
		}
		if m.failRun == 0 {
			m.failSince = now
		}
		m.failRun++
		m.failErr = clip(err.Error())
		if m.isBucketGone(err) {
			m.reopen.Store(true)
			m.signal()
		}
		if ok, held := m.failures.allow(); ok {
			m.log.Warn("cluster: writing the heartbeat failed; retrying", "key", m.hbKey, "err", err, "held", held)
		}
		return false
	}
	m.failRun = 0
	m.beatOK = now
	if gap {
		n := m.rewriteAll()
		m.log.Info("cluster: the heartbeat was not written for a while; writing every record again", "since", m.beatSince.Format(time.RFC3339), "records", n)
	}
	return true
}

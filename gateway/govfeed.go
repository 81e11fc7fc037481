package gateway

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The governance feed: every change of a skill's effective governance
// mode (new content, a rescan, an approval, a suppression or its expiry,
// a hold), kept in a bounded ring for GET /v1/governance/events, which
// long-polls like /prompt. It lives in memory: a restart begins a new
// feed (seq from 1), and a restart is not a change (skills loaded at
// start make no event).

// MaxGovernanceEvents bounds the feed: the oldest events go first.
const MaxGovernanceEvents = 1024

// GovernanceEvent is one change of a skill's effective governance mode.
type GovernanceEvent struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Skill    string    `json:"skill"`    // the skills.entries key: the skill's directory
	Location string    `json:"location"` // the skill's key in the store
	Digest   string    `json:"digest"`
	Mode     string    `json:"mode"`
	Was      string    `json:"was"` // "none" for content first seen
	Why      string    `json:"why"`
}

// GovernanceEvents is the answer of GET /v1/governance/events.
type GovernanceEvents struct {
	Events []GovernanceEvent `json:"events"`
	// Next is the since of the next request: the last event's seq, or
	// the since asked when there is none.
	Next uint64 `json:"next"`
}

// govFeed is the ring of events. Appends come from rebuilds (under s.mu);
// readers take only the feed's own lock.
type govFeed struct {
	mu      sync.Mutex
	events  []GovernanceEvent // oldest first, at most MaxGovernanceEvents
	seq     uint64            // the last event's
	changed chan struct{}     // closed at the next append
	done    chan struct{}     // closed when the gateway closes: waits end
	once    sync.Once
}

func newGovFeed() *govFeed { return &govFeed{changed: make(chan struct{}), done: make(chan struct{})} }

// close ends every wait (the gateway is closing).
func (f *govFeed) close() { f.once.Do(func() { close(f.done) }) }

// add appends an event, numbering it, and wakes the waiters.
func (f *govFeed) add(e GovernanceEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	e.Seq = f.seq
	if len(f.events) == MaxGovernanceEvents {
		f.events = append(f.events[:0], f.events[1:]...)
	}
	f.events = append(f.events, e)
	close(f.changed)
	f.changed = make(chan struct{})
}

// since returns the events after seq (all of them when seq is past the
// last one: the feed began again with a restart), and the channel closed
// at the next append.
func (f *govFeed) since(seq uint64) ([]GovernanceEvent, uint64, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq > f.seq {
		seq = 0
	}
	out := []GovernanceEvent{}
	for _, e := range f.events {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	next := seq
	if len(out) > 0 {
		next = out[len(out)-1].Seq
	}
	return out, next, f.changed
}

// wait returns the events after seq, waiting up to wait for one.
func (f *govFeed) wait(ctx context.Context, seq uint64, wait time.Duration) GovernanceEvents {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		evs, next, changed := f.since(seq)
		if len(evs) > 0 || wait <= 0 {
			return GovernanceEvents{Events: evs, Next: next}
		}
		select {
		case <-changed:
		case <-t.C:
			return GovernanceEvents{Events: evs, Next: next}
		case <-ctx.Done():
			return GovernanceEvents{Events: evs, Next: next}
		case <-f.done:
			return GovernanceEvents{Events: evs, Next: next}
		}
	}
}

func (s *Server) handleGovernanceEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since uint64
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "since: "+strconv.Quote(v)+" is not a whole number ≥ 0 (pass back the answer's next)")
			return
		}
		since = n
	}
	wait, ok := parseWait(q.Get("wait"))
	if !ok {
		writeError(w, http.StatusBadRequest, "wait: "+strconv.Quote(q.Get("wait"))+" is not a duration such as 30s (at most "+MaxWait.String()+")")
		return
	}
	if wait > 0 {
		release, ok := s.acquireLongPoll(w, r)
		if !ok {
			return
		}
		defer release()
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + s.cfg.WriteTimeout))
	}
	out := s.govFeed.wait(r.Context(), since, wait)
	if r.Context().Err() != nil {
		return // the client left
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// parseWait reads a long poll's wait parameter ("" is 0), clamped to
// MaxWait; false when it is not a duration ≥ 0.
func parseWait(ws string) (time.Duration, bool) {
	if ws == "" {
		return 0, true
	}
	d, err := time.ParseDuration(ws)
	if err != nil || d < 0 {
		return 0, false
	}
	return min(d, MaxWait), true
}

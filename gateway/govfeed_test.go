package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestGovFeed(t *testing.T) {
	f := newGovFeed()
	for i := range MaxGovernanceEvents + 5 {
		f.add(GovernanceEvent{Skill: "s", Mode: []string{"allow", "quarantine"}[i%2]})
	}
	evs, next, _ := f.since(0)
	if len(evs) != MaxGovernanceEvents || evs[0].Seq != 6 || next != MaxGovernanceEvents+5 {
		t.Errorf("since 0: %d events from %d, next %d", len(evs), evs[0].Seq, next)
	}
	evs, next, _ = f.since(MaxGovernanceEvents + 3)
	if len(evs) != 2 || evs[0].Seq != MaxGovernanceEvents+4 || next != MaxGovernanceEvents+5 {
		t.Errorf("since the third last: %+v, next %d", evs, next)
	}
	if evs, next, _ = f.since(MaxGovernanceEvents + 5); len(evs) != 0 || next != MaxGovernanceEvents+5 {
		t.Errorf("since the last: %+v, next %d", evs, next)
	}
	// A since past the last event is from before a restart: all of them.
	if evs, next, _ = f.since(1 << 40); len(evs) != MaxGovernanceEvents || next != MaxGovernanceEvents+5 {
		t.Errorf("since a seq of another run: %d events, next %d", len(evs), next)
	}

	// A wait ends at the next event, at its end, or when the feed closes.
	done := make(chan GovernanceEvents)
	go func() { done <- f.wait(context.Background(), MaxGovernanceEvents+5, time.Minute) }()
	time.Sleep(10 * time.Millisecond)
	f.add(GovernanceEvent{Skill: "t"})
	if got := <-done; len(got.Events) != 1 || got.Events[0].Skill != "t" || got.Next != MaxGovernanceEvents+6 {
		t.Errorf("wait: %+v", got)
	}
	if got := f.wait(context.Background(), MaxGovernanceEvents+6, 10*time.Millisecond); len(got.Events) != 0 || got.Next != MaxGovernanceEvents+6 {
		t.Errorf("a wait with nothing new: %+v", got)
	}
	go func() { done <- f.wait(context.Background(), MaxGovernanceEvents+6, time.Minute) }()
	f.close()
	if got := <-done; len(got.Events) != 0 {
		t.Errorf("closed: %+v", got)
	}
}

func TestGovernanceEventsBadInput(t *testing.T) {
	s := quietServer(t)
	for _, tc := range []struct{ query, want string }{
		{"since=-1", `{"error":"since: \"-1\" is not a whole number ≥ 0 (pass back the answer's next)"}` + "\n"},
		{"wait=soon", `{"error":"wait: \"soon\" is not a duration such as 30s (at most 5m0s)"}` + "\n"},
	} {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/v1/governance/events?"+tc.query, nil))
		if rec.Code != http.StatusBadRequest || rec.Body.String() != tc.want {
			t.Errorf("%s: %d %q, want 400 %q", tc.query, rec.Code, rec.Body.String(), tc.want)
		}
	}
}

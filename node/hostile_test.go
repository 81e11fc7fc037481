package node

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/protocol"
)

// These tests play a hostile (or misconfigured) gateway.

// TestRedirectIsFinal: a gateway URL that answers the upgrade with a
// redirect must not get the node to send its connect frame, token
// included, to the server it points at. The node stops with a final error
// that names the new location.
func TestRedirectIsFinal(t *testing.T) {
	for _, status := range []int{
		http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect,
	} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			b := newFakeGateway(t, 0) // the server the redirect points at
			target := b.srv.URL + ConnectPath
			var aRequests atomic.Int64
			a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				aRequests.Add(1)
				http.Redirect(w, r, target, status)
			}))
			t.Cleanup(a.Close)

			logs, errc, _ := startClient(t, Config{Gateway: a.URL, ID: "n1", Path: []string{t.TempDir()}, Token: "tok-very-secret"})

			var err error
			select {
			case err = <-errc:
			case gc := <-b.conns:
				frame := gc.recv()
				gc.c.CloseNow()
				t.Fatalf("the node followed the %d redirect to %s and sent it: %s", status, target, frame)
			case <-time.After(wait):
				t.Fatalf("Run did not return within %v", wait)
			}
			fe, ok := errors.AsType[*FatalError](err)
			if !ok {
				t.Fatalf("Run returned %v (%T), want *FatalError", err, err)
			}
			if fe.Code != CodeRedirected {
				t.Errorf("code %q, want %q", fe.Code, CodeRedirected)
			}
			msg := fe.Error()
			for _, want := range []string{target, "--gateway " + b.srv.URL, strconv.Itoa(status)} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not name %q", msg, want)
				}
			}
			if n := b.requests.Load(); n != 0 {
				t.Errorf("the redirect target got %d requests, want none", n)
			}
			if n := aRequests.Load(); n != 1 {
				t.Errorf("the gateway URL got %d requests, want 1 (no retry)", n)
			}
			if l := logs.String(); !strings.Contains(l, target) || strings.Contains(l, "tok-very-secret") {
				t.Errorf("logs should name the location and never the token:\n%s", l)
			}
		})
	}
}

// TestInterestFlood: a gateway that sends interest events as fast as it
// can gets far fewer facts.update frames than events (each one is a full
// probe), and the last one answers the last interest.
func TestInterestFlood(t *testing.T) {
	const events = 5000
	g := newFakeGateway(t, 0)
	_, errc, cancel := startClient(t, Config{Gateway: g.srv.URL, ID: "n1", Path: []string{t.TempDir()}})

	gc := g.accept()
	gc.recv()
	gc.sendRes("1", protocol.ConnectResult{Protocol: 1, Interest: protocol.Interest{Bins: []string{"first"}}})
	gc.expect(`{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{"first":false}}}`)

	// Drain the node's frames while flooding, so that neither side blocks
	// on a full socket. Room for one answer per event: a node that answers
	// each one must fail the count below, not hang.
	reports := make(chan protocol.FactsUpdate, 2*events)
	go func() {
		for b := range gc.in {
			f, err := protocol.DecodeFrame(b)
			if err != nil || f.Type != protocol.TypeReq || f.Method != protocol.MethodFactsUpdate {
				continue
			}
			if u, err := protocol.ParseFactsUpdate(f.Params); err == nil {
				reports <- u
			}
		}
	}()

	names := func(i int) []string { return []string{fmt.Sprintf("flood-%d", i), fmt.Sprintf("also-%d", i)} }
	for i := range events {
		gc.sendEvt(protocol.Interest{Bins: names(i)})
	}
	lastNames := names(events - 1)
	slices.Sort(lastNames)
	answers := func(u protocol.FactsUpdate) bool {
		return slices.Equal(slices.Sorted(maps.Keys(u.HostBinStatus)), lastNames)
	}

	// Wait for the answer to the last interest, then make sure nothing
	// else follows it.
	n := 0
	for done := false; !done; {
		select {
		case u := <-reports:
			n++
			done = answers(u)
		case <-time.After(wait):
			t.Fatalf("after %d facts.update, none answers the last interest %v", n, lastNames)
		}
	}
	for quiet := false; !quiet; {
		select {
		case u := <-reports:
			n++
			if !answers(u) {
				t.Fatalf("facts.update %v came after the answer to the last interest %v", slices.Sorted(maps.Keys(u.HostBinStatus)), lastNames)
			}
		case <-time.After(3 * interestPace):
			quiet = true
		}
	}
	if n*20 >= events {
		t.Errorf("%d facts.update for %d interest events, want fewer than 5%%", n, events)
	}
	t.Logf("%d facts.update for %d interest events", n, events)

	cancel()
	if err := waitRun(t, errc, 3*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

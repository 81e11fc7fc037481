package testkit

import (
	"testing"
	"time"
)

// Eventually calls f every 20 ms until it reports true, and returns its
// value. When timeout passes first, or t's context ends, it fails t with
// the last value f observed: f says what it saw, so that a failure reads
// as what was there rather than "timed out". f may fail t itself (a
// process it watches has died).
func Eventually(t testing.TB, timeout time.Duration, f func() (string, bool)) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v, ok := f()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v; last observed:\n%s", timeout, v)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended while waiting; last observed:\n%s", v)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Until polls cond every 5 ms until it holds, and fails t with what
// (what was awaited) when timeout passes first. It is Eventually for a
// cheap condition in memory, polled more often, as the timing tests of
// cluster measure with it.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Tail returns the last n bytes of s, marked with "…" when cut: a test
// logs the end of a server's output, where the failure is.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

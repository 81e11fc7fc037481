package node

import (
	"testing"
	"time"
)

// TestBackoffExported: the node's schedule through the exported type the
// fleet uses: full jitter under a ceiling that doubles from BackoffMin to
// BackoffMax, and starts again after Reset.
func TestBackoffExported(t *testing.T) {
	b := Backoff{Min: BackoffMin, Max: BackoffMax}
	ceilings := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for round := range 2 {
		for i, ceil := range ceilings {
			if d := b.Next(); d < 0 || d >= ceil {
				t.Errorf("round %d, delay %d: %v, want in [0, %v)", round, i, d, ceil)
			}
			if b.ceiling != ceil {
				t.Errorf("round %d, delay %d: ceiling %v, want %v", round, i, b.ceiling, ceil)
			}
		}
		b.Reset()
		if b.ceiling != 0 {
			t.Fatalf("ceiling %v after Reset, want 0", b.ceiling)
		}
	}
}

package governance

import (
	"testing"
)

func TestFingerprint(t *testing.T) {
	a := Options{AllowedHosts: []string{"a", "b"}}
	b := Options{AllowedHosts: []string{"a", "b"}, Flagged: FlaggedAllow}
	c := Options{AllowedHosts: []string{"ab"}}
	if a.Fingerprint() != b.Fingerprint() || a.Fingerprint() == c.Fingerprint() {
		t.Errorf("fingerprints %q %q %q", a.Fingerprint(), b.Fingerprint(), c.Fingerprint())
	}
}

package governance

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in   string // JSON; "" for nil
		want Policy
		err  string
	}{
		{in: "", want: Policy{Mode: Enforce, Options: Options{Flagged: FlaggedAllow}}},
		{in: `{}`, want: Policy{Mode: Enforce, Options: Options{Flagged: FlaggedAllow}}},
		{in: `{"mode":"observe","flagged":"quarantine","allowedHosts":["API.github.com","*.example.org"]}`,
			want: Policy{Mode: Observe, Options: Options{Flagged: FlaggedQuarantine, AllowedHosts: []string{"api.github.com", "*.example.org"}}}},
		{in: `{"mode":"off"}`, want: Policy{Mode: Off, Options: Options{Flagged: FlaggedAllow}}},
		{in: `{"mode":"enforced"}`, err: `gateway.governance.mode: must be one of ["enforce" "observe" "off"], got enforced`},
		{in: `{"flagged":true}`, err: `gateway.governance.flagged: must be one of ["allow" "quarantine"], got true`},
		{in: `{"allowedHosts":"github.com"}`, err: `gateway.governance.allowedHosts: must be a list of host globs such as "api.github.com" or "*.github.com"`},
		{in: `{"allowedHosts":["https://github.com"]}`, err: `gateway.governance.allowedHosts[0]: must be a host glob such as "*.github.com" (no scheme, port or path), got https://github.com`},
		{in: `{"allowHosts":[]}`, err: `gateway.governance.allowHosts: unknown setting (known: mode, allowedHosts, flagged)`},
		{in: `"enforce"`, err: `gateway.governance: must be an object with mode, allowedHosts and flagged`},
	}
	for _, tc := range tests {
		var v any
		if tc.in != "" {
			if err := json.Unmarshal([]byte(tc.in), &v); err != nil {
				t.Fatal(err)
			}
		}
		got, err := ParsePolicy(v)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParsePolicy(%s) error = %v, want %s", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("ParsePolicy(%s): %v", tc.in, err)
		case !reflect.DeepEqual(got, tc.want):
			t.Errorf("ParsePolicy(%s) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	a := Options{AllowedHosts: []string{"a", "b"}}
	b := Options{AllowedHosts: []string{"a", "b"}, Flagged: FlaggedAllow}
	c := Options{AllowedHosts: []string{"ab"}}
	if a.Fingerprint() != b.Fingerprint() || a.Fingerprint() == c.Fingerprint() {
		t.Errorf("fingerprints %q %q %q", a.Fingerprint(), b.Fingerprint(), c.Fingerprint())
	}
}

package jsonscan

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzSplitObject checks the scanner's split of an object against
// encoding/json's: whenever the scanner takes an input, encoding/json
// takes it too, with the same keys and, for a repeated key, the last value.
// Lists of plain strings are checked the same way.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{
		`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"node":{"id":"a","roles":["execution"]}}}`,
		`{"a":1,"a":2}`, `{"a":[1,{"b":[]}],"c":"\n"}`, `{"a":-0.5e+10,"b":true,"c":null}`, `["a","b"]`, `[]`, `["a",1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if ms, ok := SplitObject(nil, data); ok {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("split %q, which encoding/json refuses: %v", data, err)
			}
			last := map[string]string{}
			for _, mb := range ms {
				last[string(mb.Key)] = string(mb.Raw)
			}
			if len(last) != len(m) {
				t.Fatalf("%q: %d keys, encoding/json %d", data, len(last), len(m))
			}
			for k, v := range m {
				if last[k] != string(v) {
					t.Fatalf("%q: %s = %s, encoding/json %s", data, k, last[k], v)
				}
			}
		}
		if l, ok := PlainStrings(data); ok {
			var want []string
			if err := json.Unmarshal(data, &want); err != nil || !slices.Equal(l, want) {
				t.Fatalf("plainStrings(%q) = %q, encoding/json %q, %v", data, l, want, err)
			}
		}
		if s, ok := PlainString(data); ok {
			var want string
			if err := json.Unmarshal(data, &want); err != nil || s != want {
				t.Fatalf("plainString(%q) = %q, encoding/json %q, %v", data, s, want, err)
			}
		}
	})
}

// TestScanner: what the scanner takes and what it leaves to encoding/json.
func TestScanner(t *testing.T) {
	for _, tt := range []struct {
		in   string
		skip bool // Skip takes it whole
	}{
		{`{"a":[1,-2.5e3,true,null,{"b":"c\n"}]}`, true},
		{`"plain"`, true},
		{`"\u0041"`, false}, // \u escapes are encoding/json's
		{`"é"`, false},
		{`01`, false},
		{`[1,]`, false},
		{`tru`, false},
	} {
		s := New([]byte(tt.in))
		if got := s.Skip() && s.End(); got != tt.skip {
			t.Errorf("Skip(%s) = %v, want %v", tt.in, got, tt.skip)
		}
	}
	s := New([]byte(` null true`))
	if !s.Null() || s.Null() || s.Off() != 5 {
		t.Errorf("Null: off %d", s.Off())
	}
}

package protocol

import (
	"maps"
	"slices"
	"testing"
)

var factsScanSeeds = []string{
	`{"env":["GITHUB_TOKEN"],"hostBinStatus":{"gh":true,"tmux":false}}`,
	`{}`, ` { } `, `{"env":null,"hostBinStatus":null}`, `{"env":[],"hostBinStatus":{}}`,
	`{"env":["A","A","B"],"hostBinStatus":{"gh":true,"gh":false}}`,
	`{"env":["A"],"env":["B"]}`, `{"hostBinStatus":{"a":true},"hostBinStatus":{"b":true}}`,
	`{"extra":{"x":[1,2.5e3,-0.1,"s\"\\n",true,null,{}]},"env":["E"]}`,
	`{"env":["\u0041"]}`, `{"Env":["A"]}`, `{"env":[""]}`, `{"env":[1]}`, `{"env":"A"}`,
	`{"hostBinStatus":{"":true}}`, `{"hostBinStatus":{"a":null}}`, `{"hostBinStatus":{"a":1}}`,
	`{"hostBinStatus":[]}`, `{"env":["é"]}`, `{"env":["A"]} x`, `{"env":["A"],}`, `[]`, `null`, ``,
	`{"env":["A"]`, `{"x":01}`, `{"x":-}`, `{"x":1.}`, `{"x":1e}`, `{"x":tru}`, "\xff",
}

// FuzzFactsScan checks that the scanner takes and refuses exactly what
// ParseFactsUpdate does, with the same errors and the same facts.
func FuzzFactsScan(f *testing.F) {
	for _, s := range factsScanSeeds {
		f.Add([]byte(s))
	}
	var fs FactsScan
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := ParseFactsUpdate(data)
		err := fs.Scan(data)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("Scan(%q) = %v, ParseFactsUpdate: %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		got := fs.facts()
		if !slices.Equal(got.Env, want.Env) || !maps.Equal(got.HostBinStatus, want.HostBinStatus) {
			t.Fatalf("Scan(%q) = %+v, ParseFactsUpdate: %+v", data, got, want)
		}
	})
}

func TestFactsScanFastPath(t *testing.T) {
	var fs FactsScan
	in := []byte(`{"env":["A","B"],"hostBinStatus":{"gh":true,"tmux":false,"gh":false},"x":[{"y":null}]}`)
	if !fs.scan(in) {
		t.Fatal("the common shape must not need encoding/json")
	}
	if got := fs.facts(); !slices.Equal(got.Env, []string{"A", "B"}) || !maps.Equal(got.HostBinStatus, map[string]bool{"gh": false, "tmux": false}) {
		t.Fatalf("got %+v", got)
	}
	for _, s := range []string{`{"env":["\u0041"]}`, `{"env":["A"],"env":[]}`, `{"hostBinStatus":{"a":null}}`} {
		if fs.scan([]byte(s)) {
			t.Errorf("%s: the scanner must leave this to encoding/json", s)
		}
	}
}

func BenchmarkFactsDecode(b *testing.B) {
	in := []byte(`{"env":["GITHUB_TOKEN","OPENAI_API_KEY","AWS_PROFILE"],"hostBinStatus":{`)
	for i := range 300 {
		if i > 0 {
			in = append(in, ',')
		}
		in = append(in, `"bin-`...)
		in = append(in, byte('a'+i%26), byte('a'+i/26%26), byte('a'+i/676))
		in = append(in, `":true`...)
	}
	in = append(in, "}}"...)
	b.Run("ParseFactsUpdate", func(b *testing.B) {
		for b.Loop() {
			if _, err := ParseFactsUpdate(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("FactsScan", func(b *testing.B) {
		var fs FactsScan
		for b.Loop() {
			if err := fs.Scan(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

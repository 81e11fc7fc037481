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

func BenchmarkDecodeConnect(b *testing.B) {
	in := []byte(`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"token":"secret","client":"skillgate-node/0.1.0-dev","node":{"id":"host-0001","os":"linux","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}}`)
	for b.Loop() {
		f, err := DecodeFrame(in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ParseConnectParams(f.Params); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFrameWhitespace: only JSON's whitespace may surround a frame, as
// encoding/json allows; Unicode spaces are refused.
func TestFrameWhitespace(t *testing.T) {
	const fr = `{"type":"evt","event":"x"}`
	if _, err := DecodeFrame([]byte(" \t\r\n" + fr + "\n")); err != nil {
		t.Errorf("JSON whitespace: %v", err)
	}
	for _, pre := range []string{"\v", "\f", "\u00a0", "\u0085"} {
		if _, err := DecodeFrame([]byte(pre + fr)); err == nil || err.Error() != "frame: must be a JSON object" {
			t.Errorf("%q before a frame: %v, want frame: must be a JSON object", pre, err)
		}
	}
}

// facts returns the update as a FactsUpdate, for tests comparing the two
// paths.
func (f *FactsScan) facts() FactsUpdate {
	u := FactsUpdate{Env: []string{}, HostBinStatus: map[string]bool{}}
	for _, e := range f.Env {
		u.Env = append(u.Env, string(e))
	}
	for i, b := range f.Bins {
		u.HostBinStatus[string(b)] = f.Present[i]
	}
	return u
}

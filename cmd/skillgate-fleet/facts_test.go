package main

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/protocol"
)

// TestAppendFactsReq checks the directly encoded facts.update frame
// against answer, through the gateway's own decoders.
func TestAppendFactsReq(t *testing.T) {
	m, err := loadMix("", 1)
	if err != nil {
		t.Fatal(err)
	}
	in := protocol.Interest{
		Bins: []string{"bin-0", "bin-1", "bin-7", "gh", "jq", "odd\"name", "tmux", "é"},
		Env:  []string{"ENV_0", "ENV_3", "GITHUB_TOKEN", "OPENAI_API_KEY"},
	}
	for idx := range 200 {
		facts := m.node(idx)
		b := facts.appendFactsReq(nil, "42", in)
		fr, err := protocol.DecodeFrame(b)
		if err != nil {
			t.Fatalf("node %d: %v\n%s", idx, err, b)
		}
		if fr.ID != "42" || fr.Method != protocol.MethodFactsUpdate {
			t.Fatalf("node %d: frame %+v", idx, fr)
		}
		got, err := protocol.ParseFactsUpdate(fr.Params)
		if err != nil {
			t.Fatalf("node %d: %v", idx, err)
		}
		want := facts.answer(in)
		if !slices.Equal(got.Env, want.Env) || !maps.Equal(got.HostBinStatus, want.HostBinStatus) {
			t.Fatalf("node %d: %+v, want %+v", idx, got, want)
		}
	}
	if q := appendJSONString(nil, "a\"\\\n"); !json.Valid(q) {
		t.Errorf("not JSON: %s", q)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/api"
)

// TestHostFieldsAreAPINode: the names eval's fast reader of GET /v1/nodes
// takes (hostFieldNames, nodeFacts) are api.Node's, in its order: the node
// shape is declared once, in api, and the reader takes a part of it.
func TestHostFieldsAreAPINode(t *testing.T) {
	b, err := json.Marshal(api.Node{})
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.Token() // {
	for dec.More() {
		k, _ := dec.Token()
		members = append(members, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	var reader []string
	for _, n := range hostFieldNames {
		reader = append(reader, string(n))
	}
	var want []string
	for _, m := range members {
		if slices.Contains(reader, m) {
			want = append(want, m)
		}
	}
	if !slices.Equal(reader, want) {
		t.Errorf("hostFieldNames = %q: not api.Node's fields (%q) in their order", reader, members)
	}
	var nf []string
	b, _ = json.Marshal(nodeFacts{FactsAt: json.RawMessage("null")})
	var m map[string]json.RawMessage
	json.Unmarshal(b, &m)
	for k := range m {
		nf = append(nf, k)
	}
	slices.Sort(nf)
	sorted := slices.Sorted(slices.Values(reader))
	if !slices.Equal(nf, sorted) {
		t.Errorf("nodeFacts' JSON fields = %q, the reader's %q", nf, sorted)
	}
}

package skill

import (
	"reflect"
	"testing"
)

// TestParseVersion: the version is the top-level key's, else the metadata
// namespace's in use, as the scalar's text was written, whatever path read
// the frontmatter (YAML, JSON metadata, the line reader).
func TestParseVersion(t *testing.T) {
	tests := []struct {
		name  string
		fm    []string // frontmatter lines
		want  string
		diags []Diagnostic
	}{
		{name: "none", fm: []string{"name: x"}, want: ""},
		{name: "top-level string", fm: []string{"version: 1.2.0"}, want: "1.2.0"},
		{name: "YAML number keeps its text", fm: []string{"version: 1.10"}, want: "1.10"},
		{name: "YAML integer", fm: []string{"version: 2"}, want: "2"},
		{name: "1.0 stays 1.0", fm: []string{"version: 1.0"}, want: "1.0"},
		{name: "v prefix kept", fm: []string{"version: v2.1"}, want: "v2.1"},
		{name: "quoted", fm: []string{`version: "1.10"`}, want: "1.10"},
		{name: "trimmed", fm: []string{`version: "  3.0.0 "`}, want: "3.0.0"},
		{name: "null is none", fm: []string{"version: ~"}, want: ""},
		{name: "empty is none", fm: []string{`version: ""`}, want: ""},
		{name: "a list is ignored", fm: []string{"version: [1, 2]"}, want: "",
			diags: []Diagnostic{warnD("version is a list, not a version like 1.2.0; it is ignored — write the version as text")}},
		{name: "namespace version (YAML mapping)", fm: []string{"metadata:", "  openclaw:", "    version: 1.10"}, want: "1.10"},
		{name: "namespace version (JSON string)", fm: []string{`metadata: '{"gsv": {"version": 1.10, "requires": {}}}'`}, want: "1.10"},
		{name: "namespace version (JSON flow mapping with a comment)", fm: []string{`metadata: { /* c */ "clawdbot": {"version": 0.50} }`}, want: "0.50"},
		{name: "namespace version as a string", fm: []string{`metadata: {"gsv": {"version": "v1.2.3"}}`}, want: "v1.2.3"},
		{name: "the namespace in use, not another", fm: []string{`metadata: {"gsv": {"emoji": "x"}, "openclaw": {"version": "9"}}`}, want: ""},
		{name: "top-level wins", fm: []string{"version: 2.0.0", `metadata: {"gsv": {"version": "1.0.0"}}`}, want: "2.0.0"},
		{name: "alias", fm: []string{"metadata:", "  gsv:", "    version: &v 1.20", "    x: *v"}, want: "1.20"},
		{name: "namespace version a mapping is ignored", fm: []string{`metadata: {"gsv": {"version": {"major": 1}}}`}, want: "",
			diags: []Diagnostic{warnD("metadata.gsv.version is a mapping, not a version like 1.2.0; it is ignored — write the version as text")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Parse(testRef, []byte(file(append(append([]string{"---", "description: d"}, tt.fm...), "---", "body")...)))
			if s.Version != tt.want {
				t.Errorf("Version = %q, want %q", s.Version, tt.want)
			}
			if !reflect.DeepEqual(s.Diagnostics, tt.diags) {
				t.Errorf("diagnostics %v, want %v", s.Diagnostics, tt.diags)
			}
		})
	}

	// Frontmatter that is not YAML: the line reader keeps the text too.
	s := Parse(testRef, []byte(file("---", "name: x: y", "version: 1.10", "metadata:", "  gsv:", "    version: 0.9", "---", "body")))
	if s.Version != "1.10" {
		t.Errorf("line reader: Version = %q, want 1.10", s.Version)
	}
	s = Parse(testRef, []byte(file("---", "name: x: y", "metadata:", "  gsv:", "    version: 0.90", "---", "body")))
	if s.Version != "0.90" {
		t.Errorf("line reader, metadata block: Version = %q, want 0.90", s.Version)
	}
	s = Parse(testRef, []byte(file("---", "name: x: y", `metadata: {"gsv": {"version": 0.90}}`, "---", "body")))
	if s.Version != "0.90" {
		t.Errorf("line reader, JSON metadata: Version = %q, want 0.90", s.Version)
	}
}

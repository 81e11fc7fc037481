package skill

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// addSeedFiles adds the testdata SKILL.md files to a fuzz corpus.
func addSeedFiles(f *testing.F) {
	f.Helper()
	parse, _ := filepath.Glob(filepath.Join("testdata", "parse", "*.md"))
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*", FileName))
	files := append(parse, corpus...)
	if len(files) == 0 {
		f.Fatal("no seed files")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzParse(f *testing.F) {
	addSeedFiles(f)
	for _, s := range []string{
		"", "---", "---\n", "---\n---", "\uFEFF---\r\n---\r\n", "---\r---\r",
		"---\na: &a [*a]\n---\n", "---\n<<: {name: x}\n---\n", "---\nmetadata: '{\"gsv\":{\"os\":[1]}}'\n---\n",
		"---\nname: a: b\nmetadata:\n  {\"openclaw\": {\"os\": [\"linux\"]}}\n---\n",
	} {
		f.Add([]byte(s))
	}
	ref := Ref{Key: "agents/a/skills/fuzz/SKILL.md", Dir: "fuzz", Scope: ScopeAgent, Agent: "a"}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, fromBody := parse(ref, data)
		checkInvariants(t, "fuzz input", ref, s, fromBody)
		if fromBody && utf8.RuneCountInString(s.Description) > maxBodyDescription {
			t.Fatalf("description from the body has %d code points", utf8.RuneCountInString(s.Description))
		}
		// Without an opening line there is no frontmatter to take it from.
		if !strings.HasPrefix(strings.TrimPrefix(string(data), "\uFEFF"), "---") && s.Description != "" && !fromBody {
			t.Fatalf("description %q without frontmatter did not come from the body", s.Description)
		}
		if _, err := json.Marshal(s.Metadata); err != nil {
			t.Fatalf("metadata is not JSON-compatible: %v", err)
		}
		if _, err := json.Marshal(s.Requires); err != nil {
			t.Fatalf("requires is not JSON-compatible: %v", err)
		}
		// The scanner's split is the parser's.
		fm, body, bodyLine, ok := SplitFrontmatter(data)
		if body != s.Body || !ok && (fm != "" || bodyLine != 1) {
			t.Fatalf("SplitFrontmatter = %q, %q, %d, %v; Parse's body %q", fm, body, bodyLine, ok, s.Body)
		}
		if text, _ := normalizeText(data); ok && strings.Count(text, "\n")+2 < bodyLine {
			t.Fatalf("body line %d past the end of a %d-line file", bodyLine, strings.Count(text, "\n")+1)
		}
		// Where the prompt text was read: a line of the file, none for
		// none.
		again, at := ParseLines(ref, data)
		if text, _ := normalizeText(data); at.Name < 0 || at.Name > strings.Count(text, "\n")+1 ||
			at.Description < 0 || at.Description > strings.Count(text, "\n")+1 ||
			(at.Description == 0) != (s.Description == "") || at.DescriptionFromBody != fromBody ||
			at.Name == 0 && s.Name != ref.Dir || at.Body != bodyLine || !reflect.DeepEqual(s, again) {
			t.Fatalf("ParseLines = %+v for name %q, description %q (from the body: %v)", at, s.Name, s.Description, fromBody)
		}
		if again := Parse(ref, data); !reflect.DeepEqual(s, again) {
			t.Fatalf("Parse is not deterministic:%s", diffSkill(again, s))
		}
		checkParseChecked(t, ref, data, s)
	})
}

func FuzzMetadataHuJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `"x"`, `1`, ``, `{"a":}`, `{"a": 1,}`,
		`{"openclaw": {"emoji": "🐙", "requires": {"bins": ["gh",],},},}`,
		"{\n  // comment\n  \"gsv\": {/* c */ \"os\": [\"darwin\"]},\n}",
		`{"a": 1e999}`, `{"a": "\ud800"}`, `{"a": 1, "a": 2}`, `{"a": [[[[[[[[[[]]]]]]]]]]}`,
		`{"a": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		md, err := parseMetadataJSON(s)
		if err != nil {
			if md != nil {
				t.Fatalf("metadata %v with error %v", md, err)
			}
			if !strings.HasPrefix(err.Error(), "metadata ") || !utf8.ValidString(err.Error()) {
				t.Fatalf("error %q does not name metadata", err)
			}
			// Standard JSON objects must never be refused.
			var v any
			if json.Unmarshal([]byte(s), &v) == nil {
				if _, isObject := v.(map[string]any); isObject {
					t.Fatalf("valid JSON object refused: %v", err)
				}
			}
			return
		}
		if md == nil {
			t.Fatal("nil metadata without an error")
		}
		checkJSONValue(t, "metadata", md)
		// The result survives a JSON round trip unchanged.
		b, err := json.Marshal(md)
		if err != nil {
			t.Fatalf("metadata is not JSON-compatible: %v", err)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, md) {
			t.Fatalf("round trip changed metadata: %v (err %v)", back, err)
		}

		// The same string as a YAML double-quoted frontmatter value gives the
		// same metadata, whenever YAML accepts the file at all.
		if !utf8.ValidString(s) || bracketDepth(s) > maxNesting {
			return // deep nesting is not parsed in a file, by design
		}
		quoted, _ := json.Marshal(s)
		sk := Parse(testRef, []byte("---\nmetadata: "+string(quoted)+"\n---\n"))
		for _, d := range sk.Diagnostics {
			if strings.HasPrefix(d.Message, "frontmatter is invalid YAML") {
				return
			}
		}
		if !reflect.DeepEqual(sk.Metadata, md) {
			t.Fatalf("Parse metadata %#v, want %#v", sk.Metadata, md)
		}
	})
}

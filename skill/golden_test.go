package skill

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite skill/testdata/parse/*.golden.json from the parser's output")

// golden is the JSON form of a parse result in the golden files.
type golden struct {
	Key         string         `json:"key"`
	Dir         string         `json:"dir"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Homepage    string         `json:"homepage"`
	Always      bool           `json:"always"`
	Emoji       string         `json:"emoji"`
	Namespace   string         `json:"namespace"`
	Requires    any            `json:"requires"`
	Metadata    map[string]any `json:"metadata"`
	Body        string         `json:"body"`
	Diagnostics []Diagnostic   `json:"diagnostics"`
}

func goldenJSON(t *testing.T, s *Skill) []byte {
	t.Helper()
	g := golden{
		Key: s.Key, Dir: s.Dir, Name: s.Name, Description: s.Description, Homepage: s.Homepage,
		Always: s.Always, Emoji: s.Emoji, Namespace: s.Namespace, Requires: s.Requires,
		Metadata: s.Metadata, Body: s.Body, Diagnostics: s.Diagnostics,
	}
	if g.Diagnostics == nil {
		g.Diagnostics = []Diagnostic{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatalf("encoding the parse result: %v", err)
	}
	return buf.Bytes()
}

// TestParseGolden parses each testdata/parse/NAME.md as skills/NAME/SKILL.md
// and compares the result with NAME.golden.json. Run with -update to
// rewrite the golden files, then review the diff by hand.
func TestParseGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "parse", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/parse (err %v)", err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".md")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenJSON(t, Parse(Ref{Key: GlobalKey(name), Dir: name, Scope: ScopeGlobal}, data))
			goldenPath := strings.TrimSuffix(path, ".md") + ".golden.json"
			if *update {
				if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(goldenPath)
			if err != nil {
				t.Fatalf("%v (run go test ./skill -run TestParseGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("parse result differs from %s:\n got: %s\nwant: %s", goldenPath, got, want)
			}
		})
	}
}

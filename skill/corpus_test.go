package skill

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// corpusDir holds real SKILL.md files from the OpenClaw project.
const corpusDir = "../testdata/openclaw-skills"

// corpusWithoutMetadata are the corpus skills whose frontmatter has no
// metadata (canvas has no frontmatter at all).
var corpusWithoutMetadata = map[string]bool{"canvas": true, "healthcheck": true, "node-connect": true, "skill-creator": true}

func parseCorpus(t *testing.T) map[string]*Skill {
	t.Helper()
	dirs, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*Skill)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(corpusDir, d.Name(), FileName))
		if err != nil {
			t.Fatal(err)
		}
		out[d.Name()] = Parse(Ref{Key: GlobalKey(d.Name()), Dir: d.Name(), Scope: ScopeGlobal}, data)
	}
	return out
}

func TestParseOpenClawCorpus(t *testing.T) {
	skills := parseCorpus(t)
	if len(skills) != 53 {
		t.Fatalf("corpus has %d skills, want 53", len(skills))
	}
	for dir, s := range skills {
		for _, d := range s.Diagnostics {
			if d.Level == LevelError {
				t.Errorf("%s: error diagnostic: %s", dir, d.Message)
			} else {
				// Nothing in these files is wrong in a way a person would
				// agree with, so no finding at all is expected.
				t.Errorf("%s: unexpected %s diagnostic: %s", dir, d.Level, d.Message)
			}
		}
		if s.Name != dir {
			t.Errorf("%s: name %q, want the directory name", dir, s.Name)
		}
		if strings.TrimSpace(s.Description) == "" {
			t.Errorf("%s: empty description", dir)
		}
		if corpusWithoutMetadata[dir] {
			if s.Metadata != nil || s.Namespace != "" || s.Requires != nil {
				t.Errorf("%s: metadata %v, namespace %q, requires %v; want none", dir, s.Metadata, s.Namespace, s.Requires)
			}
		} else if s.Metadata == nil || s.Namespace != NamespaceOpenClaw {
			t.Errorf("%s: namespace %q (metadata %v), want openclaw", dir, s.Namespace, s.Metadata)
		}
	}

	spot := []struct {
		dir      string
		emoji    string
		homepage string
		requires any
	}{
		{"github", "🐙", "", map[string]any{"bins": []any{"gh"}}},
		{"coding-agent", "🧩", "", map[string]any{"anyBins": []any{"claude", "codex", "opencode", "pi"}}},
		{"tmux", "🧵", "", map[string]any{"bins": []any{"tmux"}, "os": []any{"darwin", "linux"}}},
		{"1password", "🔐", "https://developer.1password.com/docs/cli/get-started/", map[string]any{"bins": []any{"op"}}},
		{"sherpa-onnx-tts", "🔉", "", map[string]any{
			"env": []any{"SHERPA_ONNX_RUNTIME_DIR", "SHERPA_ONNX_MODEL_DIR"},
			"os":  []any{"darwin", "linux", "win32"},
		}},
		{"goplaces", "📍", "https://github.com/steipete/goplaces", map[string]any{"bins": []any{"goplaces"}, "env": []any{"GOOGLE_PLACES_API_KEY"}}},
		{"voice-call", "📞", "", map[string]any{"config": []any{"plugins.entries.voice-call.enabled"}}},
		{"taskflow", "🪝", "", nil},
		{"gh-issues", "", "", map[string]any{"bins": []any{"curl", "git", "gh"}}},
	}
	for _, sp := range spot {
		s := skills[sp.dir]
		if s == nil {
			t.Errorf("%s: missing from the corpus", sp.dir)
			continue
		}
		if !reflect.DeepEqual(s.Requires, sp.requires) {
			t.Errorf("%s: requires %#v, want %#v", sp.dir, s.Requires, sp.requires)
		}
		if s.Emoji != sp.emoji || s.Homepage != sp.homepage {
			t.Errorf("%s: emoji %q homepage %q, want %q %q", sp.dir, s.Emoji, s.Homepage, sp.emoji, sp.homepage)
		}
	}

	// tmux's os is folded into Requires, not into Metadata.
	oc := skills["tmux"].Metadata["openclaw"].(map[string]any)
	if _, has := oc["requires"].(map[string]any)["os"]; has {
		t.Errorf("tmux: Metadata requires gained os: %#v", oc["requires"])
	}
	if got := skills["canvas"].Description; got != "Display HTML content on connected OpenClaw nodes (Mac app, iOS, Android)." {
		t.Errorf("canvas: description %q", got)
	}
}

// TestParseAllTestdata parses every Markdown file under the repository's
// testdata directories (other packages' fixtures too) and checks that none
// makes the parser panic or break its basic promises.
func TestParseAllTestdata(t *testing.T) {
	n := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") || !strings.Contains(filepath.ToSlash(path), "/testdata/") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		ref := Ref{Key: "skills/x/SKILL.md", Dir: "x", Scope: ScopeGlobal}
		s := Parse(ref, data)
		checkInvariants(t, path, ref, s, false)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 53 {
		t.Errorf("parsed only %d files", n)
	}
}

// checkInvariants checks what Parse promises for any input.
func checkInvariants(t testing.TB, what string, ref Ref, s *Skill, descFromBody bool) {
	t.Helper()
	if s == nil {
		t.Fatalf("%s: Parse returned nil", what)
	}
	if s.Ref != ref {
		t.Errorf("%s: Ref %+v, want %+v", what, s.Ref, ref)
	}
	if s.Name == "" || s.Name != strings.TrimSpace(s.Name) {
		t.Errorf("%s: name %q is empty or not trimmed", what, s.Name)
	}
	if s.Description != strings.TrimSpace(s.Description) {
		t.Errorf("%s: description %q is not trimmed", what, s.Description)
	}
	if descFromBody && utf8.RuneCountInString(s.Description) > maxBodyDescription {
		t.Errorf("%s: description from the body has %d code points", what, utf8.RuneCountInString(s.Description))
	}
	for field, v := range map[string]string{"name": s.Name, "description": s.Description, "homepage": s.Homepage, "emoji": s.Emoji, "body": s.Body} {
		if !utf8.ValidString(v) {
			t.Errorf("%s: %s %q is not valid UTF-8", what, field, v)
		}
	}
	switch s.Namespace {
	case "", NamespaceGSV, NamespaceOpenClaw, NamespaceClawdbot:
	default:
		t.Errorf("%s: namespace %q", what, s.Namespace)
	}
	if s.Namespace == "" && (s.Requires != nil || s.Emoji != "") {
		t.Errorf("%s: requires %v / emoji %q without a namespace", what, s.Requires, s.Emoji)
	}
	if s.Metadata != nil {
		checkJSONValue(t, what, s.Metadata)
	}
	checkJSONValue(t, what, s.Requires)
	for _, d := range s.Diagnostics {
		if d.Location != ref.Key || (d.Level != LevelWarn && d.Level != LevelInfo) || d.Message == "" || !utf8.ValidString(d.Message) {
			t.Errorf("%s: bad diagnostic %+v", what, d)
		}
	}
}

// checkJSONValue checks that v holds only JSON-compatible Go values.
func checkJSONValue(t testing.TB, what string, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil, bool, float64:
	case string:
		if !utf8.ValidString(x) {
			t.Errorf("%s: metadata string %q is not valid UTF-8", what, x)
		}
	case []any:
		for _, e := range x {
			checkJSONValue(t, what, e)
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				t.Errorf("%s: metadata key %q is not valid UTF-8", what, k)
			}
			checkJSONValue(t, what, e)
		}
	default:
		t.Errorf("%s: metadata holds a %T (%v)", what, v, v)
	}
}

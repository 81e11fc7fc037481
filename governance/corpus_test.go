package governance

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// loadDir reads a skill directory as Scan's input.
func loadDir(t testing.TB, dir string) *Input {
	t.Helper()
	in := &Input{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == SkillFile {
			in.SkillMD = data
		} else {
			in.Files = append(in.Files, File{Path: rel, Data: data})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// skillDirs lists the directories under root that hold a SKILL.md.
func skillDirs(t testing.TB, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("corpus %s: %v", root, err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(root, e.Name(), SkillFile)); err == nil {
				dirs = append(dirs, e.Name())
			}
		}
	}
	sort.Strings(dirs)
	return dirs
}

// golden compares got with the file, or rewrites it under -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./governance -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the scan (run with -update after checking the change):\n%s", file, diffLines(string(want), string(got)))
	}
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)) && len(out) < 40; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y))
		}
	}
	return strings.Join(out, "\n")
}

func scanAll(t *testing.T, root string, opts Options) (map[string]Report, []byte) {
	reports := map[string]Report{}
	var buf bytes.Buffer
	for _, d := range skillDirs(t, root) {
		r := Scan(loadDir(t, filepath.Join(root, d)), opts)
		reports[d] = r
		b, err := json.Marshal(struct {
			Skill string `json:"skill"`
			Report
		}{d, r})
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return reports, buf.Bytes()
}

// The 53 OpenClaw skills (../testdata/openclaw-skills, shared with the
// skill package's tests): none blocked, at most 3 quarantined.
func TestOpenClawCorpus(t *testing.T) {
	reports, out := scanAll(t, "../testdata/openclaw-skills", Options{})
	if len(reports) != 53 {
		t.Fatalf("%d skills in the corpus, want 53", len(reports))
	}
	var quarantined []string
	for d, r := range reports {
		switch r.Mode {
		case ModeBlock:
			t.Errorf("%s blocked: %+v", d, r.Findings)
		case ModeQuarantine:
			quarantined = append(quarantined, d)
		}
		for _, f := range r.Findings {
			if f.Severity == SeverityError {
				t.Errorf("%s: error finding %+v", d, f)
			}
		}
	}
	if len(quarantined) > 3 {
		t.Errorf("quarantined %v, at most 3 allowed", quarantined)
	}
	golden(t, "../testdata/governance/openclaw.golden.jsonl", out)
}

// The corpus of our own: malicious/<rule>-*/ each produce an error (or the
// rule's severity) of their rule; benign/*/ produce no error at all.
func TestGovernanceCorpus(t *testing.T) {
	_, outM := scanAll(t, "../testdata/governance/malicious", Options{})
	_, outB := scanAll(t, "../testdata/governance/benign", Options{AllowedHosts: []string{"*.github.com", "github.com"}})
	for _, d := range skillDirs(t, "../testdata/governance/malicious") {
		r := Scan(loadDir(t, filepath.Join("../testdata/governance/malicious", d)), Options{})
		rule := d[:strings.LastIndexByte(d, '-')]
		found := false
		for _, f := range r.Findings {
			found = found || f.Rule == rule
		}
		if !found {
			t.Errorf("malicious/%s: no %s finding: %+v", d, rule, r.Findings)
		}
	}
	for _, d := range skillDirs(t, "../testdata/governance/benign") {
		r := Scan(loadDir(t, filepath.Join("../testdata/governance/benign", d)), Options{AllowedHosts: []string{"*.github.com", "github.com"}})
		if r.Verdict == VerdictBlocked || r.Mode != ModeAllow {
			t.Errorf("benign/%s: %s/%s: %+v", d, r.Verdict, r.Mode, r.Findings)
		}
	}
	golden(t, "../testdata/governance/corpus.golden.jsonl", append(outM, outB...))
}

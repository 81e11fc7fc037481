// Package govbench measures the governance scanner on labelled public skill
// sets (issue 20): each skill directory is read the way the gateway reads
// one (catalog's loader, within governance.Budget), scanned with
// governance.Scan, and counted against the label its set gives it — never
// against the scanner's own output. `make govbench` prints the result and
// writes it to BENCHMARKS.md; its test holds the scanner to floors.
//
// The sets live outside the repository, in ../shared/corpus/external/
// beside the checkout (their licences forbid copying them in), plus the
// OpenClaw skills of testdata/. Reading them is the package's only I/O.
// Of the project it imports governance, catalog, store, skill and internal/corpus
// only; nothing but its command and tests imports it.
package govbench

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/governance"
)

// Labels of a skill.
const (
	Malicious = "malicious"
	Benign    = "benign"
)

// CorpusDir is where the shared sets are, relative to the module root,
// as Spec.Dir names them; corpus.External finds them where they are.
const CorpusDir = "../shared/corpus/external"

// Spec says where one set is, where its labels come from and how large it
// is.
type Spec struct {
	Name string
	// Dir is the set's directory relative to the module root,
	// "/"-separated.
	Dir string
	// Labels, when set, is the set's CSV of labels (columns skill_dir,
	// label) relative to Dir: its rows are the set's skills. When empty,
	// every directory directly under Dir is a benign skill.
	Labels string
	// Category, when set, is a column of Labels that sorts the skills
	// into kinds (an attack type, a benign category): the outcomes are
	// also counted per kind, to show which kinds the scanner misses.
	Category string
	// Index, for a set without Labels, is a CSV (column skill_dir) that
	// must list every directory of the set, so that a stray directory is
	// not measured as benign. Rows without a directory are allowed: the
	// set's PROVENANCE.md names the skills left out.
	Index string
	// Exclude are file names in a skill directory that belong to the
	// set's labels, not to the skill (Cisco's _expected.json describes the
	// attack: scanning it would let the labels vote).
	Exclude []string
	// Want is how many skills of each label the set holds (its
	// PROVENANCE.md): another count is an error, not a smaller sample.
	WantMalicious, WantBenign int
	// Today is issue 20's figure for the set before the work on it.
	Today string
}

// Specs are the measured sets, in the order of issue 20's table.
var Specs = []Spec{
	{Name: "skillfortifybench", Dir: CorpusDir + "/skillfortifybench", Labels: "labels.csv",
		Category: "attack_type_or_benign_category", WantMalicious: 180, WantBenign: 180,
		Today: "33 / 180 malicious held (18 %); 0 benign held, but all 180 benign are flagged"},
	{Name: "cisco-skill-scanner-evals", Dir: CorpusDir + "/cisco-skill-scanner-evals", Labels: "labels.csv",
		Category: "upstream_category_dir", Exclude: []string{"_expected.json"}, WantMalicious: 17, WantBenign: 4,
		Today: "8 / 17 held; 0 / 4"},
	{Name: "benign-anthropics-skills", Dir: CorpusDir + "/benign-anthropics-skills", Index: "index.csv",
		WantBenign: 13,
		Today:      "4 blocked (canvas-design, theme-factory, web-artifacts-builder, claude-api)"},
	{Name: "benign-trailofbits-skills", Dir: CorpusDir + "/benign-trailofbits-skills", Index: "index.csv",
		WantBenign: 80, Today: "9 blocked"},
	{Name: "benign-kdense-scientific-skills", Dir: CorpusDir + "/benign-kdense-scientific-skills", Index: "index.csv",
		WantBenign: 134, Today: "3 blocked"},
	{Name: "openclaw-skills", Dir: "testdata/openclaw-skills", WantBenign: 53,
		Today: "target: none held"},
}

// Skill is one labelled skill of a set.
type Skill struct {
	// Name is how the set names it: its labels' skill_dir, or its
	// directory's name.
	Name     string
	Label    string
	Category string // the Spec's Category column, or ""
	// Dir is the directory holding its SKILL.md, relative to the set's
	// directory, "/"-separated.
	Dir string
}

// Labelled returns the skills of the set in setDir (the Spec's Dir
// resolved), each with its label, in the order of the labels file or by
// name.
func Labelled(sp Spec, setDir string) ([]Skill, error) {
	var skills []Skill
	if sp.Labels != "" {
		cols := []string{"skill_dir", "label"}
		if sp.Category != "" {
			cols = append(cols, sp.Category)
		}
		rows, err := readCSV(filepath.Join(setDir, sp.Labels), cols...)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.vals[1] != Malicious && r.vals[1] != Benign {
				return nil, fmt.Errorf("%s line %d: label %q is neither %s nor %s", r.file, r.line, r.vals[1], Malicious, Benign)
			}
			s := Skill{Name: r.vals[0], Label: r.vals[1], Dir: r.vals[0]}
			if sp.Category != "" {
				s.Category = r.vals[2]
			}
			skills = append(skills, s)
		}
	} else {
		ents, err := os.ReadDir(setDir)
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", sp.Name, err)
		}
		for _, e := range ents {
			if e.IsDir() {
				skills = append(skills, Skill{Name: e.Name(), Label: Benign, Dir: e.Name()})
			}
		}
		if sp.Index != "" {
			rows, err := readCSV(filepath.Join(setDir, sp.Index), "skill_dir")
			if err != nil {
				return nil, err
			}
			listed := map[string]bool{}
			for _, r := range rows {
				listed[r.vals[0]] = true
			}
			for _, s := range skills {
				if !listed[s.Name] {
					return nil, fmt.Errorf("%s: directory %s is not listed: is it a skill of the set?", filepath.Join(setDir, sp.Index), s.Name)
				}
			}
		}
	}
	seen := map[string]bool{}
	for i := range skills {
		s := &skills[i]
		if seen[s.Name] {
			return nil, fmt.Errorf("set %s: skill %s is listed twice", sp.Name, s.Name)
		}
		seen[s.Name] = true
		d, err := skillDir(setDir, s.Dir)
		if err != nil {
			return nil, err
		}
		s.Dir = d
	}
	return skills, nil
}

// skillDir returns the directory of rel's SKILL.md: rel itself when it
// holds one, as the gateway sees a skill directory (skills/{dir}/SKILL.md);
// else the one directory below it that does (an upstream layout such as
// case/.claude/skills/name/SKILL.md), so that the skill is measured as its
// author would publish it.
func skillDir(setDir, rel string) (string, error) {
	root := filepath.Join(setDir, filepath.FromSlash(rel))
	if fi, err := os.Stat(filepath.Join(root, governance.SkillFile)); err == nil && fi.Mode().IsRegular() {
		return rel, nil
	}
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == governance.SkillFile {
			r, _ := filepath.Rel(setDir, filepath.Dir(p))
			found = append(found, filepath.ToSlash(r))
		}
		return nil
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("skill directory %s: %w", root, err)
	case len(found) == 0:
		return "", fmt.Errorf("skill directory %s: no %s in it", root, governance.SkillFile)
	case len(found) > 1:
		sort.Strings(found)
		return "", fmt.Errorf("skill directory %s: %d %s files (%s): which is the skill?", root, len(found), governance.SkillFile, strings.Join(found, ", "))
	}
	return found[0], nil
}

// csvRow is one data row of a CSV file with the values of the asked
// columns.
type csvRow struct {
	file string
	line int
	vals []string
}

// readCSV reads a CSV file with a header row and returns, for each data
// row, the values of the named columns.
func readCSV(file string, cols ...string) ([]csvRow, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", file, err)
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = -1
		for j, h := range head {
			if strings.TrimSpace(h) == c {
				idx[i] = j
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("%s: no column %q in the header", file, c)
		}
	}
	var rows []csvRow
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		line, _ := r.FieldPos(0)
		row := csvRow{file: file, line: line}
		for _, j := range idx {
			v := strings.TrimSpace(rec[j])
			if v == "" {
				return nil, fmt.Errorf("%s line %d: empty %s", file, line, head[j])
			}
			row.vals = append(row.vals, v)
		}
		// The first column names a directory of the set: never one
		// outside it.
		if d := row.vals[0]; path.IsAbs(d) || d == ".." || strings.HasPrefix(d, "../") || path.Clean(d) != d {
			return nil, fmt.Errorf("%s line %d: %s %q is not a clean path inside the set", file, line, cols[0], d)
		}
		rows = append(rows, row)
	}
}

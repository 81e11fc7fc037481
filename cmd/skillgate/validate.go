package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// Bounds of what validate reads.
const (
	// maxValidateSkills bounds the SKILL.md files a directory walk checks.
	maxValidateSkills = 10000
	// maxScanDirWalked bounds the entries of one skill directory looked
	// at; governance.Budget caps the files read.
	maxScanDirWalked = 10000 // entries of one skill directory looked at
)

// lowerSkillFile is the lowercase name of a skill's file. validate reads it
// where a directory has no SKILL.md, as the Agent Skills reference validator
// does; the gateway's store loads only SKILL.md (skill.FileName).
const lowerSkillFile = "skill.md"

// validateDiag is one line of validate's report: a parse, requirement or
// format diagnostic, or a governance finding (Rule set, Line when known).
type validateDiag struct {
	Location string      `json:"location"`
	Level    skill.Level `json:"level"`
	Message  string      `json:"message"`
	Line     int         `json:"line,omitempty"`
	Rule     string      `json:"rule,omitempty"`
}

// validateResult is the --json answer of validate.
type validateResult struct {
	Files       int            `json:"files"`
	Errors      int            `json:"errors"`
	Warnings    int            `json:"warnings"`
	Diagnostics []validateDiag `json:"diagnostics"`
}

// validateSkill is one SKILL.md found under a validate path.
type validateSkill struct {
	s      *skill.Skill
	data   []byte // the SKILL.md's bytes
	dir    string // the skill directory on disk; "" to scan SKILL.md alone
	file   string // the base name of the file read: SKILL.md or skill.md
	shown  string // the SKILL.md path as shown
	global bool   // in a store: a global skill (else agent-local, or not a store)
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := cli.NewFlagSet("skillgate validate", stderr)
	asJSON := fset.Bool("json", false, "print findings as JSON")
	format := fset.String("format", "human", "output format: human or github (GitHub Actions annotations)")
	strict := fset.Bool("strict", false, "fail (exit 1) on warnings too")
	paths, err := parseFlags(fset, args)
	if err != nil {
		return err
	}
	if *format != "human" && *format != "github" {
		return cli.Usagef("--format: %q is not human or github", *format)
	}
	if *asJSON && *format != "human" {
		return cli.Usagef("--json and --format %s exclude each other", *format)
	}
	if len(paths) == 0 {
		return cli.Usagef("give one or more SKILL.md files, skill directories or directories holding skills")
	}
	res := validateResult{Diagnostics: []validateDiag{}}
	for _, p := range paths {
		if err := res.check(ctx, p); err != nil {
			return err
		}
	}
	for _, d := range res.Diagnostics {
		switch d.Level {
		case skill.LevelError:
			res.Errors++
		case skill.LevelWarn:
			res.Warnings++
		}
	}
	if err := res.write(stdout, *asJSON, *format); err != nil {
		return err
	}
	if res.Errors > 0 || (*strict && res.Warnings > 0) {
		return cli.ExitError{Code: 1}
	}
	return nil
}

// check validates the skills of one validate path and adds what it finds.
func (res *validateResult) check(ctx context.Context, p string) error {
	skills, diags, root, many, err := loadForValidate(ctx, p)
	if err != nil {
		return err
	}
	// In a store directory locations are keys; show them as the file
	// paths the operator edits.
	add := func(ds []skill.Diagnostic) {
		for _, d := range ds {
			if root != "" {
				d.Location = filepath.Join(root, filepath.FromSlash(d.Location))
			}
			res.Diagnostics = append(res.Diagnostics, validateDiag{Location: d.Location, Level: d.Level, Message: d.Message})
		}
	}
	add(diags)
	for _, vs := range skills {
		s := vs.s
		res.Files++
		add(s.Diagnostics)
		// Requirement problems as the gateway would see them with no
		// config overrides.
		add(eligibility.Prepare(s, nil, nil).Diagnostics())
		add(versionDiagnostics(s))
		if vs.data == nil {
			continue // not readable again: reported by the loader
		}
		var exists func(string) bool
		if vs.dir != "" {
			exists = func(rel string) bool {
				_, err := os.Lstat(filepath.Join(vs.dir, filepath.FromSlash(rel)))
				return err == nil
			}
		}
		add(skill.CheckFormat(s, vs.data, exists))
		res.Diagnostics = append(res.Diagnostics, scanForValidate(vs)...)
	}
	add(duplicateNames(skills))
	if many {
		// A directory of skills: the names they depend on are theirs.
		add(dependencyDiagnostics(skills))
	}
	return nil
}

// write prints the findings and the counts: as JSON, as GitHub Actions
// annotations, or for a terminal.
func (res *validateResult) write(w io.Writer, asJSON bool, format string) error {
	switch {
	case asJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	case format == "github":
		for _, d := range res.Diagnostics {
			fmt.Fprintln(w, githubAnnotation(d))
		}
	default:
		// Locations and messages quote SKILL.md files: keep them printable.
		for _, d := range res.Diagnostics {
			loc := d.Location
			if d.Line > 0 {
				loc += ":" + strconv.Itoa(d.Line)
			}
			msg := d.Message
			if d.Rule != "" {
				msg = d.Rule + ": " + msg
			}
			fmt.Fprintf(w, "%s: %s: %s\n", cli.Printable(loc), cli.Printable(string(d.Level)), cli.Printable(msg))
		}
	}
	fmt.Fprintf(w, "%d files checked: %d errors, %d warnings\n", res.Files, res.Errors, res.Warnings)
	return nil
}

// githubAnnotation renders d as a GitHub Actions workflow command.
func githubAnnotation(d validateDiag) string {
	cmd := "notice"
	switch d.Level {
	case skill.LevelError:
		cmd = "error"
	case skill.LevelWarn:
		cmd = "warning"
	}
	props := "file=" + githubProperty(filepath.ToSlash(d.Location))
	if d.Line > 0 {
		props += ",line=" + strconv.Itoa(d.Line)
	}
	msg := d.Message
	if d.Rule != "" {
		props += ",title=" + githubProperty(d.Rule)
		msg = d.Rule + ": " + msg
	}
	return "::" + cmd + " " + props + "::" + cli.Printable(githubData(msg))
}

// githubData escapes a workflow command's message as GitHub requires.
func githubData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// githubProperty escapes a workflow command's property value.
func githubProperty(s string) string {
	return cli.Printable(strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s))
}

// versionDiagnostics warns about a version a skills.entries version
// constraint cannot read: it never satisfies one.
func versionDiagnostics(s *skill.Skill) []skill.Diagnostic {
	if s.Version == "" {
		return nil
	}
	if _, err := eligibility.ParseVersion(s.Version); err != nil {
		return []skill.Diagnostic{{Location: s.Key, Level: skill.LevelWarn,
			Message: fmt.Sprintf("version %q is not a semantic version such as 1.2.0 (a v prefix and a missing minor or patch number are fine); a skills.entries version constraint never matches it", s.Version)}}
	}
	return nil
}

// dependencyDiagnostics warns, in each agent's view of a directory of
// skills, about the names in requires.skills and requires.anySkills that
// no skill of the view has (by name or directory), and about the skills on
// a cycle of requires.skills: the gateway never offers those.
func dependencyDiagnostics(skills []validateSkill) []skill.Diagnostic {
	var out []skill.Diagnostic
	seen := map[string]bool{} // location+message, to report once
	for _, view := range validateViews(skills) {
		prepared := make([]*eligibility.Prepared, len(view))
		for i, vs := range view {
			prepared[i] = eligibility.Prepare(vs.s, nil, nil)
		}
		for _, f := range eligibility.DependencyFindings(prepared) {
			s := view[f.Index].s
			var msg string
			switch {
			case f.Cycle != "":
				msg = "requires.skills: dependency cycle " + f.Cycle + "; no skill on it is ever offered — remove one of the names"
			case f.Field == eligibility.FieldAnySkills:
				msg = fmt.Sprintf("requires.anySkills: no skill here is named %q (by name or directory); it never counts as offered", f.Name)
			default:
				msg = fmt.Sprintf("requires.skills: no skill here is named %q (by name or directory); the skill is not offered without it", f.Name)
			}
			d := skill.Diagnostic{Location: s.Key, Level: skill.LevelWarn, Message: msg}
			if k := d.Location + "\x00" + d.Message; !seen[k] {
				seen[k] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// validateViews returns the agents' views of the skills: the global
// skills, and each agent's skills plus the global skills it does not
// shadow. Outside a store every skill is in one view.
func validateViews(skills []validateSkill) [][]validateSkill {
	var global []validateSkill
	agents := map[string][]validateSkill{}
	var agentIDs []string
	for _, vs := range skills {
		if vs.global || vs.s.Scope != skill.ScopeAgent {
			global = append(global, vs)
			continue
		}
		if _, ok := agents[vs.s.Agent]; !ok {
			agentIDs = append(agentIDs, vs.s.Agent)
		}
		agents[vs.s.Agent] = append(agents[vs.s.Agent], vs)
	}
	views := [][]validateSkill{global}
	for _, id := range agentIDs {
		own := agents[id]
		view := append([]validateSkill(nil), own...)
		shadowed := map[string]bool{}
		for _, vs := range own {
			shadowed[vs.s.Dir] = true
		}
		for _, vs := range global {
			if !shadowed[vs.s.Dir] {
				view = append(view, vs)
			}
		}
		views = append(views, view)
	}
	return views
}

// duplicateNames warns about skills sharing a name in one agent's view:
// among the global skills, and among an agent's skills plus the global
// skills it does not shadow. Outside a store every skill is in one view.
func duplicateNames(skills []validateSkill) []skill.Diagnostic {
	var out []skill.Diagnostic
	seen := map[string]bool{} // location+message, to report once
	for _, view := range validateViews(skills) {
		first := map[string]validateSkill{}
		for _, vs := range view {
			f, dup := first[vs.s.Name]
			if !dup {
				first[vs.s.Name] = vs
				continue
			}
			d := skill.Diagnostic{Location: vs.s.Key, Level: skill.LevelWarn,
				Message: fmt.Sprintf("name %q is also the name of %s; an agent sees two skills with the same name — rename one", vs.s.Name, f.shown)}
			if k := d.Location + "\x00" + d.Message; !seen[k] {
				seen[k] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// scanForValidate runs the governance scanner on a skill's directory and
// returns its findings at the file paths shown.
func scanForValidate(vs validateSkill) []validateDiag {
	in := &governance.Input{SkillMD: vs.data, MaxFileBytes: store.MaxFileSize}
	if vs.dir != "" {
		in.Files = readSkillFiles(vs.dir, vs.file)
	}
	rep := governance.Scan(in, governance.Options{})
	out := make([]validateDiag, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		loc := vs.shown
		if f.File != governance.SkillFile {
			// A member of an archive (ARCHIVE!/NAME) keeps its name as the
			// archive holds it: cleaning "../../.bashrc" would hide it.
			file, member, inArchive := strings.Cut(f.File, "!/")
			loc = filepath.Join(filepath.Dir(vs.shown), filepath.FromSlash(file))
			if inArchive {
				loc += "!/" + member
			}
		}
		out = append(out, validateDiag{Location: loc, Level: skill.Level(f.Severity), Message: f.Excerpt, Line: f.Line, Rule: f.Rule})
	}
	return out
}

// readSkillFiles reads the files of a skill directory other than its
// SKILL.md (skillFile, the one read as such), within the caps; files over
// them, unreadable ones, symbolic links and skipped directories come back
// with Err set.
func readSkillFiles(dir, skillFile string) []governance.File {
	var files []governance.File
	budget := governance.Budget{MaxFileBytes: store.MaxFileSize}
	walked := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == skillFile {
			return nil
		}
		walked++
		if walked > maxScanDirWalked {
			files = append(files, governance.File{Path: rel, Err: fmt.Sprintf("over the %d-entry walk limit: the rest of the directory is not read", maxScanDirWalked)})
			return filepath.SkipAll
		}
		switch {
		case err != nil:
			files = append(files, governance.File{Path: rel, Err: "unreadable: " + errText(err)})
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			files = append(files, governance.File{Path: rel, Err: "symbolic link, not followed"})
			return nil
		case d.IsDir():
			if d.Name() == ".git" || d.Name() == "node_modules" {
				files = append(files, governance.File{Path: rel, Err: "directory not read (" + d.Name() + ")"})
				return filepath.SkipDir
			}
			return nil
		case !d.Type().IsRegular():
			files = append(files, governance.File{Path: rel, Err: "not a regular file"})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			files = append(files, governance.File{Path: rel, Err: "unreadable: " + errText(err)})
			return nil
		}
		if ok, refused := budget.Admit(rel, info.Size()); !ok {
			if refused != nil {
				files = append(files, *refused)
			}
			return nil
		}
		data, err := readCapped(p, store.MaxFileSize)
		if err != nil {
			files = append(files, governance.File{Path: rel, Err: "unreadable: " + errText(err)})
			return nil
		}
		// Kept or refused by what it is, as the gateway's loader does.
		if refused := budget.Keep(governance.File{Path: rel, Data: data, Size: info.Size()}); refused != nil {
			files = append(files, *refused)
			return nil
		}
		files = append(files, governance.File{Path: rel, Data: data})
		return nil
	})
	return append(files, budget.Unread()...)
}

// errText is an error's text without the path it repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readCapped reads at most limit+1 bytes of a file; more is an error.
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errors.New(governance.TooLargeText(int(limit)))
	}
	return data, nil
}

// loadForValidate loads what a path names: one SKILL.md (or skill.md)
// file, a skill directory holding one, a store directory laid out like the
// bucket (every agent's skills and the global ones), or any other directory,
// in which every SKILL.md beneath it is a skill. root is the store
// directory, "" for the others (their locations are file paths already).
//
// A path that does not exist is an error finding, as the reference
// validator's validate() reports it ("Path does not exist"): a program
// reading --json gets a verdict for every path it gave. Any other file is
// an error finding too (a skill is a directory), and so is a directory
// with no skill file beneath it (the reference's "Missing required file:
// SKILL.md").
//
// many reports a directory of skills (a store or a tree), whose skills may
// name each other in requires.skills: one skill alone may name skills
// validate cannot see.
func loadForValidate(ctx context.Context, path string) (skills []validateSkill, diags []skill.Diagnostic, root string, many bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, []skill.Diagnostic{{Location: path, Level: skill.LevelError,
			Message: "path does not exist: give a skill directory, its SKILL.md or a directory holding skills"}}, "", false, nil
	}
	if err != nil {
		return nil, nil, "", false, cli.Usagef("%v", err)
	}
	if !fi.IsDir() {
		if base := filepath.Base(path); base != skill.FileName && base != lowerSkillFile {
			return nil, []skill.Diagnostic{{Location: path, Level: skill.LevelError,
				Message: "not a directory: a skill is a directory holding a SKILL.md; give that directory, its SKILL.md or a directory holding skills"}}, "", false, nil
		}
		vs, diags, err := loadSkillFile(path, true)
		return vs, diags, "", false, err
	}
	if file := skillFileIn(path); file != "" {
		vs, diags, err := loadSkillFile(filepath.Join(path, file), true)
		return vs, diags, "", false, err
	}
	st, err := store.NewDir(path)
	if err != nil {
		return nil, nil, "", false, cli.Usagef("%s: %v", path, err)
	}
	objs, diags, err := catalog.ListAll(ctx, st)
	if err != nil {
		return nil, nil, "", false, fmt.Errorf("%s: %w", path, err)
	}
	if len(objs) == 0 && len(diags) == 0 {
		// Not a store: a repository of skill directories, or any tree.
		skills, diags, root, err := walkForValidate(path)
		return skills, diags, root, true, err
	}
	loaded, loadDiags, err := catalog.NewLoader(st).Load(ctx, objs)
	if err != nil {
		return nil, nil, "", false, fmt.Errorf("%s: %w", path, err)
	}
	for _, l := range loaded {
		s := l.Skill
		if l.Input.SkillMD != nil {
			// The gateway's reading, with validate's levels.
			s = skill.ParseChecked(s.Ref, l.Input.SkillMD)
		}
		file := filepath.Join(path, filepath.FromSlash(s.Key))
		// The loader read SKILL.md already; the directory's other files are
		// walked by the scan, as for any directory validate checks.
		skills = append(skills, validateSkill{s: s, data: l.Input.SkillMD, dir: filepath.Dir(file), file: skill.FileName, shown: file, global: s.Scope == skill.ScopeGlobal})
	}
	return skills, append(diags, loadDiags...), path, true, nil
}

// skillFileIn returns the skill file of a directory: SKILL.md, else
// skill.md, else "".
func skillFileIn(dir string) string {
	for _, name := range []string{skill.FileName, lowerSkillFile} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() {
			return name
		}
	}
	return ""
}

// loadSkillFile reads and parses one SKILL.md (or skill.md); withDir scans
// the files of its directory too.
func loadSkillFile(path string, withDir bool) ([]validateSkill, []skill.Diagnostic, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, cli.Usagef("%v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, store.MaxFileSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > store.MaxFileSize {
		return nil, []skill.Diagnostic{{Location: path, Level: skill.LevelError,
			Message: fmt.Sprintf("file is over the %d KiB limit; the gateway will not load it", store.MaxFileSize>>10)}}, nil
	}
	abs, _ := filepath.Abs(path)
	ref := skill.Ref{Key: path, Dir: filepath.Base(filepath.Dir(abs)), Scope: skill.ScopeGlobal}
	vs := validateSkill{s: skill.ParseChecked(ref, data), data: data, shown: path, file: filepath.Base(path)}
	if withDir {
		vs.dir = filepath.Dir(path)
	}
	var diags []skill.Diagnostic
	if vs.file == lowerSkillFile {
		// Not a format problem (the reference reads it), so not a warning:
		// --strict must pass such a skill. But the store would skip it.
		diags = append(diags, skill.Diagnostic{Location: path, Level: skill.LevelInfo,
			Message: "read as the skill's SKILL.md (the Agent Skills format allows the lowercase name), but a skillgate store loads only SKILL.md — rename it before publishing"})
	}
	return []validateSkill{vs}, diags, nil
}

// walkForValidate finds every SKILL.md beneath root, in lexical order (a
// skill.md where its directory has no SKILL.md). It skips .git and
// node_modules, does not follow symbolic links and stops after
// maxValidateSkills files, saying so in a diagnostic each time.
func walkForValidate(root string) (skills []validateSkill, diags []skill.Diagnostic, _ string, err error) {
	var found []string
	stopped := false
	walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			diags = append(diags, skill.Diagnostic{Location: p, Level: skill.LevelWarn,
				Message: "not searched for skills: " + errText(err)})
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				diags = append(diags, skill.Diagnostic{Location: p, Level: skill.LevelInfo,
					Message: "symbolic link to a directory, not followed; validate its target directly"})
			} else if d.Name() == skill.FileName || d.Name() == lowerSkillFile {
				diags = append(diags, skill.Diagnostic{Location: p, Level: skill.LevelInfo,
					Message: "symbolic link, not followed; validate its target directly"})
			}
			return nil
		case d.IsDir():
			if p != root && (d.Name() == ".git" || d.Name() == "node_modules") {
				diags = append(diags, skill.Diagnostic{Location: p, Level: skill.LevelInfo,
					Message: "not searched for skills (" + d.Name() + ")"})
				return filepath.SkipDir
			}
			return nil
		case (d.Name() == skill.FileName || d.Name() == lowerSkillFile) && d.Type().IsRegular():
			if d.Name() == lowerSkillFile && skillFileIn(filepath.Dir(p)) != lowerSkillFile {
				return nil // SKILL.md is the skill's file
			}
			if len(found) == maxValidateSkills {
				stopped = true
				return filepath.SkipAll
			}
			found = append(found, p)
		}
		return nil
	})
	if walkErr != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", root, walkErr)
	}
	if stopped {
		diags = append(diags, skill.Diagnostic{Location: root, Level: skill.LevelWarn,
			Message: fmt.Sprintf("more than %d SKILL.md files; only the first %d (in path order) are checked — validate subdirectories separately", maxValidateSkills, maxValidateSkills)})
	}
	if len(found) == 0 {
		diags = append(diags, skill.Diagnostic{Location: root, Level: skill.LevelError,
			Message: "missing required file: SKILL.md — there is none in this directory or beneath it (a skill is a directory holding a SKILL.md, e.g. {dir}/SKILL.md, skills/{dir}/SKILL.md or agents/{agentId}/skills/{dir}/SKILL.md)"})
	}
	sort.Strings(found)
	for _, p := range found {
		vs, ds, err := loadSkillFile(p, true)
		if err != nil {
			diags = append(diags, skill.Diagnostic{Location: p, Level: skill.LevelWarn, Message: "not read: " + err.Error()})
			continue
		}
		skills = append(skills, vs...)
		diags = append(diags, ds...)
	}
	return skills, diags, "", nil
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/r2store"
	"github.com/skillgate/skillgate/skill"
)

// validateResult is the --json answer of validate.
type validateResult struct {
	Files       int                `json:"files"`
	Errors      int                `json:"errors"`
	Warnings    int                `json:"warnings"`
	Diagnostics []skill.Diagnostic `json:"diagnostics"`
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate validate", stderr)
	asJSON := fs.Bool("json", false, "print findings as JSON")
	paths, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return cli.Usagef("give one or more SKILL.md files or store directories")
	}
	res := validateResult{Diagnostics: []skill.Diagnostic{}}
	for _, p := range paths {
		skills, diags, root, err := loadForValidate(ctx, p)
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
				res.Diagnostics = append(res.Diagnostics, d)
			}
		}
		add(diags)
		for _, s := range skills {
			res.Files++
			add(s.Diagnostics)
			// Requirement problems as the gateway would see them with no
			// config overrides.
			add(eligibility.Prepare(s, nil).Diagnostics())
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
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		// Locations and messages quote SKILL.md files: keep them printable.
		for _, d := range res.Diagnostics {
			fmt.Fprintf(stdout, "%s: %s: %s\n", cli.Printable(d.Location), cli.Printable(string(d.Level)), cli.Printable(d.Message))
		}
		fmt.Fprintf(stdout, "%d files checked: %d errors, %d warnings\n", res.Files, res.Errors, res.Warnings)
	}
	if res.Errors > 0 {
		return cli.ExitError{Code: 1}
	}
	return nil
}

// loadForValidate loads what a path names: one SKILL.md file, a skill
// directory holding a SKILL.md, or a store directory laid out like the
// bucket (every agent's skills and the global ones); root is the store
// directory, "" for the other two.
func loadForValidate(ctx context.Context, path string) (skills []*skill.Skill, diags []skill.Diagnostic, root string, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, "", cli.Usagef("%v", err)
	}
	if fi.IsDir() {
		if _, err := os.Stat(filepath.Join(path, skill.FileName)); err == nil {
			path = filepath.Join(path, skill.FileName)
		} else {
			st, err := r2store.NewDir(path)
			if err != nil {
				return nil, nil, "", cli.Usagef("%s: %v", path, err)
			}
			objs, diags, err := r2store.ListAll(ctx, st)
			if err != nil {
				return nil, nil, "", fmt.Errorf("%s: %w", path, err)
			}
			if len(objs) == 0 && len(diags) == 0 {
				diags = append(diags, skill.Diagnostic{Location: ".", Level: skill.LevelWarn, // the store itself
					Message: "no skills found: expected skills/{dir}/SKILL.md or agents/{agentId}/skills/{dir}/SKILL.md under this directory"})
			}
			skills, loadDiags, err := r2store.NewLoader(st).Load(ctx, objs)
			if err != nil {
				return nil, nil, "", fmt.Errorf("%s: %w", path, err)
			}
			return skills, append(diags, loadDiags...), path, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", cli.Usagef("%v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, r2store.MaxFileSize+1))
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > r2store.MaxFileSize {
		return nil, []skill.Diagnostic{{Location: path, Level: skill.LevelError,
			Message: "file is over the 256 KiB limit; the gateway will not load it"}}, "", nil
	}
	abs, _ := filepath.Abs(path)
	ref := skill.Ref{Key: path, Dir: filepath.Base(filepath.Dir(abs)), Scope: skill.ScopeGlobal}
	return []*skill.Skill{skill.Parse(ref, data)}, nil, "", nil
}

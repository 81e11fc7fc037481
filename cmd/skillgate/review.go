package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/store"
)

// The operator's governance decisions are written into the config file,
// the one source of truth: approve, suppress and hold edit it in place
// (comments and layout kept), check the result as the gateway would, and
// print each key path they changed with its new value. The gateway applies
// the file at its next poll, or at once on SIGHUP.

// cmdApprove is `skillgate governance approve DIR --config FILE --store
// STORE`: it appends the current digest of every skill DIR matches (name,
// directory or location, as skills.entries keys match) to
// skills.entries.<DIR>.approve.
func cmdApprove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate governance approve", stderr)
	configPath := fs.String("config", "", "gateway config file (HuJSON) to write the approval into")
	storeURL := fs.String("store", "", "skill store the digest is computed from: a directory laid out like the bucket, or s3://BUCKET?endpoint=…&region=…")
	dir, err := oneKey(fs, args, "approve")
	if err != nil {
		return err
	}
	if *configPath == "" || *storeURL == "" {
		return cli.Usagef("approve needs --config FILE and --store STORE")
	}
	st, err := store.Open(ctx, *storeURL)
	if err != nil {
		return fmt.Errorf("--store: %w", err)
	}
	objs, _, err := catalog.ListAll(ctx, st)
	if err != nil {
		return storeError(*storeURL, err)
	}
	loaded, _, err := catalog.NewLoader(st).Load(ctx, objs)
	if err != nil {
		return storeError(*storeURL, err)
	}
	var digests, locations []string
	for i := range loaded {
		sk := loaded[i].Skill
		if sk.Name != dir && sk.Dir != dir && sk.Key != dir {
			continue
		}
		locations = append(locations, sk.Key)
		if d := governance.Digest(&loaded[i].Input); !slices.Contains(digests, d) {
			digests = append(digests, d)
		}
	}
	if len(digests) == 0 {
		return fmt.Errorf("no skill in %s has the name, directory or location %q", store.Redact(*storeURL), dir)
	}
	path := []string{"skills", "entries", dir, "approve"}
	return editConfig(*configPath, stdout, func(e *config.Edit) ([]string, error) {
		cur, _ := e.Get(path...)
		var have []string
		switch v := cur.(type) {
		case string:
			have = []string{v}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					have = append(have, s)
				}
			}
		}
		var add []string
		for _, d := range digests {
			if !slices.Contains(have, d) {
				add = append(add, d)
			}
		}
		if len(add) == 0 {
			fmt.Fprintf(stdout, "%s already lists %s\n", cli.Printable(strings.Join(path, ".")), strings.Join(digests, ", "))
			return nil, nil
		}
		var err error
		switch cur.(type) {
		case nil:
			if len(add) == 1 {
				err = e.Set(add[0], path...)
			} else {
				err = e.Set(add, path...)
			}
		case string:
			// A string becomes a list.
			err = e.Set(append(have, add...), path...)
		default:
			for _, d := range add {
				if err == nil {
					err = e.Append(d, path...)
				}
			}
		}
		for _, loc := range locations {
			fmt.Fprintf(stdout, "approving %s\n", cli.Printable(loc))
		}
		return path, err
	})
}

// cmdSuppress is `skillgate governance suppress DIR --rule RULE [--file
// PATH] [--line N] --reason TEXT [--expires DATE] --config FILE`.
func cmdSuppress(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate governance suppress", stderr)
	configPath := fs.String("config", "", "gateway config file (HuJSON) to write the suppression into")
	rule := fs.String("rule", "", "the finding's rule (an external scanner's as SCANNER:RULE); alone it covers every finding of the rule")
	file := fs.String("file", "", "only findings in this file (relative to the skill directory)")
	line := fs.Int("line", 0, "only findings at this line")
	reason := fs.String("reason", "", "why the finding is not a risk here (required)")
	expires := fs.String("expires", "", "when the finding counts again: an RFC 3339 date-time, or a date (the end of that day, UTC)")
	dir, err := oneKey(fs, args, "suppress")
	if err != nil {
		return err
	}
	switch {
	case *configPath == "":
		return cli.Usagef("suppress needs --config FILE")
	case strings.TrimSpace(*rule) == "":
		return cli.Usagef("suppress needs --rule RULE (the finding's rule, as eval --json or GET /v1/governance report it)")
	case strings.TrimSpace(*reason) == "":
		return cli.Usagef("suppress needs --reason TEXT: say why the finding is not a risk here")
	case *line < 0:
		return cli.Usagef("--line must be a positive whole number")
	}
	sup := map[string]any{"rule": *rule, "reason": *reason}
	if *file != "" {
		sup["file"] = *file
	}
	if *line > 0 {
		sup["line"] = *line
	}
	if *expires != "" {
		t, err := config.ParseExpiry(*expires)
		if err != nil {
			return cli.Usagef("--expires: %v", err)
		}
		if !t.After(time.Now()) {
			return cli.Usagef("--expires %s is in the past: a suppression that has expired does nothing", *expires)
		}
		sup["expires"] = *expires
	}
	path := []string{"skills", "entries", dir, "suppress"}
	return editConfig(*configPath, stdout, func(e *config.Edit) ([]string, error) {
		return path, e.Append(sup, path...)
	})
}

// cmdHold is `skillgate governance hold DIR --reason TEXT --config FILE`:
// skills.entries.<DIR>.mode quarantine, with the reason.
func cmdHold(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate governance hold", stderr)
	configPath := fs.String("config", "", "gateway config file (HuJSON) to write the hold into")
	reason := fs.String("reason", "", "why the skill is held (required)")
	dir, err := oneKey(fs, args, "hold")
	if err != nil {
		return err
	}
	switch {
	case *configPath == "":
		return cli.Usagef("hold needs --config FILE")
	case strings.TrimSpace(*reason) == "":
		return cli.Usagef("hold needs --reason TEXT: say why the skill is held")
	}
	entry := []string{"skills", "entries", dir}
	return editConfig(*configPath, stdout, func(e *config.Edit) ([]string, error) {
		mode := append(slices.Clip(entry), "mode")
		if cur, _ := e.Get(mode...); cur == governance.ModeBlock {
			return nil, fmt.Errorf("%s is already \"block\", stricter than a hold", strings.Join(mode, "."))
		}
		if err := e.Set(governance.ModeQuarantine, mode...); err != nil {
			return nil, err
		}
		why := append(slices.Clip(entry), "reason")
		return why, e.Set(*reason, why...)
	}, append(slices.Clip(entry), "mode"))
}

// oneKey parses a command's flags and returns its one DIR argument.
func oneKey(fs *flag.FlagSet, args []string, cmd string) (string, error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return "", cli.Usagef("%s takes one DIR: a skills.entries key (the skill's name, directory or location)", cmd)
	}
	return pos[0], nil
}

// editConfig reads the config file, applies change, checks the result as
// the gateway would (a result it would refuse is not written) and writes
// it in place of the file (a rename: the gateway never reads half a
// file). It prints each key path change reports (and those of also), with
// its new value.
func editConfig(path string, stdout io.Writer, change func(e *config.Edit) ([]string, error), also ...[]string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	if info.Size() > gateway.MaxConfigFileSize {
		return fmt.Errorf("--config %s: larger than %d bytes", path, gateway.MaxConfigFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	if _, err := config.Parse(path, data); err != nil {
		return fmt.Errorf("%w\n%s: fix the file first (skillgate config check %s); it was not changed", configError(err), path, path)
	}
	e, err := config.NewEdit(data)
	if err != nil {
		return fmt.Errorf("--config %s: %w", path, err)
	}
	changed, err := change(e)
	if err != nil {
		return fmt.Errorf("--config %s: %w; it was not changed", path, err)
	}
	if changed == nil {
		return nil
	}
	out := e.Bytes()
	if _, err := config.Parse(path, out); err != nil {
		return fmt.Errorf("%w\n%s: the change would make the gateway refuse the file; it was not changed", configError(err), path)
	}
	if err := writeAtomic(path, out, info.Mode().Perm()); err != nil {
		return err
	}
	for _, p := range append(also, changed) {
		v, _ := e.Get(p...)
		js, _ := json.Marshal(v)
		fmt.Fprintf(stdout, "%s: %s\n", cli.Printable(strings.Join(p, ".")), cli.Printable(string(js)))
	}
	fmt.Fprintf(stdout, "wrote %s; the gateway applies it at its next poll, or at once on SIGHUP\n", cli.Printable(path))
	return nil
}

// writeAtomic replaces path with data through a temporary file in the
// same directory, keeping perm.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Chmod(perm), tmp.Sync(), tmp.Close())
	if err != nil {
		return fmt.Errorf("--config %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

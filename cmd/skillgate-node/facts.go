package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/node"
	"github.com/skillgate/skillgate/protocol"
)

// runFacts is `skillgate-node facts`, a local doctor: it prints to stdout,
// as indented JSON, the host facts this node would report if the gateway
// asked about --bins and --env, and on stderr a hint for every asked name
// that would be reported missing, so that stdout stays machine-readable.
func runFacts(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("skillgate-node facts", flag.ContinueOnError)
	var s settings
	bins := fs.String("bins", "", "binary `names` to look for, comma-separated")
	env := fs.String("env", "", "env-var `NAMES` to check (set and non-empty; values are never shown), comma-separated")
	s.register(fs)
	s.setUsage(stderr, "skillgate-node facts [--bins a,b,…] [--env A,B,…] [--path DIR:DIR…] [--roles …] [--capabilities …] [--id ID] [--config FILE]")
	if err := s.parse(args); err != nil {
		return err
	}

	id, roles, caps, path := s.identity()
	if id == "" {
		h, err := os.Hostname()
		if err != nil {
			return cli.Usagef("--id: not set and the hostname is unknown: %v", err)
		}
		id = h
	}
	if err := protocol.ValidateID(id); err != nil {
		return cli.Usagef("%s: %v", s.source("id"), err)
	}
	if len(roles) == 0 {
		roles = []string{protocol.RoleExecution}
	}
	if len(caps) == 0 {
		caps = slices.Clone(protocol.BaselineCapabilities)
	}
	if err := node.CheckIdentity(roles, caps); err != nil {
		return s.configError(err)
	}
	if len(path) == 0 {
		path = node.DefaultPath()
	}
	for _, d := range path {
		if !filepath.IsAbs(d) {
			return cli.Usagef("%s: %q is not an absolute directory", s.source("path"), d)
		}
	}

	interest := protocol.Interest{
		Bins: node.SplitList(*bins, ","),
		Env:  node.SplitList(*env, ","),
	}
	u := node.Probe(path, interest)
	facts := protocol.HostFacts{
		ID: id, OS: runtime.GOOS, Roles: roles, Capabilities: caps,
		Env: u.Env, HostBinStatus: u.HostBinStatus,
	}
	out, err := json.MarshalIndent(facts, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding facts: %w", err)
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", out); err != nil {
		return err
	}

	seen := map[string]bool{}
	for _, name := range interest.Bins {
		if seen[name] || u.HostBinStatus[name] {
			continue
		}
		seen[name] = true
		r := node.FindBin(path, name)
		if strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") {
			fmt.Fprintf(stderr, "missing bin %q: a binary name, not a path, is expected; never looked up\n", name)
			continue
		}
		// Names are %q-quoted; the path (flag or config file) and the
		// reasons (file names found on disk) pass through cli.Printable.
		fmt.Fprintf(stderr, "missing bin %q: searched %s\n", name, cli.Printable(strings.Join(path, string(os.PathListSeparator))))
		for _, why := range r.Rejected {
			fmt.Fprintf(stderr, "  %s\n", cli.Printable(why))
		}
	}
	for _, name := range interest.Env {
		if !slices.Contains(u.Env, name) && !seen["$"+name] {
			seen["$"+name] = true
			fmt.Fprintf(stderr, "missing env %q: not set or empty here (a service may run with another environment)\n", name)
		}
	}
	return nil
}

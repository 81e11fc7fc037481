package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/cli"
)

// cmdConfig is `skillgate config check FILE` (every problem of a gateway
// config file, as the gateway would refuse it: exit 0 when none, 1 with
// one file:line:col line each) and `skillgate config schema` (the JSON
// Schema of what skillgate owns in the file, for editors).
func cmdConfig(_ context.Context, args []string, stdout, stderr io.Writer) error {
	const sub = "give a subcommand: check FILE, or schema"
	if len(args) == 0 {
		return cli.Usagef("%s", sub)
	}
	switch args[0] {
	case "check":
		fs := cli.NewFlagSet("skillgate config check", stderr)
		pos, err := parseFlags(fs, args[1:])
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return cli.Usagef("config check takes one FILE")
		}
		_, err = gateway.ReadConfigFile(pos[0])
		var ce *config.Error
		switch {
		case errors.As(err, &ce):
			for _, l := range ce.Lines() {
				fmt.Fprintln(stdout, cli.Printable(l))
			}
			fmt.Fprintf(stdout, "%s: %d problem(s); the gateway refuses this file\n", cli.Printable(pos[0]), len(ce.Problems))
			return cli.ExitError{Code: 1}
		case err != nil:
			return cli.Usagef("%v", err)
		}
		fmt.Fprintf(stdout, "%s: ok\n", cli.Printable(pos[0]))
		return nil
	case "schema":
		fs := cli.NewFlagSet("skillgate config schema", stderr)
		pos, err := parseFlags(fs, args[1:])
		if err != nil {
			return err
		}
		if len(pos) > 0 {
			return cli.Usagef("config schema takes no argument")
		}
		_, err = stdout.Write(config.Schema())
		return err
	}
	return cli.Usagef("unknown config subcommand %q: %s", args[0], sub)
}

// configError is the usage error of a config file the gateway refuses:
// every problem on a line of its own.
func configError(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		return &cli.LinesError{Prefix: "--config: ", Lines: ce.Lines()}
	}
	return cli.Usagef("--config: %v", err)
}

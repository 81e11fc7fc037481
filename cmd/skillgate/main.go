// Command skillgate is the skillgate gateway and its operator CLI.
//
//	skillgate serve    --store DIR|s3://BUCKET?… [--listen 127.0.0.1:7780] [--config FILE] [--poll 2s] [--insecure] [--tls-cert F --tls-key F [--tls-client-ca F]]
//	skillgate eval     --store … [--config FILE] --hosts FILE|URL --agent ID [--json] [--max-chars N] [--max-skills N] [--ca-file F]
//	skillgate validate PATH… [--json]
//	skillgate status   --gateway URL [--agent ID] [--governance] [--json] [--ca-file F]
//	skillgate mcp      --gateway URL --agent ID [--token-file F] [--ca-file F]
//	skillgate governance sign DIR --key FILE
//
// Each command lives in its own file (serve.go, eval.go, validate.go,
// status.go, mcp.go, configcmd.go; governance.go dispatches to its
// subcommands', sign.go); the hosts eval reads are in hosts.go and
// hostparse.go. This
// package is flags, files and exit codes only: what the gateway does is
// the gateway package's, what eval and validate decide is eligibility's
// and skill's, and what the three programs share (exit statuses, tokens,
// flag-over-file merging, gateway URLs, HuJSON) is internal/cli. It is
// the one binary that links the gateway and storage (store, the AWS
// SDK); it never imports node, whose binary must stay free of them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/internal/version"
)

const usage = `skillgate decides which skills an AI agent may be offered.

Usage:
  skillgate serve    --store DIR|s3://BUCKET?endpoint=…&region=… [--listen 127.0.0.1:7780]
                     [--config FILE] [--poll 2s] [--insecure]
                     [--agent-token-file FILE] [--node-token-file FILE]
                     [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]
  skillgate eval     --store … [--config FILE] --hosts FILE|URL --agent ID [--json]
                     [--max-chars N] [--max-skills N] [--ca-file FILE]
  skillgate validate PATH… [--json | --format github] [--strict]
  skillgate status   --gateway URL [--agent ID] [--governance] [--json] [--ca-file FILE]
  skillgate mcp      --gateway URL --agent ID [--token-file FILE] [--ca-file FILE]
  skillgate config   check FILE | schema
  skillgate governance approve DIR --config FILE --store …
  skillgate governance suppress DIR --rule RULE [--file PATH] [--line N] --reason TEXT
                     [--expires 2027-01-31] --config FILE
  skillgate governance hold DIR --reason TEXT --config FILE
  skillgate governance sign DIR --key FILE
  skillgate version

Run 'skillgate COMMAND -h' for the flags of one command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "eval":
		err = cmdEval(ctx, args[1:], stdout, stderr)
	case "validate":
		err = cmdValidate(ctx, args[1:], stdout, stderr)
	case "status":
		err = cmdStatus(ctx, args[1:], stdout, stderr)
	case "config":
		err = cmdConfig(ctx, args[1:], stdout, stderr)
	case "governance":
		err = cmdGovernance(ctx, args[1:], stdout, stderr)
	case "mcp":
		err = cmdMCP(ctx, args[1:], os.Stdin, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "skillgate", version.String())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "skillgate: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	// Every failure is status 2, unusable input (validate's findings are
	// a cli.ExitError of 1).
	return cli.ExitCode(stderr, "skillgate "+args[0], err, 2)
}

// parseFlags parses args, allowing flags after positional arguments, and
// returns the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, cli.Usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

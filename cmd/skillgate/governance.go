package main

import (
	"context"
	"io"
	"strings"

	"github.com/skillgate/skillgate/internal/cli"
)

// governanceCommands are the subcommands of `skillgate governance`, in the
// order the usage lists them. Each parses its own flags.
var governanceCommands = []struct {
	name string
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}{
	{"approve", cmdApprove},
	{"suppress", cmdSuppress},
	{"hold", cmdHold},
	{"sign", cmdGovernanceSign},
}

// cmdGovernance is `skillgate governance SUBCOMMAND …`: the operator's and
// the publisher's governance operations from the command line.
func cmdGovernance(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	names := make([]string, len(governanceCommands))
	for i, c := range governanceCommands {
		names[i] = c.name
	}
	sub := "give a subcommand: " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] +
		" (skillgate governance SUBCOMMAND -h for its flags)"
	if len(args) == 0 {
		return cli.Usagef("%s", sub)
	}
	for _, c := range governanceCommands {
		if args[0] == c.name {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	return cli.Usagef("unknown governance subcommand %q: %s", args[0], sub)
}

// Command skillgate-node is the node agent installed on execution hosts. It
// connects to a skillgate gateway over a WebSocket and reports which of the
// binaries and env-var names the gateway asks about exist on this host.
//
//	skillgate-node --gateway URL [--id ID] [--roles execution] [--capabilities a,b,…]
//	               [--path DIR:DIR…] [--recheck 10s] [--token-file FILE] [--config FILE]
//	               [--ca-file FILE] [--cert FILE --key FILE] [--move-back 30s] [--move-back-window 60s]
//	skillgate-node facts [--bins a,b,…] [--env A,B,…] [--path …] [--roles …] [--capabilities …]
//
// The token comes from SKILLGATE_NODE_TOKEN or --token-file, never from a
// flag value (a command line shows in ps).
//
// Exit status: 0 after SIGINT/SIGTERM, 1 when the gateway refuses the node
// for good (unauthorized, invalid_facts, unsupported_protocol, a redirect,
// 401 or 403 to the upgrade) or TLS fails for good (an untrusted, expired
// or misnamed gateway certificate, a refused client certificate), 2 for a
// usage or configuration error.
//
// This package is flags, files and exit codes only: the agent itself is
// the node package, and what the three programs share (exit statuses,
// tokens, flag-over-file merging, gateway URLs, HuJSON) is internal/cli.
// Like node, it never imports gateway, store, catalog, eligibility or an AWS
// package: the binary installed on every host links no storage code.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/internal/logging"
	"github.com/skillgate/skillgate/internal/version"
	"github.com/skillgate/skillgate/node"
)

// shutdownLimit is how long the process may take to exit after a signal,
// as the operators' contract promises; the client needs far less.
const shutdownLimit = 5 * time.Second

// tokenEnv is the environment variable holding the node token.
const tokenEnv = cli.NodeTokenEnv

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// A second signal now kills the process at once.
		stop()
		// Belt and braces: the promise is an exit within 5 s, whatever hangs.
		time.AfterFunc(shutdownLimit-500*time.Millisecond, func() {
			fmt.Fprintln(os.Stderr, "skillgate-node: shutdown took too long; exiting")
			os.Exit(0)
		})
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program minus process concerns (signals, os.Exit), so
// that tests can call it. It returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var err error
	if len(args) > 0 && args[0] == "facts" {
		err = runFacts(args[1:], stdout, stderr)
	} else {
		err = runAgent(ctx, args, stdout, stderr)
	}
	if _, ok := errors.AsType[*node.FatalError](err); ok {
		err = cli.ExitError{Code: 1} // already logged by the client
	}
	return cli.ExitCode(stderr, "skillgate-node", err, 1)
}

// settings are the values shared by the agent and `facts`, gathered from
// the flags and the config file; a flag wins over the file.
type settings struct {
	fs         *flag.FlagSet
	usage      func() // prints --help
	configPath string
	file       node.FileConfig

	id, roles, caps, path string
}

// register adds the flags both commands have.
func (s *settings) register(fs *flag.FlagSet) {
	s.fs = fs
	fs.StringVar(&s.id, "id", "", "node `ID` (default: the hostname)")
	fs.StringVar(&s.roles, "roles", "", "host `roles`, comma-separated: execution, specialized (default: execution)")
	fs.StringVar(&s.caps, "capabilities", "", "capability `ids`, comma-separated (default: filesystem.list,filesystem.read,filesystem.write,shell.exec)")
	fs.StringVar(&s.path, "path", "", "binary search path `DIR"+string(os.PathListSeparator)+"DIR…`; replaces the default (the login shell's PATH, /usr/local/bin, /opt/homebrew/bin)")
	fs.StringVar(&s.configPath, "config", "", "HuJSON config `FILE` with the same keys as the flags (gateway, id, roles, capabilities, path, recheck, moveBack, moveBackWindow, tokenFile, caFile, cert, key)")
}

// parse parses args and loads the config file.
func (s *settings) parse(args []string) error {
	if err := s.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			s.usage()
			return err
		}
		return cli.Usagef("%v (see --help)", err)
	}
	if s.fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (flags take the form --name value)", s.fs.Arg(0))
	}
	if s.configPath != "" {
		fc, err := node.LoadFile(s.configPath)
		if err != nil {
			return cli.Usagef("--config: %v", err)
		}
		s.file = fc
	}
	return nil
}

// source names where a field's value came from, for error messages.
func (s *settings) source(field string) string {
	flagName := field
	switch field {
	case "tokenFile":
		flagName = "token-file"
	case "caFile":
		flagName = "ca-file"
	case "moveBack":
		flagName = "move-back"
	case "moveBackWindow":
		flagName = "move-back-window"
	}
	return cli.Source(s.fs, flagName, s.configPath, field, s.file.Set[field])
}

// identity returns id, roles, capabilities and path after merging (a flag
// given on the command line wins over the file, even when empty); an
// unset value is nil or "" and gets the node package's default.
func (s *settings) identity() (id string, roles, caps, path []string) {
	id = cli.FlagOverFile(s.fs, "id", s.id, s.file.ID, true)
	roles = cli.FlagOverFile(s.fs, "roles", node.SplitList(s.roles, ","), s.file.Roles, true)
	caps = cli.FlagOverFile(s.fs, "capabilities", node.SplitList(s.caps, ","), s.file.Capabilities, true)
	// SplitList of "" is nil already.
	path = cli.FlagOverFile(s.fs, "path", node.SplitList(s.path, string(os.PathListSeparator)), s.file.Path, true)
	return id, roles, caps, path
}

// configError turns a node.ConfigError into a usage error naming the flag
// or the config file.
func (s *settings) configError(err error) error {
	if ce, ok := errors.AsType[*node.ConfigError](err); ok {
		// HostFacts errors start with the field name already.
		msg := strings.TrimPrefix(ce.Err.Error(), ce.Field+": ")
		return cli.Usagef("%s: %s", s.source(ce.Field), msg)
	}
	return err
}

// setUsage makes the flag set silent on errors (run prints one line) and
// prepares the --help text, with flags spelled as in the documentation.
func (s *settings) setUsage(stderr io.Writer, synopsis string) {
	s.fs.SetOutput(io.Discard)
	s.fs.Usage = func() {}
	s.usage = func() {
		var b strings.Builder
		s.fs.SetOutput(&b)
		s.fs.PrintDefaults()
		s.fs.SetOutput(io.Discard)
		flags := strings.ReplaceAll("\n"+b.String(), "\n  -", "\n  --")
		fmt.Fprintf(stderr, "usage: %s\n%s", synopsis, flags)
	}
}

func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("skillgate-node", flag.ContinueOnError)
	var s settings
	gateway := fs.String("gateway", "", "the gateway's base `URL` (http://, https://, ws:// or wss://), or several replicas' separated by commas (the node connects to one and moves to the next when it fails); required")
	recheck := fs.Duration("recheck", node.DefaultRecheck, "how often to re-check binaries and env names")
	tokenFile := fs.String("token-file", "", "`FILE` holding the node token (default: $"+tokenEnv+")")
	caFile := fs.String("ca-file", "", "PEM `FILE` of the CA certificates that verify an https:// gateway (default: the system's roots)")
	certFile := fs.String("cert", "", "PEM `FILE` of this node's TLS client certificate, for a gateway with --tls-client-ca")
	keyFile := fs.String("key", "", "PEM `FILE` of the client certificate's private key")
	moveBack := fs.Duration("move-back", node.DefaultMoveBack, "with several --gateway replicas: move back to a replica ranked above the one connected to once its /readyz has answered 200 this long (0: never)")
	moveBackWindow := fs.Duration("move-back-window", node.DefaultMoveBackWindow, "and after a random extra wait of up to this long, so that the nodes of a replica that came back return over this window (0: no extra wait)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	s.register(fs)
	s.setUsage(stderr, "skillgate-node --gateway URL [--id ID] [--roles execution] [--capabilities a,b,…]\n"+
		"                      [--path DIR:DIR…] [--recheck 10s] [--token-file FILE] [--config FILE]\n"+
		"                      [--ca-file FILE] [--cert FILE --key FILE] [--move-back 30s] [--move-back-window 60s]\n"+
		"       skillgate-node facts [--bins a,b,…] [--env A,B,…] [--path …] [--roles …] [--capabilities …]")
	if err := s.parse(args); err != nil {
		return err
	}
	if *showVersion {
		fmt.Fprintf(stdout, "skillgate-node %s (%s/%s)\n", version.String(), runtime.GOOS, runtime.GOARCH)
		return nil
	}

	cfg := node.Config{}
	cfg.ID, cfg.Roles, cfg.Capabilities, cfg.Path = s.identity()
	cfg.Gateway = cli.FlagOverFile(s.fs, "gateway", *gateway, s.file.Gateway, true)
	if cfg.Gateway == "" {
		return cli.Usagef("--gateway is required (the gateway's base URL, e.g. http://127.0.0.1:7780; or \"gateway\" in --config)")
	}
	if cli.Given(s.fs, "recheck") && *recheck <= 0 {
		return cli.Usagef("--recheck: must be a positive duration, e.g. 10s")
	}
	cfg.Recheck = cli.FlagOverFile(s.fs, "recheck", *recheck, s.file.Recheck, true)
	for _, d := range []struct {
		flag, key string
		val       time.Duration
		inFile    time.Duration
		dst       *time.Duration
	}{
		{"move-back", "moveBack", *moveBack, s.file.MoveBack, &cfg.MoveBack},
		{"move-back-window", "moveBackWindow", *moveBackWindow, s.file.MoveBackWindow, &cfg.MoveBackWindow},
	} {
		if cli.Given(s.fs, d.flag) && d.val < 0 {
			return cli.Usagef("--%s: must be a duration of 0 or more, e.g. 30s (0 turns it off)", d.flag)
		}
		v := cli.FlagOverFile(s.fs, d.flag, d.val, d.inFile, s.file.Set[d.key])
		if v == 0 {
			v = -1 // off: node.Config's zero is the default
		}
		*d.dst = v
	}
	logger := logging.New(stderr, slog.LevelInfo)
	cfg.Logger = logger

	tf := cli.FlagOverFile(s.fs, "token-file", *tokenFile, s.file.TokenFile, true)
	token, err := cli.ReadTokenStrict(tf, tokenEnv, logger)
	if err != nil {
		return cli.Usagef("%s: %v", s.source("tokenFile"), err)
	}
	cfg.Token = token
	cfg.CAFile = cli.FlagOverFile(s.fs, "ca-file", *caFile, s.file.CAFile, true)
	cfg.CertFile = cli.FlagOverFile(s.fs, "cert", *certFile, s.file.CertFile, true)
	cfg.KeyFile = cli.FlagOverFile(s.fs, "key", *keyFile, s.file.KeyFile, true)

	c, err := node.New(cfg)
	if err != nil {
		return s.configError(err)
	}
	return c.Run(ctx)
}

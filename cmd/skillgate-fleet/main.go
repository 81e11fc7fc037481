// Command skillgate-fleet is a fleet simulator and load generator for sizing
// a skillgate gateway and for `make bench`.
//
//	skillgate-fleet nodes  --gateway URL[,URL…] [-n 10000] [--mix FILE] [--churn 50/s] [--duration 60s]
//	                       [--connect-rate 2000/s] [--connect-concurrency 256] [--id-prefix sim-]
//	                       [--token-file F] [--probe-agent ID [--probe-runs 20]] [--json]
//	skillgate-fleet skills --out DIR [-n 1000] [--probe] [--seed 1] [--force]
//	skillgate-fleet hosts  --out FILE [-n 10000] [--mix FILE] [--seed 1] [--id-prefix sim-] [--force]
//	skillgate-fleet load   --gateway URL [--agents main,a2,…] [-c 64] [--duration 20s] [--gzip]
//	                       [--rate 2000/s] [--token-file F] [--json]
//	skillgate-fleet longpoll --gateway URL [--probe-gateway URL] [-n 10000] [--agents main,…]
//	                       [--wait 2m] [--flips 5] [--token-file F] [--agent-token-file F]
//	                       [--ready-file F] [--hold 0s] [--json]
//	skillgate-fleet mcp    --gateway URL [--agent main] [--skill NAME] [--query WORDS] [--rate 400/s]
//	                       [-c 32] [--duration 15s] [--token-file F] [--json]
//	skillgate-fleet version
//
// `nodes` simulates many nodes over real WebSockets, each a single goroutine
// speaking protocol version 1 (connect, facts.update, interest events); it
// only targets gateways on loopback. Given several gateways (replicas of
// one), node i connects to the (i mod their number)-th, the probe to the
// first. `skills` writes a directory store of
// synthetic skills whose requirements use the simulated nodes' vocabulary
// (binaries bin000…bin299, env names ENV_00…ENV_39). `hosts` writes the
// facts those nodes would report as a `skillgate eval --hosts` file, to
// size and replay eval offline. `load` is an HTTP load generator on
// GET /v1/agents/{id}/prompt (any gateway: sizing a staging gateway from
// another host is a legitimate use): closed loop by default (-c workers,
// each sending its next request when the last one is answered), open loop
// with --rate (requests on a fixed schedule, latency counted from each
// one's scheduled time, late and dropped requests counted). `longpoll`
// holds n long polls (GET …/prompt?wait=D with If-None-Match, each on its
// own connection; loopback only), then flips the probe skill by
// connecting the probe node (the skill appears: latency from its
// facts.update) and closing it (the skill goes: latency from the close),
// and measures how long each waiter took to get the new block; every
// answered waiter re-polls at once with the new ETag. With
// --probe-gateway the probe node connects to another gateway than the
// waiters': a change on one replica, answered by another.
//
// A mix file (--mix) is HuJSON: {"profiles": [PROFILE, …]} or a bare list,
// each PROFILE an object
//
//	{"name": "linux", "weight": 60, "os": "linux", "roles": ["execution"],
//	 "capabilities": ["filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"],
//	 "bins": ["git"], "env": ["GITHUB_TOKEN"], "randomBins": 30, "randomEnv": 3}
//
// where bins and env are present on every node of the profile, and each node
// also gets randomBins of bin000…bin299 and randomEnv of ENV_00…ENV_39,
// drawn from --seed and its index (so a reconnecting node reports the same
// facts). The built-in mix is 60% linux and 30% darwin execution hosts with
// 30 random binaries and 3 env names, and 10% windows specialized hosts.
//
// Tokens never go on the command line: the node token comes from
// SKILLGATE_NODE_TOKEN or `nodes --token-file`, the agents' bearer token from
// SKILLGATE_AGENT_TOKEN or `load --token-file`.
//
// Exit status: 0 success; 1 the run failed (the gateway refused the nodes,
// the probe never saw its skill, a load request failed, a long poll missed a
// flip or erred); 2 usage error, with
// a message naming the flag or file.
//
// One concern per file: the command line of `nodes` (nodes.go), the fleet
// that starts, paces and stops the simulated nodes (fleet.go, pace.go),
// one simulated node's connection (simnode.go), churn (churn.go), progress
// and the summary (report.go), the nodes' facts (mix.go), the probe
// (probe.go), the long polls and their flips (longpoll.go), and the
// `skills`, `hosts` and `load` commands. It talks to a gateway only over HTTP and WebSockets,
// as real nodes and agents do: it never imports gateway, store, catalog
// or eligibility (tests start an in-process gateway). It shares the node
// agent's reconnect backoff (node.Backoff) and the programs' command-line
// glue (internal/cli).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/internal/version"
)

// The client name the simulated nodes send, and the environment variables
// of the tokens.
var clientName = "skillgate-fleet/" + version.String()

const (
	nodeTokenEnv  = cli.NodeTokenEnv
	agentTokenEnv = cli.AgentTokenEnv
)

const usage = `skillgate-fleet simulates node fleets and loads a skillgate gateway (loopback only for nodes).

Usage:
  skillgate-fleet nodes  --gateway URL[,URL…] [-n 10000] [--mix FILE] [--churn 50/s] [--duration 60s]
                         [--connect-rate 2000/s] [--connect-concurrency 256] [--id-prefix sim-]
                         [--token-file F] [--probe-agent ID [--probe-runs 20]] [--json]
  skillgate-fleet skills --out DIR [-n 1000] [--probe] [--seed 1] [--force]
  skillgate-fleet hosts  --out FILE [-n 10000] [--mix FILE] [--seed 1] [--id-prefix sim-] [--force]
  skillgate-fleet load   --gateway URL [--agents main,a2,…] [-c 64] [--duration 20s] [--gzip]
                         [--rate 2000/s] [--token-file F] [--json]
  skillgate-fleet longpoll --gateway URL [--probe-gateway URL] [-n 10000] [--agents main,…]
                         [--wait 2m] [--flips 5] [--token-file F] [--agent-token-file F]
                         [--ready-file F] [--hold 0s] [--json]
  skillgate-fleet mcp    --gateway URL [--agent main] [--skill NAME] [--query WORDS] [--rate 400/s]
                         [-c 32] [--duration 15s] [--token-file F] [--json]
  skillgate-fleet version

A --mix file is HuJSON: {"profiles": [{"name", "weight", "os", "roles", "capabilities",
"bins", "env", "randomBins", "randomEnv"}, …]}; see the package documentation.
Node tokens come from SKILLGATE_NODE_TOKEN or --token-file, agent tokens from
SKILLGATE_AGENT_TOKEN or --token-file (load) / --agent-token-file (nodes, longpoll).
longpoll needs a store written with 'skills --probe': it flips the probe skill by
connecting and closing a probe node, and measures each long poll's flip → answer time.
mcp sends GET …/read, GET …/skills?q=, tools/call load_skill and tools/call search_skills
(over /mcp) of one skill and one query interleaved on one open-loop schedule, and
reports each one's latency and the MCP path's ratio to the HTTP one.

Run 'skillgate-fleet COMMAND -h' for the flags of one command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process at once
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit status. It is the
// whole program minus process concerns, so that tests can call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "nodes":
		err = cmdNodes(ctx, args[1:], stdout, stderr)
	case "skills":
		err = cmdSkills(args[1:], stdout, stderr)
	case "hosts":
		err = cmdHosts(args[1:], stdout, stderr)
	case "load":
		err = cmdLoad(ctx, args[1:], stdout, stderr)
	case "longpoll":
		err = cmdLongPoll(ctx, args[1:], stdout, stderr)
	case "mcp":
		err = cmdMCP(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "skillgate-fleet", version.String())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "skillgate-fleet: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return cli.ExitCode(stderr, "skillgate-fleet "+args[0], err, 1)
}

// parseFlags parses args and refuses positional arguments, which no
// subcommand takes.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return cli.Usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (every option is a flag; see -h)", fs.Arg(0))
	}
	return nil
}

// parseRate reads a rate such as "2000/s", "50/s", "120/m" or a bare
// number (per second). It returns events per second.
func parseRate(flagName, s string) (float64, error) {
	num, unit, hasUnit := strings.Cut(strings.TrimSpace(s), "/")
	per := time.Second
	if hasUnit {
		switch unit {
		case "s":
		case "m", "min":
			per = time.Minute
		default:
			return 0, cli.Usagef("--%s: %q: the unit must be /s or /m, as in 2000/s", flagName, s)
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || v != v {
		return 0, cli.Usagef("--%s: %q is not a rate like 2000/s", flagName, s)
	}
	return v / per.Seconds(), nil
}

// gatewayBase checks the value of --flagName, one gateway URL, and
// returns the HTTP base URL (http or https, no trailing slash), in the
// fleet's words.
func gatewayBase(flagName, raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, cli.Usagef("--%s is required: the gateway's base URL, e.g. http://127.0.0.1:7780", flagName)
	}
	u, err := parseBase(raw)
	if err != nil {
		return nil, cli.Usagef("--%s: %v", flagName, err)
	}
	return u, nil
}

// gatewayBases checks a --gateway value of one gateway URL or several
// separated by commas (replicas of one gateway) and returns their HTTP
// bases in the order given. One URL is checked as gatewayBase does; an
// error about one of several names it, and each may be listed only once,
// so that a per-gateway count means one gateway.
func gatewayBases(raw string) ([]*url.URL, error) {
	parts := strings.Split(raw, ",")
	if len(parts) == 1 {
		u, err := gatewayBase("gateway", raw)
		if err != nil {
			return nil, err
		}
		return []*url.URL{u}, nil
	}
	var out []*url.URL
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, cli.Usagef("--gateway: %q has an empty URL between its commas", raw)
		}
		u, err := parseBase(p)
		if err != nil {
			return nil, cli.Usagef("--gateway: URL %d of %d, %q: %v", i+1, len(parts), p, err)
		}
		for j, prev := range out {
			if prev.String() == u.String() {
				return nil, cli.Usagef("--gateway: URLs %d and %d are both %s; list each gateway once", j+1, i+1, u)
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// parseBase checks one gateway URL, raw trimmed and not empty; its errors
// are for a flag's name to be put in front.
func parseBase(raw string) (*url.URL, error) {
	u, err := cli.ParseGateway(raw)
	if ge, ok := errors.AsType[*cli.GatewayURLError](err); ok {
		switch ge.Problem {
		case cli.NoScheme:
			return nil, fmt.Errorf("%q has no scheme; use http://%s", raw, raw)
		case cli.NotURL:
			return nil, fmt.Errorf("%q is not a URL: %v", raw, ge.Err)
		case cli.BadScheme:
			return nil, fmt.Errorf("scheme %q: use http, https, ws or wss", ge.Scheme)
		case cli.Credentials:
			return nil, errors.New("credentials in the URL are not supported; use --token-file or the environment")
		}
	}
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: give the base URL only, without query or fragment", raw)
	}
	return u, nil
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readToken returns the token from file when it is set, else from the
// environment variable env ("" when neither is set).
func readToken(flagName, file, env string) (string, error) {
	tok, err := cli.ReadToken(file, env)
	if err != nil {
		return "", cli.Usagef("--%s: %v", flagName, err)
	}
	return tok, nil
}

// splitList splits a comma-separated flag value, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

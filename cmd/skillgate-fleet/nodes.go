package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/protocol"
)

// Bounds of `nodes` (and of `hosts`).
const (
	maxNodes  = 1_000_000
	fdReserve = 64 // descriptors besides the nodes' sockets
)

// nodesOptions is the validated command line of `nodes`.
type nodesOptions struct {
	gateways    []gatewayTarget // node i connects to gateways[i%len(gateways)], the probe to the first
	n           int
	mix         *mix
	mixName     string
	churn       float64 // nodes per second
	duration    time.Duration
	connectRate float64
	concurrency int
	prefix      string
	token       string
	probeAgent  string
	probeRuns   int
	agentToken  string
	json        bool
	readyFile   string
	localIPs    []net.IP // source addresses to spread over; nil = let the kernel choose
}

// gatewayTarget is one gateway the simulated nodes connect to.
type gatewayTarget struct {
	base  *url.URL // http(s) base, as given
	wsURL string   // {base}/v1/nodes/connect, localhost rewritten to a loopback IP
}

// gatewayOf returns the gateway node i connects to: i mod their number,
// so that nodes spread evenly and a node keeps its gateway across
// reconnects.
func (o *nodesOptions) gatewayOf(i int) *gatewayTarget {
	return &o.gateways[i%len(o.gateways)]
}

func cmdNodes(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate-fleet nodes", stderr)
	gw := fs.String("gateway", "", "gateway base URL on loopback, e.g. http://127.0.0.1:7780; or several separated by commas (replicas): node i (id-prefix + i) connects to URL i mod their number, the probe to the first")
	n := fs.Int("n", 10000, "number of simulated nodes")
	mixPath := fs.String("mix", "", "HuJSON file of weighted node profiles (default: the built-in mix)")
	churn := fs.String("churn", "0", "disconnect and reconnect this many random nodes per second, e.g. 50/s")
	duration := fs.Duration("duration", 0, "stop after this long, counted from the start (0: run until SIGINT)")
	rate := fs.String("connect-rate", "2000/s", "at most this many connection attempts per second")
	conc := fs.Int("connect-concurrency", 256, "at most this many handshakes in flight")
	prefix := fs.String("id-prefix", "sim-", "node ids are this prefix followed by the node's index")
	tokenFile := fs.String("token-file", "", "file holding the node token (default: $"+nodeTokenEnv+")")
	seed := fs.Uint64("seed", 1, "seed of the per-node profile and name draws")
	probeAgent := fs.String("probe-agent", "", "after the fleet is up, measure connect → prompt latency on this agent's prompt")
	probeRuns := fs.Int("probe-runs", 20, "probe repetitions")
	agentTokenFile := fs.String("agent-token-file", "", "file holding the agents' bearer token for the probe (default: $"+agentTokenEnv+")")
	jsonOut := fs.Bool("json", false, "print the summary as JSON")
	readyFile := fs.String("ready-file", "", "write this file once every node reported facts (and the probe finished), for scripts")
	if err := parseFlags(fs, args); err != nil {
		return err
	}

	o := nodesOptions{n: *n, duration: *duration, concurrency: *conc, prefix: *prefix, probeAgent: *probeAgent,
		probeRuns: *probeRuns, json: *jsonOut, readyFile: *readyFile}
	bases, err := gatewayBases(*gw)
	if err != nil {
		return err
	}
	for i, b := range bases {
		if host := b.Hostname(); !isLoopbackHost(host) {
			which := ""
			if len(bases) > 1 {
				which = fmt.Sprintf(" (URL %d of %d, %s)", i+1, len(bases), b)
			}
			return cli.Usagef("--gateway: host %q%s is not a loopback address; skillgate-fleet simulates nodes only against a gateway on this machine (127.0.0.0/8, ::1 or localhost), so that a load test never reaches a real deployment", host, which)
		}
	}
	switch {
	case o.n < 1 || o.n > maxNodes:
		return cli.Usagef("-n: %d is out of range (1…%d)", o.n, maxNodes)
	case o.duration < 0:
		return cli.Usagef("--duration: must not be negative (0 runs until SIGINT)")
	case o.concurrency < 1:
		return cli.Usagef("--connect-concurrency: must be at least 1")
	case o.probeRuns < 1:
		return cli.Usagef("--probe-runs: must be at least 1")
	}
	if o.probeAgent != "" {
		if err := protocol.ValidateID(o.probeAgent); err != nil {
			return cli.Usagef("--probe-agent: agent id %v", err)
		}
	}
	if err := protocol.ValidateID(o.prefix + strconv.Itoa(o.n-1)); err != nil {
		return cli.Usagef("--id-prefix: node ids would be invalid: %v", err)
	}
	if o.churn, err = parseRate("churn", *churn); err != nil {
		return err
	}
	if o.churn > float64(o.n) {
		return cli.Usagef("--churn: %s is more than the %d nodes; churn at most -n nodes per second", *churn, o.n)
	}
	if o.connectRate, err = parseRate("connect-rate", *rate); err != nil {
		return err
	}
	if o.connectRate <= 0 {
		return cli.Usagef("--connect-rate: must be positive, e.g. 2000/s")
	}
	if o.mix, err = loadMix(*mixPath, *seed); err != nil {
		return err
	}
	o.mixName = "built-in"
	if *mixPath != "" {
		o.mixName = *mixPath
	}
	if o.token, err = readToken("token-file", *tokenFile, nodeTokenEnv); err != nil {
		return err
	}
	if o.agentToken, err = readToken("agent-token-file", *agentTokenFile, agentTokenEnv); err != nil {
		return err
	}
	if o.gateways, o.localIPs, err = resolveGateways(ctx, "gateway", bases); err != nil {
		return err
	}
	lim, err := raiseFileLimit()
	if err != nil {
		fmt.Fprintf(stderr, "skillgate-fleet nodes: warning: %v\n", err)
	}
	if lim.cur > 0 && uint64(o.n)+fdReserve > lim.cur {
		return cli.Usagef("-n: %d nodes need about %d open files but RLIMIT_NOFILE is %d (hard %d); raise the hard limit (ulimit -Hn, or LimitNOFILE in systemd) or lower -n",
			o.n, o.n+fdReserve, lim.cur, lim.max)
	}

	f := newFleet(o, stderr)
	f.limit = lim
	sum, runErr := f.run(ctx)
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(sum)
	} else {
		sum.print(stdout)
	}
	return runErr
}

// resolveGateways rewrites "localhost" to a loopback IP in each base's
// WebSocket URL and decides whether to spread source addresses: on Linux
// every 127.0.0.0/8 address is local, so with every gateway on IPv4
// loopback the nodes bind 127.0.0.1…254 in turn and 10,000 connections do
// not exhaust one address's ephemeral ports. A gateway on ::1 could not
// be reached from those addresses: then the kernel chooses.
func resolveGateways(ctx context.Context, flagName string, bases []*url.URL) ([]gatewayTarget, []net.IP, error) {
	var targets []gatewayTarget
	allV4 := runtime.GOOS == "linux"
	for _, b := range bases {
		u := *b
		host := u.Hostname()
		if strings.EqualFold(host, "localhost") {
			addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
			if err != nil {
				return nil, nil, cli.Usagef("--%s: resolving localhost: %v", flagName, err)
			}
			var pick net.IP
			for _, a := range addrs {
				if !a.IP.IsLoopback() {
					return nil, nil, cli.Usagef("--%s: localhost resolves to %s, which is not loopback; give a loopback IP such as 127.0.0.1", flagName, a.IP)
				}
				if a.IP.To4() != nil && pick == nil {
					pick = a.IP
				}
			}
			if pick == nil && len(addrs) > 0 {
				pick = addrs[0].IP
			}
			if pick == nil {
				return nil, nil, cli.Usagef("--%s: localhost resolves to nothing; give a loopback IP such as 127.0.0.1", flagName)
			}
			u.Host = net.JoinHostPort(pick.String(), u.Port())
			host = pick.String()
		}
		ws := u
		ws.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
		ws.Path = u.Path + "/v1/nodes/connect"
		targets = append(targets, gatewayTarget{base: b, wsURL: ws.String()})
		if ip := net.ParseIP(host); ip == nil || ip.To4() == nil {
			allV4 = false
		}
	}
	var localIPs []net.IP
	if allV4 {
		for i := 1; i <= 254; i++ {
			localIPs = append(localIPs, net.IPv4(127, 0, 0, byte(i)).To4())
		}
	}
	return targets, localIPs, nil
}

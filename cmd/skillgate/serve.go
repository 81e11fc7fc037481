package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/internal/logging"
	"github.com/skillgate/skillgate/internal/version"
	"github.com/skillgate/skillgate/store"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate serve", stderr)
	listen := fs.String("listen", gateway.DefaultListen, "address to listen on")
	storeURL := fs.String("store", "", "skill store: a directory, or s3://BUCKET?endpoint=…&region=…")
	configPath := fs.String("config", "", "gateway config file (HuJSON); reloaded on change and on SIGHUP")
	poll := fs.Duration("poll", gateway.DefaultPoll, "storage and config polling interval")
	tlsCert := fs.String("tls-cert", "", "PEM `FILE` of the TLS certificate (and chain): serve HTTPS and WSS; re-read when it changes")
	tlsKey := fs.String("tls-key", "", "PEM `FILE` of the TLS certificate's key")
	tlsClientCA := fs.String("tls-client-ca", "", "PEM `FILE` of the CA(s) that must have signed every node's client certificate (mTLS)")
	insecure := fs.Bool("insecure", false, "allow listening beyond loopback without tokens")
	agentTokenFile := fs.String("agent-token-file", "", "file holding the admin (agent) token, instead of $"+cli.AgentTokenEnv+" (e.g. a systemd credential)")
	nodeTokenFile := fs.String("node-token-file", "", "file holding the shared node token, instead of $"+cli.NodeTokenEnv)
	clusterURL := fs.String("cluster", "", "NATS `URLS` (nats://HOST:4222, comma-separated): share the fleet with the other replicas through JetStream (gateway.cluster.url)")
	replica := fs.String("replica", "", "this replica's `NAME` in the cluster and in GET /v1/nodes (gateway.cluster.replica; default: the host name)")
	clusterSecretFile := fs.String("cluster-secret-file", "", "`FILE` holding the cluster secret that signs the replicas' records, instead of $"+clusterSecretEnv+" (gateway.cluster.secretFile; required with --cluster)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("unexpected argument %q", pos[0])
	}
	level, err := logging.ParseLevel(*logLevel)
	if err != nil {
		return cli.Usagef("--log-level: %v", err)
	}
	setGCTarget()
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// Config.Flags is keyed by the config file's names.
	for flagName, key := range map[string]string{"tls-cert": "tlsCert", "tls-key": "tlsKey", "tls-client-ca": "tlsClientCA", "cluster": "cluster.url", "replica": "cluster.replica", "cluster-secret-file": "cluster.secretFile"} {
		set[key] = set[flagName]
	}

	// The file is read once: what it says here is what the gateway starts
	// with. A flag wins over it. The settings a reload can change
	// (insecure, maxNodes) are resolved by the gateway, which knows from
	// Flags which ones the command line set.
	var file *config.File
	if *configPath != "" {
		if file, err = gateway.ReadConfigFile(*configPath); err != nil {
			return configError(err)
		}
		fsettings := file.Gateway
		*listen = cli.FlagOverFile(fs, "listen", *listen, fsettings.Listen, fsettings.Listen != "")
		*storeURL = cli.FlagOverFile(fs, "store", *storeURL, fsettings.Store, fsettings.Store != "")
		*poll = cli.FlagOverFile(fs, "poll", *poll, fsettings.Poll, fsettings.Poll != 0)
		*tlsCert = cli.FlagOverFile(fs, "tls-cert", *tlsCert, fsettings.TLSCert, fsettings.TLSCert != "")
		*tlsKey = cli.FlagOverFile(fs, "tls-key", *tlsKey, fsettings.TLSKey, fsettings.TLSKey != "")
		*tlsClientCA = cli.FlagOverFile(fs, "tls-client-ca", *tlsClientCA, fsettings.TLSClientCA, fsettings.TLSClientCA != "")
		*clusterURL = cli.FlagOverFile(fs, "cluster", *clusterURL, fsettings.Cluster.URL, fsettings.Cluster.URL != "")
		*replica = cli.FlagOverFile(fs, "replica", *replica, fsettings.Cluster.Replica, fsettings.Cluster.Replica != "")
		*clusterSecretFile = cli.FlagOverFile(fs, "cluster-secret-file", *clusterSecretFile, fsettings.Cluster.SecretFile, fsettings.Cluster.SecretFile != "")
	}
	if *replica != "" {
		if err := cluster.ValidateReplica(*replica); err != nil {
			return cli.Usagef("--replica: %v", err)
		}
	}
	var cc *cluster.Config
	if *clusterURL != "" {
		var cs config.Cluster
		if file != nil {
			cs = file.Gateway.Cluster
		}
		cc = clusterConfig(*clusterURL, cs)
	}
	if *storeURL == "" {
		return cli.Usagef("--store is required (a directory, or s3://BUCKET?endpoint=…&region=…)")
	}
	if *poll <= 0 {
		return cli.Usagef("--poll: must be positive")
	}
	switch {
	case (*tlsCert == "") != (*tlsKey == ""):
		return cli.Usagef("--tls-cert and --tls-key go together (or gateway.tlsCert and gateway.tlsKey in --config): set both, or neither")
	case *tlsClientCA != "" && *tlsCert == "":
		return cli.Usagef("--tls-client-ca needs TLS: set --tls-cert and --tls-key too")
	}
	log := logging.New(stderr, level)
	defer logging.SetDefault(log)()
	// The AWS SDK logs through the gateway's logger, not in plain text.
	st, err := store.OpenWithLogger(ctx, *storeURL, log)
	if err != nil {
		return cli.Usagef("--store: %v", err)
	}
	agentToken, err := cli.ReadTokenStrict(*agentTokenFile, cli.AgentTokenEnv, log)
	if err != nil {
		return cli.Usagef("--agent-token-file: %v", err)
	}
	nodeToken, err := cli.ReadTokenStrict(*nodeTokenFile, cli.NodeTokenEnv, log)
	if err != nil {
		return cli.Usagef("--node-token-file: %v", err)
	}
	if cc != nil {
		// From a file or the environment, never the command line. An
		// empty secret is refused by the cluster, naming where it comes
		// from.
		secret, err := cli.ReadTokenStrict(*clusterSecretFile, clusterSecretEnv, log)
		if err != nil {
			return cli.Usagef("gateway.cluster.secretFile (--cluster-secret-file): %v", err)
		}
		cc.Secret = cluster.Secret(strings.TrimSpace(secret))
	}
	srv, err := gateway.New(gateway.Config{
		Listen:      *listen,
		Store:       st,
		StoreName:   store.Redact(*storeURL),
		Version:     version.String(),
		ConfigPath:  *configPath,
		File:        file,
		Flags:       set,
		Poll:        *poll,
		TLSCert:     *tlsCert,
		TLSKey:      *tlsKey,
		TLSClientCA: *tlsClientCA,
		Insecure:    *insecure,
		Replica:     *replica,
		Cluster:     cc,
		NodeToken:   nodeToken,
		AgentToken:  agentToken,
		Logger:      log,
	})
	if err != nil {
		return cli.Usagef("%v", err)
	}
	// SIGINT and SIGTERM end ctx (see main); Run then calls srv.Close,
	// which closes every node socket with 1001 and returns once every
	// goroutine of the gateway has ended. The deferred Close covers a Run
	// that failed; Close may be called again.
	defer srv.Close()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	hupDone := make(chan struct{})
	defer close(hupDone)
	go func() {
		for {
			select {
			case <-hupDone:
				return
			case <-hup:
				log.Info("SIGHUP: reloading config", "file", *configPath)
				srv.Reload()
			}
		}
	}()
	if err := srv.Run(ctx); err != nil {
		return fmt.Errorf("%v", err)
	}
	return nil
}

// clusterSecretEnv holds the cluster secret when no file is set.
const clusterSecretEnv = "SKILLGATE_CLUSTER_SECRET"

// clusterConfig is the cluster membership of --cluster (or
// gateway.cluster.url) with the rest of gateway.cluster; credentials and
// TLS files the file leaves out come from the environment variables NATS
// clients read (NATS_CREDS, NATS_NKEY, NATS_USER and NATS_PASSWORD,
// NATS_TOKEN, NATS_CA, NATS_CERT and NATS_KEY).
func clusterConfig(url string, cs config.Cluster) *cluster.Config {
	or := func(v, env string) string {
		if v != "" {
			return v
		}
		return os.Getenv(env)
	}
	return &cluster.Config{
		URL:       url,
		Bucket:    cs.Bucket,
		TTL:       cs.TTL,       // 0: the default
		MaxRemote: cs.MaxRemote, // 0: the default
		CredsFile: or(cs.Creds, "NATS_CREDS"),
		NKeyFile:  or(cs.NKey, "NATS_NKEY"),
		User:      os.Getenv("NATS_USER"),
		Password:  os.Getenv("NATS_PASSWORD"),
		Token:     os.Getenv("NATS_TOKEN"),
		CAFile:    or(cs.CA, "NATS_CA"),
		CertFile:  or(cs.Cert, "NATS_CERT"),
		KeyFile:   or(cs.Key, "NATS_KEY"),
	}
}

// serveGCPercent is the gateway's garbage collection target when GOGC is
// not set: the heap may grow to 1.5 times what is live between two
// collections (Go's default is 2 times). Nearly all of a gateway's heap is
// long-lived (its nodes, the other replicas' nodes, the snapshot), and the
// poller's garbage at rest fills whatever room the target leaves, so the
// target is most of the memory each node costs beyond its live bytes:
// 2.2 → 1.7–1.8 KiB of RSS a remote node, for a collection twice as often
// (at rest, each few seconds' worth of polling). Prometheus makes the
// same trade (75).
const serveGCPercent = 50

// setGCTarget applies serveGCPercent unless the operator set GOGC, which
// wins as it does for any Go program.
func setGCTarget() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
}

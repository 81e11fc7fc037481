package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/skillgate/skillgate/api"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/internal/logging"
	"github.com/skillgate/skillgate/internal/version"
	"github.com/skillgate/skillgate/mcp"
	"github.com/skillgate/skillgate/skill"
)

// cmdMCP is `skillgate mcp`: the gateway's MCP server for one agent over
// stdio (for hosts that start MCP servers as subprocesses), proxying to
// the gateway's /mcp. Only MCP messages go to stdout; logs go to stderr.
func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate mcp", stderr)
	gw := fs.String("gateway", "", "gateway base URL, e.g. http://127.0.0.1:7780")
	agent := fs.String("agent", "", "the agent whose skills to serve")
	tokenFile := fs.String("token-file", "", "`FILE` holding the bearer token: the agent's own, or the admin token (default: $"+cli.AgentTokenEnv+")")
	caFile := fs.String("ca-file", "", "PEM `FILE` of the CA certificates that verify an https:// gateway (default: the system's roots)")
	logLevel := fs.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("unexpected argument %q", pos[0])
	}
	if *gw == "" {
		return cli.Usagef("--gateway is required, e.g. --gateway http://127.0.0.1:7780")
	}
	if *agent == "" {
		return cli.Usagef("--agent is required: the agent whose skills to serve")
	}
	base, err := gatewayFlag(*gw, "put the token in "+cli.AgentTokenEnv+" or --token-file")
	if err != nil {
		return err
	}
	if err := skill.ValidateID(*agent); err != nil {
		return cli.Usagef("--agent: agent id %v", err)
	}
	level, err := logging.ParseLevel(*logLevel)
	if err != nil {
		return cli.Usagef("--log-level: %v", err)
	}
	token, err := cli.ReadToken(*tokenFile, cli.AgentTokenEnv)
	if err != nil {
		return cli.Usagef("--token-file: %v", err)
	}
	tr, err := gatewayTransport(base, *caFile)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: cli.BearerTransport{Token: token, Base: tr}}
	log := logging.New(stderr, level)

	// The token first: a refused one ends here, saying so (never the token).
	if err := checkAgentToken(ctx, client, base, *agent, token != "", stderr); err != nil {
		return err
	}
	endpoint := base.String() + "/mcp?agent=" + url.QueryEscape(*agent)
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	remote, err := mcp.DialRemote(dctx, endpoint, *agent, mcp.RemoteOptions{HTTPClient: client, Name: "skillgate-mcp", Version: version.String(), Logger: log})
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "skillgate mcp: gateway %s: opening an MCP session at /mcp failed: %s\n", cli.Printable(base.String()), cli.Printable(err.Error()))
		return cli.ExitError{Code: 1}
	}
	defer remote.Close()
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go remote.Watch(wctx, 5*time.Second)
	log.Info("serving MCP over stdio", "gateway", base.String(), "agent", *agent)
	err = mcp.ServeStdio(ctx, remote, *agent, mcp.Options{Name: "skillgate", Version: version.String(), Logger: log},
		io.NopCloser(stdin), nopWriteCloser{stdout})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		log.Warn("MCP session ended", "err", err)
	}
	return nil
}

// gatewayTransport is the HTTP transport of the commands that call a
// gateway (status, mcp): the system's roots verify an https:// gateway,
// or the CA certificates of caFile (--ca-file) when it is set.
func gatewayTransport(base *url.URL, caFile string) (*http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile == "" {
		return tr, nil
	}
	if base.Scheme != "https" {
		return nil, cli.Usagef("--ca-file: the gateway %s is not https://", base)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, cli.Usagef("--ca-file: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, cli.Usagef("--ca-file: %s holds no PEM certificate", caFile)
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr, nil
}

// withCAHint adds to err, when the gateway's certificate did not verify
// and no --ca-file was given, how to name a private CA.
func withCAHint(err error, caFile string) error {
	var cv *tls.CertificateVerificationError
	if caFile == "" && errors.As(err, &cv) {
		return fmt.Errorf("%w; if the gateway's certificate is from a private CA, name the CA with --ca-file FILE", err)
	}
	return err
}

// checkAgentToken asks the gateway for the agent's block with the token:
// a refusal (401, 403), a gateway that cannot be reached or that is not
// ready is an error printed here, exit status 1.
func checkAgentToken(ctx context.Context, client *http.Client, base *url.URL, agent string, haveToken bool, stderr io.Writer) error {
	u := base.String() + "/v1/agents/" + url.PathEscape(agent) + "/prompt"
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return cli.Usagef("--gateway: %v", err)
	}
	fail := func(format string, args ...any) error {
		fmt.Fprintf(stderr, "skillgate mcp: "+format+"\n", args...)
		return cli.ExitError{Code: 1}
	}
	gwName := cli.Printable(base.String())
	resp, err := client.Do(req)
	if err != nil {
		return fail("gateway %s cannot be reached: %s (is it running? start it with skillgate serve)", gwName, cli.Printable(err.Error()))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e api.Error
	json.Unmarshal(body, &e)
	msg := cli.Printable(e.Error)
	switch {
	case resp.StatusCode == http.StatusOK:
		return nil
	case resp.StatusCode == http.StatusUnauthorized && !haveToken:
		return fail("gateway %s requires a bearer token: put the agent's token in %s or a file named by --token-file", gwName, cli.AgentTokenEnv)
	case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden:
		return fail("gateway %s refused the token for agent %s (%d %s): use the agent's own token (gateway.agentTokens) or the admin token (%s)",
			gwName, agent, resp.StatusCode, msg, cli.AgentTokenEnv)
	case resp.StatusCode == http.StatusNotFound:
		return fail("gateway %s answered 404 to %s: is --gateway the base URL of a skillgate gateway?", gwName, cli.Printable(u))
	default:
		return fail("gateway %s answered %d for agent %s: %s", gwName, resp.StatusCode, agent, msg)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

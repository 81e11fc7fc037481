package node

// TLS: a node reaches a gateway at https:// or wss:// with the system's
// roots or, with Config.CAFile, the CA certificates of that file instead;
// with Config.CertFile and KeyFile it presents a client certificate (for a
// gateway started with --tls-client-ca). A TLS failure that retrying
// cannot fix — a gateway certificate this node does not trust, or one for
// another name, or expired; the gateway refusing the node's certificate;
// TLS on one side only — ends Run with a *FatalError naming what to change.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/api"
	"github.com/skillgate/skillgate/internal/cli"
)

// The node's own FatalError codes (the gateway never sends them).
const (
	// CodeTLS is a TLS failure that retrying cannot fix.
	CodeTLS = "tls"
	// CodeForbidden is an answer 401 or 403 to the WebSocket upgrade: the
	// gateway (say, for want of a client certificate) or a proxy in front
	// of it refuses this node before its token is even read.
	CodeForbidden = "forbidden"
)

// tlsFiles are the node's TLS files. New reads them (an error is a
// *ConfigError); each dial reads them again, so that a renewed client
// certificate or CA file is used without a restart, and keeps the last
// good ones when they cannot be read.
type tlsFiles struct {
	caFile, certFile, keyFile string
	log                       *slog.Logger

	mu      sync.Mutex // config runs for dials and for the probes of moving back
	last    *tls.Config
	lastErr string // the error last logged
}

// load reads the files into a client config: TLS 1.2 at least, Go's
// default cipher suites.
func (f *tlsFiles) load() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, &ConfigError{"caFile", err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &ConfigError{"caFile", fmt.Errorf("%s holds no PEM certificate", f.caFile)}
		}
		cfg.RootCAs = pool // instead of the system's roots
	}
	if f.certFile != "" {
		pair, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
		if err != nil {
			return nil, &ConfigError{"cert", fmt.Errorf("certificate %s and key %s: %w", f.certFile, f.keyFile, err)}
		}
		// Sent whatever CAs the gateway names as acceptable, so that a
		// certificate of the wrong CA is refused as such (crypto/tls
		// would send none, and the gateway would say none was sent).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return cfg, nil
}

// config returns the TLS config for a dial.
func (f *tlsFiles) config() *tls.Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg, err := f.load()
	if err != nil {
		if err.Error() != f.lastErr {
			f.log.Error("cannot read the TLS files again; using the ones read before", "err", err.Error())
			f.lastErr = err.Error()
		}
		return f.last
	}
	f.last, f.lastErr = cfg, ""
	return cfg
}

// checkTLS checks the TLS settings of c against its gateway URL.
func (c Config) checkTLS() error {
	switch {
	case c.CertFile != "" && c.KeyFile == "":
		return &ConfigError{"key", errors.New("is required with --cert (the client certificate's private key)")}
	case c.KeyFile != "" && c.CertFile == "":
		return &ConfigError{"cert", errors.New("is required with --key (the client certificate)")}
	}
	u, err := cli.ParseGateway(c.Gateway)
	if err != nil || u.Scheme == "https" {
		return nil // a bad URL is reported as such
	}
	for _, f := range []struct{ field, val string }{{"caFile", c.CAFile}, {"cert", c.CertFile}} {
		if f.val != "" {
			return &ConfigError{f.field, fmt.Errorf("%s is set, but the gateway URL %s is not https:// or wss://: use the gateway's https:// URL", f.val, c.Gateway)}
		}
	}
	return nil
}

// tlsFatal returns the final error for a failed dial that retrying would
// not fix: a TLS verification failure either way, a TLS handshake with a
// gateway that does not speak TLS (or the reverse), or an upgrade answered
// 401 or 403. gw is the URL dialed. It returns nil for any other error.
func (c *Client) tlsFatal(gw string, err error, resp *http.Response) *FatalError {
	fatal := func(format string, args ...any) *FatalError {
		return &FatalError{Code: CodeTLS, Message: fmt.Sprintf(format, args...)}
	}
	if resp != nil {
		switch body := upgradeError(resp); {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return &FatalError{Code: CodeForbidden, Message: fmt.Sprintf("%s answered the upgrade with %d: %s", gw, resp.StatusCode, body)}
		case resp.StatusCode == http.StatusBadRequest && strings.Contains(body, "HTTP request to an HTTPS server"):
			return fatal("%s speaks TLS: use https:// (or wss://) in --gateway", gw)
		}
		return nil
	}
	if cve, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		var (
			unknown  x509.UnknownAuthorityError
			hostname x509.HostnameError
			invalid  x509.CertificateInvalidError
		)
		switch {
		case errors.As(cve.Err, &unknown) && c.cfg.CAFile == "":
			return fatal("the gateway's TLS certificate is not signed by an authority this host trusts (%v): give the node the CA certificate that signed it with --ca-file FILE", cve.Err)
		case errors.As(cve.Err, &unknown):
			return fatal("the gateway's TLS certificate is not signed by a CA in --ca-file %s (%v): point --ca-file at the CA that signed the gateway's certificate (--tls-cert)", c.cfg.CAFile, cve.Err)
		case errors.As(cve.Err, &hostname):
			return fatal("the gateway's TLS certificate is not valid for the name in --gateway, %s; it is for %s (%v): use a --gateway URL with a name the certificate holds, or reissue the certificate with this name",
				hostname.Host, certNames(hostname.Certificate), cve.Err)
		case errors.As(cve.Err, &invalid) && invalid.Reason == x509.Expired:
			return fatal("the gateway's TLS certificate has expired or is not valid yet (%v): renew it on the gateway (--tls-cert; it is re-read without a restart), or check this host's clock", cve.Err)
		}
		return fatal("the gateway's TLS certificate cannot be verified (%v): check --ca-file and the gateway's certificate", cve.Err)
	}
	// net/http turns a plain HTTP answer to the handshake into an error of
	// its own, known only by its text.
	if rhe, ok := errors.AsType[tls.RecordHeaderError](err); (ok && rhe.Conn != nil) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return fatal("%s does not speak TLS: use http:// (or ws://) in --gateway for a gateway without --tls-cert, or check the port", gw)
	}
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "remote error" && certAlert(oe.Err) {
		if c.cfg.CertFile == "" {
			return fatal("the gateway refused the TLS handshake (%v): it requires a client certificate; set --cert FILE and --key FILE", oe.Err)
		}
		return fatal("the gateway refused this node's TLS client certificate %s (%v): it must be signed by the gateway's client CA (--tls-client-ca), be valid now, and allow client authentication", c.cfg.CertFile, oe.Err)
	}
	return nil
}

// certNames lists the names a certificate is for.
func certNames(c *x509.Certificate) string {
	var names []string
	if c != nil {
		names = append(names, c.DNSNames...)
		for _, ip := range c.IPAddresses {
			names = append(names, ip.String())
		}
	}
	if len(names) == 0 {
		return "no name"
	}
	return clip(strings.Join(names, ", "))
}

// certAlert reports whether a TLS alert from the gateway refuses this
// node's certificate (or its lack of one).
func certAlert(alert error) bool {
	switch strings.TrimPrefix(alert.Error(), "tls: ") {
	case "bad certificate", "unsupported certificate", "revoked certificate", "expired certificate",
		"unknown certificate", "unknown certificate authority", "access denied", "certificate required":
		return true
	}
	return false
}

// upgradeError is the error message of an upgrade's answer: the "error"
// of the gateway's JSON, else the start of the body.
func upgradeError(resp *http.Response) string {
	if resp.Body == nil {
		return http.StatusText(resp.StatusCode)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024)) // the library kept at most 1 KiB
	var e api.Error
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return clip(e.Error)
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return clip(s)
	}
	return http.StatusText(resp.StatusCode)
}

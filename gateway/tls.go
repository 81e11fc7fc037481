package gateway

// TLS: with Config.TLSCert and TLSKey the gateway serves HTTPS and WSS on
// its one listener. The certificate and key are re-read when their
// content changes, so that a renewed certificate is served without a
// restart; with Config.TLSClientCA, nodes must also present a client
// certificate signed by it (mTLS), besides their token. The API is
// unaffected: its clients authenticate with bearer tokens and need no
// certificate.

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// TLSCheckEvery is how often, at most, the TLS files are read again to see
// whether they changed: on the first handshake after it has passed, so an
// idle gateway reads nothing.
const TLSCheckEvery = time.Second

// watchedFiles are files read together and parsed into a T, read again
// at most every TLSCheckEvery and parsed again when their content changed.
// A new content that cannot be used leaves the old value in force and is
// logged as an error, once.
type watchedFiles[T any] struct {
	what     string // "TLS certificate", "TLS client CA", for logs
	paths    []string
	parse    func([][]byte) (T, error)
	describe func(T) []any // log attributes of a loaded value
	// reloadCheck, when set, refuses a changed value that parses but must
	// not replace the one in force (old): a certificate outside its
	// validity, or for other names.
	reloadCheck func(old, cur T) error
	log         *slog.Logger
	every       time.Duration

	mu      sync.Mutex
	next    time.Time // no read before
	data    [][]byte  // the content in force
	val     T
	lastErr string // the error last logged, "" after a good load
}

func newWatchedFiles[T any](what string, paths []string, parse func([][]byte) (T, error), describe func(T) []any, log *slog.Logger) (*watchedFiles[T], error) {
	w := &watchedFiles[T]{what: what, paths: paths, parse: parse, describe: describe, log: log, every: TLSCheckEvery}
	data, err := readFiles(paths)
	if err != nil {
		return nil, err
	}
	if w.val, err = parse(data); err != nil {
		return nil, err
	}
	w.data, w.next = data, time.Now().Add(w.every)
	return w, nil
}

// maxTLSFile bounds a certificate, key or CA file read (a CA bundle of
// hundreds of certificates is well under it).
const maxTLSFile = 1 << 20

func readFiles(paths []string) ([][]byte, error) {
	data := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := readTLSFile(p)
		if err != nil {
			return nil, err
		}
		data[i] = b
	}
	return data, nil
}

// readTLSFile reads a regular file of at most maxTLSFile bytes: a named
// pipe would block every handshake behind it.
func readTLSFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTLSFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxTLSFile {
		return nil, fmt.Errorf("%s is over the 1 MiB limit of a TLS file", path)
	}
	return b, nil
}

// get returns the value in force, after reading the files again if the
// last read is older than every.
func (w *watchedFiles[T]) get() T {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if now.Before(w.next) {
		return w.val
	}
	w.next = now.Add(w.every)
	data, err := readFiles(w.paths)
	if err == nil && equalContent(data, w.data) {
		return w.val
	}
	var v T
	if err == nil {
		v, err = w.parse(data)
	}
	if err == nil && w.reloadCheck != nil {
		err = w.reloadCheck(w.val, v)
	}
	if err != nil {
		// A rotation that writes the files one after the other is seen
		// half done at most once; a bad pair is logged once, not on
		// every handshake.
		if err.Error() != w.lastErr {
			w.log.Error(w.what+" changed but cannot be used; the previous one stays in force",
				"files", w.paths, "err", err.Error())
			w.lastErr = err.Error()
		}
		return w.val
	}
	w.data, w.val, w.lastErr = data, v, ""
	w.log.Info(w.what+" reloaded", append([]any{"files", w.paths}, w.describe(v)...)...)
	return v
}

func equalContent(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// tlsState is the gateway's TLS: the certificate in force and, for mTLS,
// the client CA in force.
type tlsState struct {
	cert *watchedFiles[*tls.Certificate]
	ca   *watchedFiles[*x509.CertPool] // nil without a client CA

	mu     sync.Mutex     // guards the two fields below
	pool   *x509.CertPool // the pool caConf was made for
	caConf *tls.Config    // the handshake config for pool
}

// newTLSState reads the TLS files of cfg; it returns nil without TLS.
// Errors name the files.
func newTLSState(cfg *Config) (*tlsState, error) {
	switch {
	case cfg.TLSCert == "" && cfg.TLSKey == "" && cfg.TLSClientCA == "":
		return nil, nil
	case cfg.TLSCert == "" && cfg.TLSKey == "":
		return nil, errors.New("a TLS client CA (--tls-client-ca or gateway.tlsClientCA) needs TLS: set a certificate and key too (--tls-cert and --tls-key, or gateway.tlsCert and gateway.tlsKey)")
	case cfg.TLSCert == "" || cfg.TLSKey == "":
		return nil, errors.New("TLS needs both a certificate and its key (--tls-cert and --tls-key, or gateway.tlsCert and gateway.tlsKey)")
	}
	t := &tlsState{}
	var err error
	t.cert, err = newWatchedFiles("TLS certificate", []string{cfg.TLSCert, cfg.TLSKey}, parseKeyPair, describeCert, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %w", cfg.TLSCert, cfg.TLSKey, err)
	}
	t.cert.reloadCheck = checkRenewal
	if leaf := t.cert.val.Leaf; time.Now().After(leaf.NotAfter) {
		cfg.Logger.Warn("the TLS certificate has expired; nodes will refuse it", "file", cfg.TLSCert, "not_after", leaf.NotAfter)
	}
	if cfg.TLSClientCA != "" {
		t.ca, err = newWatchedFiles("TLS client CA", []string{cfg.TLSClientCA}, parseCAPool, func(*x509.CertPool) []any { return nil }, cfg.Logger)
		if err != nil {
			return nil, fmt.Errorf("TLS client CA %s: %w", cfg.TLSClientCA, err)
		}
	}
	return t, nil
}

// checkRenewal refuses a renewed certificate that nodes would refuse, so
// that the certificate in force stays: one not valid now (expired, not yet
// valid: a clock or a renewal gone wrong), or one that does not cover
// every name (DNS name or IP address) of the certificate in force, since
// every node that reconnects under such a name would exit on it.
func checkRenewal(old, cur *tls.Certificate) error {
	if now := time.Now(); now.Before(cur.Leaf.NotBefore) || now.After(cur.Leaf.NotAfter) {
		return fmt.Errorf("the new certificate is valid only from %s to %s", cur.Leaf.NotBefore.Format(time.RFC3339), cur.Leaf.NotAfter.Format(time.RFC3339))
	}
	var missing []string
	names := slices.Clone(old.Leaf.DNSNames)
	for _, ip := range old.Leaf.IPAddresses {
		names = append(names, ip.String())
	}
	for _, n := range names {
		if cur.Leaf.VerifyHostname(n) != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the new certificate does not cover %s, a name of the certificate in force (its names: %s); nodes connecting by it would refuse the gateway",
			strings.Join(missing, ", "), strings.Join(append(slices.Clone(cur.Leaf.DNSNames), ipStrings(cur.Leaf.IPAddresses)...), ", "))
	}
	return nil
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}

func parseKeyPair(data [][]byte) (*tls.Certificate, error) {
	c, err := tls.X509KeyPair(data[0], data[1])
	if err != nil {
		return nil, err
	}
	if c.Leaf == nil { // set by X509KeyPair unless GODEBUG=x509keypairleaf=0
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

func describeCert(c *tls.Certificate) []any {
	return []any{"serial", c.Leaf.SerialNumber.String(), "dns_names", c.Leaf.DNSNames, "not_after", c.Leaf.NotAfter}
}

func parseCAPool(data [][]byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data[0]) {
		return nil, errors.New("no PEM certificate in it")
	}
	return pool, nil
}

// config is the listener's TLS config: TLS 1.2 at least, Go's default
// cipher suites, the certificate in force at each handshake and, with a
// client CA, client certificates verified when given (the connect
// handler refuses a node without one; see guardNodeCerts).
func (t *tlsState) config() *tls.Config {
	c := &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"}, // what http.Server.ServeTLS offers
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return t.cert.get(), nil
		},
	}
	if t.ca != nil {
		c.ClientAuth = tls.VerifyClientCertIfGiven
		c.ClientCAs = t.ca.val
		base := c.Clone()
		c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return t.configFor(base), nil
		}
	}
	return c
}

// configFor returns base with the client CA in force.
func (t *tlsState) configFor(base *tls.Config) *tls.Config {
	pool := t.ca.get()
	t.mu.Lock()
	defer t.mu.Unlock()
	if pool != t.pool {
		t.pool, t.caConf = pool, base.Clone()
		t.caConf.ClientCAs = pool
	}
	return t.caConf
}

// nodeCertRequired is the error message of a node upgrade refused for
// want of a verified client certificate.
const nodeCertRequired = "this gateway requires nodes to present a TLS client certificate signed by its client CA (--tls-client-ca): start skillgate-node with --cert FILE --key FILE"

// guardNodeCerts refuses, with a client CA, a node connection (or any WebSocket
// upgrade) that did not present a client certificate verified against it.
// The TLS layer only verifies certificates that are given, so that API
// clients, which authenticate with tokens, need none.
func (s *Server) guardNodeCerts(h http.Handler) http.Handler {
	if s.tls == nil || s.tls.ca == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upgrade := r.URL.Path == "/v1/nodes/connect" || strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		if upgrade && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
			s.metrics.frames.WithLabelValues("upgrade", "no_client_cert").Inc()
			s.log.Warn("node refused: no TLS client certificate", "remote", r.RemoteAddr)
			writeError(w, http.StatusForbidden, nodeCertRequired)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// serveHTTP serves hs on ln: over TLS when it is configured.
func (s *Server) serveHTTP(hs *http.Server, ln net.Listener) error {
	if s.tls == nil {
		return hs.Serve(ln)
	}
	hs.TLSConfig = s.tls.config()
	hs.Handler = s.guardNodeCerts(hs.Handler)
	return hs.ServeTLS(ln, "", "")
}

// cleartextExposed reports whether a gateway listening on addr sends
// tokens in clear text over more than the loopback interface: it listens
// beyond loopback and does not terminate TLS itself.
func cleartextExposed(addr string, tlsOn bool) bool {
	return !tlsOn && !isLoopback(addr)
}

// warnCleartext logs, at start, that tokens travel in clear text when the
// gateway listens beyond loopback without TLS.
func (s *Server) warnCleartext(addr string) {
	if cleartextExposed(addr, s.tls != nil) {
		s.log.Warn("listening beyond loopback without TLS: node and agent tokens travel in clear text unless TLS is terminated in front of the gateway (or set --tls-cert and --tls-key)",
			"addr", addr, "tls", false)
	}
}

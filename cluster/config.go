package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// validBucket is the rule of JetStream bucket names.
var validBucket = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// withDefaults fills in Bucket and TTL.
func (c Config) withDefaults() Config {
	if c.Bucket == "" {
		c.Bucket = DefaultBucket
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.MaxRemote == 0 {
		c.MaxRemote = DefaultMaxRemote
	}
	return c
}

// SecretSetting names where the cluster secret comes from, for errors.
const SecretSetting = "gateway.cluster.secretFile (--cluster-secret-file) or SKILLGATE_CLUSTER_SECRET"

// natsOptions validates c (defaults applied) and returns the options of
// its NATS connection, less the handlers. Errors name the setting
// (gateway.cluster.*) and never quote a secret.
func (c Config) natsOptions() ([]nats.Option, error) {
	if err := validateURLs(c.URL); err != nil {
		return nil, fmt.Errorf("gateway.cluster.url: %w", err)
	}
	if err := ValidateReplica(c.Replica); err != nil {
		return nil, fmt.Errorf("gateway.cluster.replica: %w", err)
	}
	if !validBucket.MatchString(c.Bucket) {
		return nil, fmt.Errorf("gateway.cluster.bucket: %q: only letters, digits, - and _ are allowed", c.Bucket)
	}
	if c.TTL < MinTTL {
		return nil, fmt.Errorf("gateway.cluster.ttl: %v is shorter than the minimum %v", c.TTL, MinTTL)
	}
	if c.MaxRemote < 1 || c.MaxRemote > MaxRemoteLimit {
		return nil, fmt.Errorf("gateway.cluster.maxRemoteNodes: %d is not from 1 to %d", c.MaxRemote, MaxRemoteLimit)
	}
	switch {
	case len(c.Secret) == 0:
		return nil, fmt.Errorf("%s: no cluster secret: every replica needs the same secret of at least %d bytes, to sign its records and refuse everyone else's (e.g. openssl rand -base64 32 > /etc/skillgate/cluster-secret; chmod 600 it)", SecretSetting, MinSecretBytes)
	case len(c.Secret) < MinSecretBytes:
		return nil, fmt.Errorf("%s: the cluster secret is %d bytes, fewer than %d (e.g. openssl rand -base64 32)", SecretSetting, len(c.Secret), MinSecretBytes)
	}
	opts := []nats.Option{
		nats.Name("skillgate " + c.Replica),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.ReconnectJitter(500*time.Millisecond, time.Second),
		// A dead link is noticed within about three TTLs; remote records
		// expire after one TTL anyway.
		nats.PingInterval(c.TTL),
		nats.MaxPingsOutstanding(2),
	}

	var auth []string
	for _, s := range []struct{ name, v string }{
		{"gateway.cluster.creds (NATS_CREDS)", c.CredsFile}, {"gateway.cluster.nkey (NATS_NKEY)", c.NKeyFile}, {"NATS_USER", c.User}, {"NATS_TOKEN", c.Token},
	} {
		if s.v != "" {
			auth = append(auth, s.name)
		}
	}
	if len(auth) > 1 {
		return nil, fmt.Errorf("gateway.cluster: %s are alternative ways to log in to NATS; set one", strings.Join(auth, " and "))
	}
	switch {
	case c.Password != "" && c.User == "":
		return nil, errors.New("NATS_PASSWORD: is set without NATS_USER")
	case c.User != "" && c.Password == "":
		return nil, errors.New("NATS_USER: is set without NATS_PASSWORD")
	case c.CredsFile != "":
		if err := checkCreds(c.CredsFile); err != nil {
			return nil, fmt.Errorf("gateway.cluster.creds (NATS_CREDS): %w", err)
		}
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	case c.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(c.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("gateway.cluster.nkey (NATS_NKEY): %w", err)
		}
		opts = append(opts, o)
	case c.User != "":
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	case c.Token != "":
		opts = append(opts, nats.Token(c.Token))
	}

	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("gateway.cluster.ca (NATS_CA): %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("gateway.cluster.ca (NATS_CA): %s: no PEM certificate found", c.CAFile)
		}
		opts = append(opts, nats.RootCAs(c.CAFile))
	}
	switch {
	case c.CertFile != "" && c.KeyFile == "":
		return nil, errors.New("gateway.cluster.key (NATS_KEY): is needed with the certificate")
	case c.KeyFile != "" && c.CertFile == "":
		return nil, errors.New("gateway.cluster.cert (NATS_CERT): is needed with the key")
	case c.CertFile != "":
		if _, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile); err != nil {
			return nil, fmt.Errorf("gateway.cluster.cert and key (NATS_CERT, NATS_KEY): %w", err)
		}
		opts = append(opts, nats.ClientCert(c.CertFile, c.KeyFile))
	}
	return opts, nil
}

// checkCreds reads a creds file as the NATS client will at every connect
// (which would only log its error, again and again): it must hold a user
// nkey seed. Errors name the file, never its contents.
func checkCreds(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	defer clear(b)
	kp, err := nkeys.ParseDecoratedUserNKey(b)
	if err != nil {
		return fmt.Errorf("%s: no user nkey seed found (expected a creds file with a JWT and a seed)", path)
	}
	kp.Wipe()
	return nil
}

// validateURLs checks a comma-separated list of NATS server URLs as the
// client reads them (a missing scheme is nats://).
func validateURLs(list string) error {
	if strings.TrimSpace(list) == "" {
		return errors.New("is empty (expected e.g. nats://127.0.0.1:4222)")
	}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return fmt.Errorf("%q has an empty entry", redactURLs(list))
		}
		raw := s
		if !strings.Contains(s, "://") {
			raw = "nats://" + s
		}
		// url.Parse's error quotes the URL, password included: say it
		// in our words.
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("%q is not a URL", redactURL(s))
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Errorf("%q: scheme %q is not nats, tls, ws or wss", redactURL(s), u.Scheme)
		}
		if u.Hostname() == "" {
			return fmt.Errorf("%q has no host", redactURL(s))
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("%q: port %q is not a number from 1 to 65535", redactURL(s), p)
			}
		}
	}
	return nil
}

// redactURLs replaces the user information (user:password@ or token@) of
// each URL of a comma-separated list with "redacted@", for logs and
// State.
func redactURLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		parts[i] = redactURL(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}

func redactURL(s string) string {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	start := 0
	if i := strings.Index(s, "://"); i >= 0 && i < at {
		start = i + 3
	}
	return s[:start] + "redacted@" + s[at+1:]
}

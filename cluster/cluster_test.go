package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct{ id, key string }{
		{"web-1", "web-1"},
		{"host_2.example.com", "host_2.example.com"},
		{"A.b.C", "A.b.C"},
		{".lead", "=LmxlYWQ"},
		{"trail.", "=dHJhaWwu"},
		{"a..b", "=YS4uYg"},
		{"with space", "=d2l0aCBzcGFjZQ"},
		{"a=b", "=YT1i"},
		{"=x", "=PXg"},
		{"ünï", "=w7xuw68"},
		{"a*b", "=YSpi"},
		{"a>b", "=YT5i"},
		{"", "="},
	} {
		if got := Key(tc.id); got != tc.key {
			t.Errorf("Key(%q) = %q, want %q", tc.id, got, tc.key)
		}
		if tc.id == "" {
			continue
		}
		if id, ok := idOfKey(tc.key); !ok || id != tc.id {
			t.Errorf("idOfKey(%q) = %q, %v; want %q", tc.key, id, ok, tc.id)
		}
	}
	for _, key := range []string{"", ".x", "=!!", "=LmxlYWQ=", "=d2ViLTE" /* web-1: plain, not base64 */, "a b"} {
		if id, ok := idOfKey(key); ok {
			t.Errorf("idOfKey(%q) = %q, true; want false (Key never makes it)", key, id)
		}
	}
}

func TestNewer(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tc := range []struct {
		name string
		a, b Record
		want bool
	}{
		{"later connection", Record{ConnectedAt: t0.Add(time.Nanosecond), Replica: "a"}, Record{ConnectedAt: t0, Replica: "b"}, true},
		{"earlier connection", Record{ConnectedAt: t0, Replica: "b"}, Record{ConnectedAt: t0.Add(time.Nanosecond), Replica: "a"}, false},
		{"tie, greater replica", Record{ConnectedAt: t0, Replica: "b"}, Record{ConnectedAt: t0, Replica: "a"}, true},
		{"tie, smaller replica", Record{ConnectedAt: t0, Replica: "a"}, Record{ConnectedAt: t0, Replica: "b"}, false},
		{"same", Record{ConnectedAt: t0, Replica: "a"}, Record{ConnectedAt: t0, Replica: "a"}, false},
		{"same instant, other zone", Record{ConnectedAt: t0.In(time.FixedZone("x", 3600)), Replica: "a"}, Record{ConnectedAt: t0, Replica: "a"}, false},
	} {
		if got := Newer(&tc.a, &tc.b); got != tc.want {
			t.Errorf("%s: Newer = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRecordValidate(t *testing.T) {
	ok := *as(testRecord("n1", time.Now()), "r1")
	for _, tc := range []struct {
		name string
		edit func(*Record)
		err  string
	}{
		{"valid", func(*Record) {}, ""},
		{"no facts yet", func(r *Record) { r.FactsAt = nil }, ""},
		{"bad id", func(r *Record) { r.ID = "a/b" }, `id: "a/b" contains a slash or backslash`},
		{"no roles", func(r *Record) { r.Roles = nil }, "roles: is empty"},
		{"no replica", func(r *Record) { r.Replica = "" }, "replica: is empty"},
		{"bad replica", func(r *Record) { r.Replica = "a b" }, `replica: "a b": only letters`},
		{"no connectedAt", func(r *Record) { r.ConnectedAt = time.Time{} }, "connectedAt: is missing"},
	} {
		r := ok
		tc.edit(&r)
		err := r.Validate()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestDecodeRecord(t *testing.T) {
	good := as(testRecord("n1", time.Now()), "r1")
	enc := func(r *Record) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	invalid := *good
	invalid.OS = ""
	spaced := *as(testRecord("n 1", time.Now()), "r1")
	for _, tc := range []struct {
		name, key, value, err string
	}{
		{"valid", "n1", enc(good), ""},
		{"valid, encoded key", "=biAx", enc(&spaced), ""},
		{"oversized", "n1", `{"id":"n1","env":["` + strings.Repeat("x", MaxRecordBytes) + `"]}`, "bytes, more than 1048576"},
		{"not json", "n1", "{nope", "not a record: invalid character"},
		{"json, not an object", "n1", `[1,2]`, "not a record: json: cannot unmarshal array"},
		{"null", "n1", `null`, "invalid record: id: is empty"},
		{"trailing data", "n1", enc(good) + "x", "not a record: invalid character 'x' after top-level value"},
		{"invalid facts", "n1", enc(&invalid), "invalid record: os: is empty"},
		{"key of another id", "n2", enc(good), `the record of node "n1" belongs under key "n1"`},
		{"plain key of an encoded id", "n 1", enc(&spaced), `the record of node "n 1" belongs under key "=biAx"`},
	} {
		rec, err := decodeRecord(tc.key, []byte(tc.value))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error = %v, want one containing %q", tc.name, err, tc.err)
		case tc.err != "" && rec != nil:
			t.Errorf("%s: a refused record was returned", tc.name)
		}
	}
	rec, err := decodeRecord("n1", []byte(enc(good)))
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "decoded", rec, good)
}

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://u:p@h:4222", "nats://redacted@h:4222"},
		{"tls://token@h", "tls://redacted@h"},
		{"u:p@h:4222", "redacted@h:4222"},
		{"nats://u:p@a:1, nats://b:2,nats://x:y@c:3", "nats://redacted@a:1,nats://b:2,nats://redacted@c:3"},
		{"nats://u:p@ss@h", "nats://redacted@h"},
	} {
		if got := redactURLs(tc.in); got != tc.want {
			t.Errorf("redactURLs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestJoinConfigErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	base := Config{URL: "nats://127.0.0.1:1", Replica: "r1"}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		err  string
	}{
		{"no url", func(c *Config) { c.URL = " " }, "gateway.cluster.url: is empty"},
		{"http url", func(c *Config) { c.URL = "http://h:1" }, `gateway.cluster.url: "http://h:1": scheme "http" is not nats`},
		{"bad port, password hidden", func(c *Config) { c.URL = "nats://u:secret@h:99999" }, `gateway.cluster.url: "nats://redacted@h:99999": port "99999"`},
		{"not a url, password hidden", func(c *Config) { c.URL = "nats://u:secret@h:1/%zz" }, `gateway.cluster.url: "nats://redacted@h:1/%zz" is not a URL`},
		{"empty entry", func(c *Config) { c.URL = "nats://h:1,,nats://h:2" }, "gateway.cluster.url: "},
		{"no host", func(c *Config) { c.URL = "nats://:4222" }, `has no host`},
		{"no replica", func(c *Config) { c.Replica = "" }, "gateway.cluster.replica: is empty"},
		{"bad replica", func(c *Config) { c.Replica = "r 1" }, `gateway.cluster.replica: "r 1": only letters`},
		{"bad bucket", func(c *Config) { c.Bucket = "a.b" }, `gateway.cluster.bucket: "a.b"`},
		{"short ttl", func(c *Config) { c.TTL = 500 * time.Millisecond }, "gateway.cluster.ttl: 500ms is shorter than the minimum 1s"},
		{"negative ttl", func(c *Config) { c.TTL = -time.Second }, "gateway.cluster.ttl: -1s is shorter"},
		{"creds unreadable", func(c *Config) { c.CredsFile = missing }, "gateway.cluster.creds (NATS_CREDS): open " + missing},
		{"creds without seed", func(c *Config) { c.CredsFile = notPEM }, "gateway.cluster.creds (NATS_CREDS): " + notPEM + ": no user nkey seed found"},
		{"nkey unreadable", func(c *Config) { c.NKeyFile = missing }, "gateway.cluster.nkey (NATS_NKEY): "},
		{"ca unreadable", func(c *Config) { c.CAFile = missing }, "gateway.cluster.ca (NATS_CA): open " + missing},
		{"ca not pem", func(c *Config) { c.CAFile = notPEM }, "gateway.cluster.ca (NATS_CA): " + notPEM + ": no PEM certificate found"},
		{"cert without key", func(c *Config) { c.CertFile = notPEM }, "gateway.cluster.key (NATS_KEY): is needed with the certificate"},
		{"key without cert", func(c *Config) { c.KeyFile = notPEM }, "gateway.cluster.cert (NATS_CERT): is needed with the key"},
		{"cert unreadable", func(c *Config) { c.CertFile, c.KeyFile = missing, missing }, "gateway.cluster.cert and key (NATS_CERT, NATS_KEY): open " + missing},
		{"password without user", func(c *Config) { c.Password = "secret" }, "NATS_PASSWORD: is set without NATS_USER"},
		{"user without password", func(c *Config) { c.User = "u" }, "NATS_USER: is set without NATS_PASSWORD"},
		{"two ways", func(c *Config) { c.User, c.Password, c.Token = "u", "secret", "secret" }, "gateway.cluster: NATS_USER and NATS_TOKEN are alternative ways to log in to NATS; set one"},
	} {
		cfg := base
		tc.edit(&cfg)
		m, err := Join(cfg, newRecorder())
		if err == nil {
			m.Close(t.Context())
			t.Errorf("%s: Join succeeded", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.err) && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error = %q, want %q", tc.name, err, tc.err)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error %q shows a secret", tc.name, err)
		}
	}
	if _, err := Join(base, nil); err == nil {
		t.Error("Join with a nil Handler succeeded")
	}
}

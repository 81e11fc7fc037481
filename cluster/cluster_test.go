package cluster

import (
	"encoding/json"
	"fmt"
	"log/slog"
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
		{"too many roles", func(r *Record) {
			r.Roles = []string{"execution", "execution", "execution", "execution", "execution", "execution", "execution", "execution", "execution"}
		}, "roles: 9 entries, more than 8"},
		{"connectedAt in a minute", func(r *Record) { r.ConnectedAt = time.Now().Add(time.Minute) }, "connectedAt: time out of range: "},
		{"connectedAt a second ahead", func(r *Record) { r.ConnectedAt = time.Now().Add(time.Second) }, ""},
		{"connectedAt before 1970", func(r *Record) { r.ConnectedAt = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC) }, "connectedAt: time out of range: "},
		{"connectedAt in year 10000", func(r *Record) {
			r.ConnectedAt = time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("x", -(23*3600+59*60)))
		}, "connectedAt: time out of range: "},
		{"factsAt in 2099", func(r *Record) { t := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC); r.FactsAt = &t }, "factsAt: time out of range: "},
	} {
		r := ok
		tc.edit(&r)
		err := r.Validate(time.Now(), 10*time.Second)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestDecodeRecord(t *testing.T) {
	good := as(testRecord("n1", time.Now()), "r1")
	enc := func(r *Record) string { return string(encodeRecord(t, r)) }
	invalid := *good
	invalid.OS = ""
	spaced := *as(testRecord("n 1", time.Now()), "r1")
	future := *as(testRecord("n1", time.Now().Add(time.Hour)), "r1")
	for _, tc := range []struct {
		name, key, value, reason, err string
	}{
		{"valid", "n1", enc(good), "", ""},
		{"valid, encoded key", "=biAx", enc(&spaced), "", ""},
		{"not json", "n1", "{nope", RefusedInvalid, "not a record: invalid character"},
		{"json, not an object", "n1", `[1,2]`, RefusedInvalid, "not a record: json: cannot unmarshal array"},
		{"null", "n1", `null`, RefusedInvalid, "invalid record: id: is empty"},
		{"trailing data", "n1", enc(good) + "x", RefusedInvalid, "not a record: invalid character 'x' after top-level value"},
		{"invalid facts", "n1", enc(&invalid), RefusedInvalid, "invalid record: os: is empty"},
		{"key of another id", "n2", enc(good), RefusedInvalid, `the record of node "n1" belongs under key "n1"`},
		{"plain key of an encoded id", "n 1", enc(&spaced), RefusedInvalid, `the record of node "n 1" belongs under key "=biAx"`},
		{"connected in an hour", "n1", enc(&future), RefusedTime, "invalid record: connectedAt: time out of range"},
		{"connected in year 10000", "n1", strings.Replace(enc(good), `"connectedAt":"`, `"connectedAt":"9999-12-31T23:59:59-23:59","x":"`, 1), RefusedTime, "invalid record: connectedAt: time out of range"},
	} {
		rec, reason, err := decodeRecord(tc.key, []byte(tc.value), time.Now(), 10*time.Second)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error = %v, want one containing %q", tc.name, err, tc.err)
		case reason != tc.reason:
			t.Errorf("%s: reason %q, want %q", tc.name, reason, tc.reason)
		case tc.err != "" && rec != nil:
			t.Errorf("%s: a refused record was returned", tc.name)
		}
	}
	rec, _, err := decodeRecord("n1", encodeRecord(t, good), time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "decoded", rec, good)
}

// TestSeal: a record signed under a key opens under that key with the
// same secret and bucket, within its time window; anything else is
// refused with its reason.
func TestSeal(t *testing.T) {
	s := &sealer{secret: testSecret, bucket: "b"}
	h := s.newHash()
	body := encodeRecord(t, as(testRecord("n1", time.Now()), "r1"))
	now := time.Now()
	const ttl = 10 * time.Second
	v := s.seal(h, "n1", body, now)
	if !strings.HasPrefix(string(v), "sg2 ") || !strings.HasSuffix(string(v), "\n"+string(body)) || len(v)-len(body) > sealOverhead {
		t.Fatalf("sealed: %q", v)
	}
	got, reason, err := s.unseal(h, "n1", v, now, ttl)
	if err != nil || reason != "" || string(got) != string(body) {
		t.Fatalf("unseal = %q, %q, %v", got, reason, err)
	}
	flip := func(b []byte, i int) []byte { c := append([]byte(nil), b...); c[i] ^= 1; return c }
	other := &sealer{secret: Secret("another cluster's secret, 32 bytes or more"), bucket: "b"}
	otherBucket := &sealer{secret: testSecret, bucket: "c"}
	for _, tc := range []struct {
		name, key string
		value     []byte
		now       time.Time
		reason    string
	}{
		{"unsigned", "n1", body, now, RefusedUnsigned},
		{"format before issue 23", "n1", append([]byte("sg1"), v[3:]...), now, RefusedFormat},
		{"a later format", "n1", append([]byte("sg10"), v[3:]...), now, RefusedFormat},
		{"not a format", "n1", append([]byte("sgx"), v[3:]...), now, RefusedUnsigned},
		{"empty", "n1", nil, now, RefusedUnsigned},
		{"another key", "n2", v, now, RefusedSignature},
		{"body changed", "n1", flip(v, len(v)-3), now, RefusedSignature},
		{"time changed", "n1", flip(v, 5), now, RefusedSignature},
		{"mac changed", "n1", flip(v, sealOverhead-5), now, RefusedSignature},
		{"another secret", "n1", other.seal(other.newHash(), "n1", body, now), now, RefusedSignature},
		{"another bucket", "n1", otherBucket.seal(otherBucket.newHash(), "n1", body, now), now, RefusedSignature},
		{"no newline", "n1", []byte("sg2 123 abc"), now, RefusedSignature},
		{"long line", "n1", []byte("sg2 " + strings.Repeat("1", 200) + "\n{}"), now, RefusedSignature},
		{"long mac", "n1", []byte("sg2 1 " + strings.Repeat("A", 60) + "\n{}"), now, RefusedSignature},
		{"negative time", "n1", []byte("sg2 -1 " + strings.Repeat("A", 43) + "\n{}"), now, RefusedSignature},
		{"signed more than a ttl ahead", "n1", s.seal(h, "n1", body, now.Add(ttl+time.Second)), now, RefusedTime},
		{"signed over two ttls before it was stored (a copy written back)", "n1", v, now.Add(2*ttl + time.Second), RefusedTime},
	} {
		got, reason, err := s.unseal(h, tc.key, tc.value, tc.now, ttl)
		if err == nil || reason != tc.reason || got != nil {
			t.Errorf("%s: unseal = %q, %q, %v; want refused %q", tc.name, got, reason, err, tc.reason)
		}
	}
	// Within the window, either side.
	for _, d := range []time.Duration{ttl, -2*ttl + time.Millisecond} {
		if _, _, err := s.unseal(h, "n1", s.seal(h, "n1", body, now.Add(d)), now, ttl); err != nil {
			t.Errorf("signed %v from now: %v", d, err)
		}
	}
}

// TestSecretRedacted: the secret never prints.
func TestSecretRedacted(t *testing.T) {
	c := Config{Secret: Secret("hunter2hunter2hunter2hunter2hunter2")}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "secret", c.Secret, "cfg", c)
	j, _ := json.Marshal(c)
	for _, s := range []string{fmt.Sprint(c.Secret), fmt.Sprintf("%x %q %s %v %+v %#v %d", c.Secret, c.Secret, c.Secret, c, c, c, c.Secret), b.String(), string(j)} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "68756e74") {
			t.Errorf("the secret shows: %s", s)
		}
	}
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
	base := Config{URL: "nats://127.0.0.1:1", Replica: "r1", Secret: testSecret}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		err  string
	}{
		{"no url", func(c *Config) { c.URL = " " }, "gateway.cluster.url: is empty"},
		{"http url", func(c *Config) { c.URL = "http://h:1" }, `gateway.cluster.url: "http://h:1": scheme "http" is not nats`},
		{"bad port, password hidden", func(c *Config) { c.URL = "nats://u:s3cr3t@h:99999" }, `gateway.cluster.url: "nats://redacted@h:99999": port "99999"`},
		{"not a url, password hidden", func(c *Config) { c.URL = "nats://u:s3cr3t@h:1/%zz" }, `gateway.cluster.url: "nats://redacted@h:1/%zz" is not a URL`},
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
		{"password without user", func(c *Config) { c.Password = "s3cr3t" }, "NATS_PASSWORD: is set without NATS_USER"},
		{"user without password", func(c *Config) { c.User = "u" }, "NATS_USER: is set without NATS_PASSWORD"},
		{"two ways", func(c *Config) { c.User, c.Password, c.Token = "u", "s3cr3t", "s3cr3t" }, "gateway.cluster: NATS_USER and NATS_TOKEN are alternative ways to log in to NATS; set one"},
		{"no cluster secret", func(c *Config) { c.Secret = nil }, "gateway.cluster.secretFile (--cluster-secret-file) or SKILLGATE_CLUSTER_SECRET: no cluster secret: every replica needs the same secret of at least 32 bytes"},
		{"short cluster secret", func(c *Config) { c.Secret = Secret("sekrit") }, "gateway.cluster.secretFile (--cluster-secret-file) or SKILLGATE_CLUSTER_SECRET: the cluster secret is 6 bytes, fewer than 32"},
		{"remote cap too high", func(c *Config) { c.MaxRemote = MaxRemoteLimit + 1 }, "gateway.cluster.maxRemoteNodes: 1000001 is not from 1 to 1000000"},
		{"remote cap negative", func(c *Config) { c.MaxRemote = -1 }, "gateway.cluster.maxRemoteNodes: -1 is not from 1 to 1000000"},
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
		if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "sekrit") || strings.Contains(err.Error(), string(testSecret)) {
			t.Errorf("%s: error %q shows a secret", tc.name, err)
		}
	}
	if _, err := Join(base, nil); err == nil {
		t.Error("Join with a nil Handler succeeded")
	}
}

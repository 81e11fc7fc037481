package gateway_test

// What an operator sees when set-up is wrong: a bucket that does not exist
// and credentials the service refuses, on a real MinIO. Until a first
// snapshot is loaded the agent endpoints answer 503 with the cause, never
// an empty block; /readyz names the cause and what to check; once the
// store is right, the next poll serves.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/store"
)

// switchStore is a store an operator fixes while the gateway runs: each
// call goes to the store set last.
type switchStore struct{ cur atomic.Pointer[store.Store] }

func (s *switchStore) set(st store.Store) { s.cur.Store(&st) }

func (s *switchStore) List(ctx context.Context, prefix string) ([]store.Object, error) {
	return (*s.cur.Load()).List(ctx, prefix)
}

func (s *switchStore) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	return (*s.cur.Load()).Get(ctx, key, etag)
}

// startUnready serves st (named storeName) without waiting for readiness.
func startUnready(t *testing.T, st store.Store, storeName string) *gw {
	t.Helper()
	return &gw{gatewaytest.Start(t, gatewaytest.Options{NoWait: true,
		Config: gateway.Config{Store: st, StoreName: storeName, Poll: 100 * time.Millisecond}})}
}

// readyz is the answer of /readyz, with every field an operator reads.
type readyz struct {
	Ready  bool   `json:"ready"`
	Store  string `json:"store"`
	Loaded bool   `json:"loaded"`
	Error  string `json:"error"`
	Hint   string `json:"hint"`
}

func TestStoreNotLoaded(t *testing.T) {
	m := sharedMinio.Get(t)
	s3 := func(t *testing.T, bucket, secret string) *store.S3 {
		st, err := store.NewS3(t.Context(), store.S3Config{Bucket: bucket, Endpoint: m.Endpoint, Region: "us-east-1",
			PathStyle: true, AccessKeyID: m.AccessKey, SecretAccessKey: secret})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	tests := []struct {
		name   string
		broken func(t *testing.T, bucket string) store.Store
		fix    func(t *testing.T, bucket string, sw *switchStore)
		detail string // the 503 answer's cause, after "store not loaded: "; BUCKET and ENDPOINT replaced
		cause  string // /readyz's error, after "store not loaded: "
		hint   string // /readyz's hint, exact
	}{
		{
			name:   "missing bucket",
			broken: func(t *testing.T, bucket string) store.Store { return s3(t, bucket, m.SecretKey) },
			fix: func(t *testing.T, bucket string, _ *switchStore) {
				if err := m.CreateBucket(t.Context(), bucket); err != nil {
					t.Fatal(err)
				}
			},
			detail: `bucket "BUCKET" does not exist at ENDPOINT`,
			cause:  `bucket "BUCKET" does not exist`,
			hint:   `create bucket "BUCKET", or correct the bucket in --store (s3://BUCKET?endpoint=…); check that endpoint= names the right service`,
		},
		{
			name: "refused credentials",
			broken: func(t *testing.T, bucket string) store.Store {
				if err := m.CreateBucket(t.Context(), bucket); err != nil {
					t.Fatal(err)
				}
				return s3(t, bucket, "not-the-secret-key")
			},
			fix: func(t *testing.T, bucket string, sw *switchStore) { sw.set(s3(t, bucket, m.SecretKey)) },
			detail: "the storage service refused the credentials from the keys given to the store (SignatureDoesNotMatch) at ENDPOINT: " +
				"The request signature we calculated does not match the signature you provided. Check your key and signing method.",
			cause: "the storage service refused the credentials from the keys given to the store (SignatureDoesNotMatch)",
			hint:  "the secret key does not belong to the access key id: check the access key id and secret key given to the store (a secret pasted with a missing or extra character is the usual cause)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bucket := strings.ReplaceAll(strings.ToLower("t-notloaded-"+tt.name), " ", "-") + "-" + time.Now().Format("150405.000000")
			bucket = strings.ReplaceAll(bucket, ".", "")
			fill := func(s string) string {
				return strings.NewReplacer("BUCKET?", "BUCKET?", `"BUCKET"`, `"`+bucket+`"`, "ENDPOINT", m.Endpoint).Replace(s)
			}
			sw := &switchStore{}
			sw.set(tt.broken(t, bucket))
			g := startUnready(t, sw, "s3://"+bucket+"?endpoint="+m.Endpoint)

			want := `{"error":` + jsonString(t, "store not loaded: "+fill(tt.detail)) + "}\n"
			for _, path := range []string{"/v1/agents/main/prompt", "/v1/agents/main/skills", "/v1/agents/main/skills?q=git",
				"/v1/agents/main/read?path=skills/x/SKILL.md", "/v1/governance"} {
				code, hdr, body := g.Get(t, path, nil)
				if code != http.StatusServiceUnavailable || body != want {
					t.Errorf("GET %s: %d %s\nwant 503 %s", path, code, body, want)
				}
				if hdr.Get("Retry-After") != "1" || hdr.Get("Cache-Control") != "no-store" || hdr.Get("ETag") != "" {
					t.Errorf("GET %s: headers %v, want Retry-After: 1, Cache-Control: no-store and no ETag", path, hdr)
				}
			}
			// A long poll is not parked on a store that never loaded.
			start := time.Now()
			code, _, body := g.Get(t, "/v1/agents/main/prompt?wait=30s", http.Header{"If-None-Match": {`"x"`}})
			if code != http.StatusServiceUnavailable || body != want || time.Since(start) > 5*time.Second {
				t.Errorf("long poll: %d %s after %v, want 503 at once", code, body, time.Since(start))
			}
			if code, _, body := g.Get(t, "/v1/nodes", nil); code != http.StatusOK {
				t.Errorf("GET /v1/nodes: %d %s; nodes do not need the store", code, body)
			}

			code, _, body = g.Get(t, "/readyz", nil)
			var r readyz
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				t.Fatalf("/readyz: %v: %s", err, body)
			}
			wantR := readyz{Ready: false, Store: "s3://" + bucket, Loaded: false, Error: "store not loaded: " + fill(tt.cause), Hint: fill(tt.hint)}
			if code != http.StatusServiceUnavailable || r != wantR {
				t.Errorf("/readyz: %d %+v\nwant 503 %+v", code, r, wantR)
			}
			if strings.Contains(body, m.Endpoint) || strings.Contains(body, "not-the-secret-key") {
				t.Errorf("the open /readyz shows the endpoint or a secret: %s", body)
			}

			// Several polls later the cause was logged once, as what failed
			// and what to check, and never as a last good snapshot.
			time.Sleep(400 * time.Millisecond)
			logs := g.Logs.String()
			if n := strings.Count(logs, `"msg":"store not loaded; agents get 503 until a first snapshot loads"`); n != 1 {
				t.Errorf("the cause was logged %d times, want once:\n%s", n, logs)
			}
			if !strings.Contains(logs, `"cause":`+jsonString(t, fill(tt.detail))) || !strings.Contains(logs, `"check":`+jsonString(t, fill(tt.hint))) {
				t.Errorf("the log lacks the cause or what to check:\n%s", logs)
			}
			if strings.Contains(logs, "last good snapshot") || strings.Contains(logs, "not-the-secret-key") {
				t.Errorf("the log speaks of a last good snapshot, or shows the secret:\n%s", logs)
			}

			// The operator fixes it: the next poll serves.
			tt.fix(t, bucket, sw)
			testkit.Eventually(t, waitFor, func() (string, bool) {
				code, hdr, body := g.Get(t, "/v1/agents/main/prompt", nil)
				return body, code == http.StatusOK && body == "" && hdr.Get("ETag") != ""
			})
			code, _, body = g.Get(t, "/readyz", nil)
			r = readyz{}
			json.Unmarshal([]byte(body), &r)
			if wantR := (readyz{Ready: true, Store: "s3://" + bucket, Loaded: true}); code != http.StatusOK || r != wantR {
				t.Errorf("/readyz after the fix: %d %s", code, body)
			}
			if code, _, body := g.Get(t, "/v1/agents/main/skills", nil); code != http.StatusOK || !strings.HasPrefix(body, `{"agent":"main","skills":[]`) {
				t.Errorf("/skills after the fix: %d %s", code, body)
			}
			if !strings.Contains(g.Logs.String(), `"msg":"storage reachable again"`) {
				t.Errorf("the recovery was not logged:\n%s", g.Logs.String())
			}
		})
	}
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
}

package main

// A new operator's first start, with the set-up wrong: real `skillgate
// serve` processes with JSON logs on a real MinIO, a bucket that does not
// exist and a secret key the service refuses, judged through HTTP, the
// `status` command and the log.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit"
)

// awsEnv is the environment of a gateway whose AWS chain has exactly these
// keys: no profile, no shared files, no instance metadata.
func awsEnv(t *testing.T, keyID, secret string) []string {
	dir := t.TempDir()
	return []string{"AWS_ACCESS_KEY_ID=" + keyID, "AWS_SECRET_ACCESS_KEY=" + secret, "AWS_SESSION_TOKEN=", "AWS_PROFILE=",
		"AWS_DEFAULT_PROFILE=", "AWS_REGION=", "AWS_DEFAULT_REGION=", "AWS_ENDPOINT_URL=", "AWS_ENDPOINT_URL_S3=",
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "credentials"), "AWS_CONFIG_FILE=" + filepath.Join(dir, "config"),
		"AWS_EC2_METADATA_DISABLED=true"}
}

// checkJSONLog fails t for every line of out that is not a JSON object:
// with stderr not a terminal the whole log is JSON, the AWS SDK's words
// included.
func checkJSONLog(t *testing.T, name, out string) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("%s output line %d is not JSON: %q", name, i+1, line)
		}
	}
}

func TestServeSetupErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bins := testBins(t)
	srv := minio.Get(t)
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	refused := "the storage service refused the credentials from the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) (SignatureDoesNotMatch)"
	tests := []struct {
		name   string
		secret string // AWS_SECRET_ACCESS_KEY of the first start
		detail string // the 503 answer's cause; BUCKET and ENDPOINT replaced
		cause  string // /readyz's
		hint   string
	}{
		{"missing bucket", srv.SecretKey,
			`bucket "BUCKET" does not exist at ENDPOINT`,
			`bucket "BUCKET" does not exist`,
			`create bucket "BUCKET", or correct the bucket in --store (s3://BUCKET?endpoint=…); check that endpoint= names the right service`},
		{"refused credentials", "not-the-secret-key",
			refused + " at ENDPOINT: The request signature we calculated does not match the signature you provided. Check your key and signing method.",
			refused,
			"the secret key does not belong to the access key id: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (a secret pasted with a missing or extra character is the usual cause)"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bucket := fmt.Sprintf("t-setup-%d-%d", i, time.Now().UnixNano())
			if tt.secret != srv.SecretKey {
				if err := srv.CreateBucket(t.Context(), bucket); err != nil {
					t.Fatal(err)
				}
			}
			fill := strings.NewReplacer(`"BUCKET"`, `"`+bucket+`"`, "ENDPOINT", srv.Endpoint).Replace
			port := testkit.FreePort(t)
			base := "http://127.0.0.1:" + strconv.Itoa(port)
			serve := func(secret string) *testkit.Proc {
				return startProcEnv(t, "skillgate serve", awsEnv(t, srv.AccessKey, secret), filepath.Join(bins, "skillgate"),
					"serve", "--store", srv.StoreURL(bucket), "--listen", "127.0.0.1:"+strconv.Itoa(port), "--poll", "200ms")
			}
			gw := serve(tt.secret)
			var ready map[string]any
			waitHTTP(t, func() (string, bool) {
				code, body := httpGet(base + "/readyz")
				ready = nil
				json.Unmarshal([]byte(body), &ready)
				return fmt.Sprint(code, " ", body), code == http.StatusServiceUnavailable && ready["error"] != "store not loaded: first load in progress"
			}, gw)
			delete(ready, "snapshotAgeSeconds")
			want := map[string]any{"ready": false, "store": "s3://" + bucket, "loaded": false, "nodes": float64(0),
				"error": "store not loaded: " + fill(tt.cause), "hint": fill(tt.hint)}
			if fmt.Sprint(ready) != fmt.Sprint(want) {
				t.Errorf("/readyz:\n%v\nwant\n%v", ready, want)
			}
			wantErr := `{"error":` + strconv.Quote("store not loaded: "+fill(tt.detail)) + "}\n"
			for _, path := range []string{"/v1/agents/main/prompt", "/v1/agents/main/skills"} {
				if code, body := httpGet(base + path); code != http.StatusServiceUnavailable || body != wantErr {
					t.Errorf("GET %s: %d %s\nwant 503 %s", path, code, body, wantErr)
				}
			}

			out, errOut, code := runCmd(t, "status", "--gateway", base, "--agent", "main")
			wantOut := "gateway " + base + " is NOT READY: store not loaded: " + fill(tt.cause) + "\n" +
				"  check: " + fill(tt.hint) + "\n\n" +
				"0 nodes connected to " + base + "\n\n" +
				"NODE  REPLICA  OS  ROLES  BINS PRESENT  ENV  FACTS\n\n" +
				"agent main: not evaluated: store not loaded: " + fill(tt.detail) + "\n"
			wantErrOut := "skillgate status: gateway " + base + " is not ready: store not loaded: " + fill(tt.cause) + "\n"
			if code != 1 || out != wantOut || errOut != wantErrOut {
				t.Errorf("status: exit %d, stderr %q, stdout:\n%s\nwant exit 1, stderr %q and:\n%s", code, errOut, out, wantErrOut, wantOut)
			}

			// The fix: the bucket made, or the right key and a restart.
			if tt.secret == srv.SecretKey {
				if err := srv.CreateBucket(t.Context(), bucket); err != nil {
					t.Fatal(err)
				}
			} else {
				// A clean stop (SIGTERM) adds no plain-text line either.
				gw.Signal(syscall.SIGTERM)
				select {
				case <-gw.Exited():
				case <-time.After(clusterWait):
					t.Fatal("skillgate serve did not stop on SIGTERM")
				}
				if code, _ := gw.ExitCode(); code != 0 {
					t.Errorf("skillgate serve exited %d on SIGTERM", code)
				}
				checkJSONLog(t, "the refused gateway", gw.Output())
				if strings.Contains(gw.Output(), tt.secret) {
					t.Errorf("the log shows the secret key:\n%s", gw.Output())
				}
				gw = serve(srv.SecretKey)
			}
			waitHTTP(t, func() (string, bool) {
				code, body := httpGet(base + "/v1/agents/main/prompt")
				return fmt.Sprint(code, " ", body), code == http.StatusOK && body == ""
			}, gw)
			if code, body := httpGet(base + "/readyz"); code != http.StatusOK || !strings.Contains(body, `"loaded":true`) {
				t.Errorf("/readyz after the fix: %d %s", code, body)
			}
			out, errOut, code = runCmd(t, "status", "--gateway", base, "--agent", "main")
			if code != 0 || !strings.HasPrefix(out, "0 nodes connected to "+base+"\n") || !strings.Contains(out, "agent main: 0 of 0 skills offered") {
				t.Errorf("status after the fix: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
			}

			logs := gw.Output()
			checkJSONLog(t, "skillgate serve", logs)
			if strings.Contains(logs, "last good snapshot") {
				t.Errorf("the log speaks of a last good snapshot where none was ever loaded:\n%s", logs)
			}
		})
	}
}

// TestEvalMissingBucket: eval on a bucket that does not exist says so, and
// what to check, instead of the SDK's chain of wrapped errors.
func TestEvalMissingBucket(t *testing.T) {
	srv := minio.Get(t)
	for _, kv := range awsEnv(t, srv.AccessKey, srv.SecretKey) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	store := srv.StoreURL("no-such-bucket")
	_, errOut, code := runCmd(t, "eval", "--store", store, "--hosts", hosts, "--agent", "main")
	want := "skillgate eval: --store " + store + `: bucket "no-such-bucket" does not exist at ` + srv.Endpoint +
		`; check: create bucket "no-such-bucket", or correct the bucket in --store (s3://BUCKET?endpoint=…); check that endpoint= names the right service` + "\n"
	if code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q\nwant 2, %q", code, errOut, want)
	}
}

// TestServeWithoutCredentials: a gateway whose AWS chain finds no
// credentials names every source it tried, and the SDK's own warnings on
// the way (the instance metadata service) are JSON lines of its log.
func TestServeWithoutCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bins := testBins(t)
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	env := awsEnv(t, "", "")
	env = env[:len(env)-1] // the instance metadata service is asked, as on a real host
	port := testkit.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	gw := startProcEnv(t, "skillgate serve", env, filepath.Join(bins, "skillgate"),
		"serve", "--store", "s3://skills?endpoint=http://127.0.0.1:1", "--listen", "127.0.0.1:"+strconv.Itoa(port), "--poll", "200ms")
	want := "store not loaded: no AWS credentials: the AWS credential chain tried the environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are unset; " +
		"web identity from the environment: AWS_WEB_IDENTITY_TOKEN_FILE is unset; " +
		`profile "default" of the shared files ($AWS_SHARED_CREDENTIALS_FILE, $AWS_CONFIG_FILE): no such files; ` +
		"container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are unset; " +
		"the EC2 instance metadata service (IMDS): "
	// Without an instance the metadata service may take its timeouts.
	testkit.Eventually(t, 90*time.Second, func() (string, bool) {
		code, body := httpGet(base + "/readyz")
		var r struct{ Error string }
		json.Unmarshal([]byte(body), &r)
		last := fmt.Sprintf("/readyz: %d %s\nwant 503 with an error starting %q", code, body, want)
		ok := code == http.StatusServiceUnavailable && strings.HasPrefix(r.Error, want)
		if !ok {
			testkit.CheckAlive(t, last, gw)
		}
		return last, ok
	})
	if code, body := httpGet(base + "/v1/agents/main/prompt"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"error":"`+strings.ReplaceAll(want, `"`, `\"`)) {
		t.Errorf("prompt: %d %s", code, body)
	}
	gw.Signal(syscall.SIGTERM)
	<-gw.Exited()
	checkJSONLog(t, "skillgate serve", gw.Output())
}

package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/store"
)

// clearAWSEnv leaves the AWS chain nothing but what the test sets: no keys,
// no profile, shared files that do not exist and no instance metadata.
func clearAWSEnv(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
		"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "AWS_DEFAULT_REGION"} {
		t.Setenv(k, "")
		os.Unsetenv(k) // an empty variable is not always an unset one to the SDK
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// TestS3Problems: each way a bucket can be unusable is explained with what
// failed, where, and what to check, on a real MinIO.
func TestS3Problems(t *testing.T) {
	srv := minio.Get(t)
	bucket := srv.Bucket(t)
	clearAWSEnv(t)
	tests := []struct {
		name   string
		url    string // --store
		env    map[string]string
		cause  string // exact
		detail string // prefix of Detail
		hint   string // substring of Hint
	}{
		{
			name:   "missing bucket",
			url:    srv.StoreURL("no-such-bucket"),
			env:    map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": srv.SecretKey},
			cause:  `bucket "no-such-bucket" does not exist`,
			detail: `bucket "no-such-bucket" does not exist at ` + srv.Endpoint,
			hint:   `create bucket "no-such-bucket", or correct the bucket in --store`,
		},
		{
			name:   "wrong secret key",
			url:    srv.StoreURL(bucket),
			env:    map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": "not-the-secret"},
			cause:  "the storage service refused the credentials from the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) (SignatureDoesNotMatch)",
			detail: "the storage service refused the credentials from the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) (SignatureDoesNotMatch) at " + srv.Endpoint,
			hint:   "the secret key does not belong to the access key id: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
		},
		{
			name:   "unknown access key",
			url:    srv.StoreURL(bucket),
			env:    map[string]string{"AWS_ACCESS_KEY_ID": "AKIANOBODY", "AWS_SECRET_ACCESS_KEY": srv.SecretKey},
			cause:  "the storage service refused the credentials from the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) (InvalidAccessKeyId)",
			detail: "the storage service refused the credentials from the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) (InvalidAccessKeyId) at " + srv.Endpoint,
			hint:   "the access key id is unknown to this service",
		},
		{
			name: "no credentials",
			url:  srv.StoreURL(bucket),
			cause: "no AWS credentials: the AWS credential chain tried the environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are unset; " +
				"web identity from the environment: AWS_WEB_IDENTITY_TOKEN_FILE is unset; " +
				`profile "default" of the shared files ($AWS_SHARED_CREDENTIALS_FILE, $AWS_CONFIG_FILE): no such files; ` +
				"container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are unset; " +
				"the EC2 instance metadata service (IMDS): disabled by AWS_EC2_METADATA_DISABLED",
			detail: "no AWS credentials: the AWS credential chain tried the environment",
			hint:   "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the gateway's environment",
		},
		{
			name:   "a key without its secret",
			url:    srv.StoreURL(bucket),
			env:    map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey},
			cause:  "no AWS credentials: the AWS credential chain tried the environment: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; ",
			detail: "no AWS credentials: ",
			hint:   "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
		},
		{
			name:   "nothing listening",
			url:    "s3://" + bucket + "?endpoint=http://127.0.0.1:1",
			env:    map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": srv.SecretKey},
			cause:  "cannot reach the storage endpoint",
			detail: "cannot reach the storage endpoint http://127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused",
			hint:   "check endpoint= in --store",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			st, err := store.Open(t.Context(), tt.url)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			_, err = st.List(ctx, "skills/")
			if err == nil {
				t.Fatal("List succeeded")
			}
			p := store.Explain(err)
			t.Logf("cause: %s\ndetail: %s\nhint: %s", p.Cause, p.Detail, p.Hint)
			if tt.name == "a key without its secret" {
				if !strings.HasPrefix(p.Cause, tt.cause) {
					t.Errorf("Cause = %q, want it to start %q", p.Cause, tt.cause)
				}
			} else if p.Cause != tt.cause {
				t.Errorf("Cause = %q\nwant    %q", p.Cause, tt.cause)
			}
			if !strings.HasPrefix(p.Detail, tt.detail) {
				t.Errorf("Detail = %q, want it to start %q", p.Detail, tt.detail)
			}
			if !strings.Contains(p.Hint, tt.hint) {
				t.Errorf("Hint = %q, want it to contain %q", p.Hint, tt.hint)
			}
			for _, secret := range []string{srv.SecretKey, "not-the-secret"} {
				if strings.Contains(p.Cause+p.Detail+p.Hint, secret) {
					t.Errorf("the problem shows a secret key: %+v", p)
				}
			}
			// The cause is for the open /readyz: no endpoint.
			if strings.Contains(p.Cause, "127.0.0.1") {
				t.Errorf("Cause names the endpoint: %q", p.Cause)
			}
		})
	}
}

// TestExplainByKind: errors a store did not explain are worded by their
// kind, without OS error text in Cause.
func TestExplainByKind(t *testing.T) {
	pathErr := &fs.PathError{Op: "open", Path: "/srv/skills", Err: syscall.EACCES}
	gone := &fs.PathError{Op: "open", Path: "/srv/skills", Err: syscall.ENOENT}
	tests := []struct {
		err   error
		cause string
	}{
		{fmt.Errorf("dir list: %w", pathErr), "the store directory cannot be read"},
		{fmt.Errorf("dir list: %w", gone), "the store directory does not exist"},
		{fmt.Errorf("list: %w", context.DeadlineExceeded), "the store did not answer in time"},
		{errors.New("something else"), "the store failed; the full error is in the gateway log"},
		{&store.Error{Problem: store.Problem{Cause: "c", Detail: "d", Hint: "h"}, Err: errors.New("raw")}, "c"},
	}
	for _, tt := range tests {
		p := store.Explain(tt.err)
		if p.Cause != tt.cause || p.Hint == "" || p.Detail == "" {
			t.Errorf("Explain(%v) = %+v, want cause %q with a detail and a hint", tt.err, p, tt.cause)
		}
		if strings.Contains(p.Cause, "permission denied") || strings.Contains(p.Cause, "/srv") {
			t.Errorf("Explain(%v).Cause shows OS text or a path: %q", tt.err, p.Cause)
		}
	}
	if p := store.Explain(nil); p != (store.Problem{}) {
		t.Errorf("Explain(nil) = %+v", p)
	}
}

package store_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/store"
)

func TestParseS3URL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url     string
		want    store.S3Config
		wantErr string // substring of the error; "" for success
	}{
		{url: "s3://skills", want: store.S3Config{Bucket: "skills"}},
		{url: "s3://skills/", want: store.S3Config{Bucket: "skills"}},
		{url: "s3://skills?region=eu-west-1", want: store.S3Config{Bucket: "skills", Region: "eu-west-1"}},
		{
			url:  "s3://skills?endpoint=http://127.0.0.1:9000",
			want: store.S3Config{Bucket: "skills", Endpoint: "http://127.0.0.1:9000", PathStyle: true},
		},
		{
			url:  "s3://skills?endpoint=https://acct.r2.cloudflarestorage.com&region=auto&path_style=false",
			want: store.S3Config{Bucket: "skills", Endpoint: "https://acct.r2.cloudflarestorage.com", Region: "auto"},
		},
		{
			url:  "s3://skills?path_style=true",
			want: store.S3Config{Bucket: "skills", PathStyle: true},
		},
		{url: "s3://", wantErr: "missing bucket"},
		{url: "s3://?endpoint=http://h", wantErr: "missing bucket"},
		{url: "s3://skills?foo=1&bar=2", wantErr: "unknown parameter(s) bar, foo: expected endpoint, path_style, region"},
		{url: "s3://skills?Endpoint=http://h", wantErr: "unknown parameter(s) Endpoint"},
		{url: "s3://skills?endpoint=127.0.0.1:9000", wantErr: `endpoint "127.0.0.1:9000": expected a URL like`},
		{url: "s3://skills?endpoint=ftp://h", wantErr: "expected a URL like https://HOST"},
		{url: "s3://skills?endpoint=", wantErr: "endpoint"},
		{url: "s3://skills?region=", wantErr: "region is empty"},
		{url: "s3://skills?path_style=maybe", wantErr: `path_style "maybe": expected true or false`},
		{url: "s3://skills?region=a&region=b", wantErr: "region is given 2 times"},
		{url: "s3://skills/prefix", wantErr: `path "/prefix" after the bucket is not supported`},
		{url: "s3://skills:9000", wantErr: "the service address goes in endpoint="},
		{url: "s3://key:hunter2@skills", wantErr: "credentials do not go in the store URL"},
		{url: "s3://skills#frag", wantErr: "fragment"},
		{url: "s3://skills?a=%zz", wantErr: "query"},
		{url: "file:///tmp", wantErr: "expected an s3://BUCKET URL"},
	}
	for _, tt := range tests {
		got, err := store.ParseS3URL(tt.url)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseS3URL(%q): %v", tt.url, err)
		case tt.wantErr == "" && got != tt.want:
			t.Errorf("ParseS3URL(%q) = %+v, want %+v", tt.url, got, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseS3URL(%q) = %+v, %v; want an error containing %q", tt.url, got, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseS3URL(%q): the error shows the secret: %v", tt.url, err)
		}
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := t.Context()

	for _, u := range []string{dir, "file://" + dir, "file://localhost" + dir} {
		st, err := store.Open(ctx, u)
		if err != nil {
			t.Errorf("Open(%q): %v", u, err)
			continue
		}
		if d, ok := st.(*store.Dir); !ok || d.Root() != dir {
			t.Errorf("Open(%q) = %#v, want the Dir of %s", u, st, dir)
		}
	}

	// An s3 store makes no request when opened.
	st, err := store.Open(ctx, "s3://skills?endpoint=http://127.0.0.1:1")
	if err != nil {
		t.Fatalf("Open(s3): %v", err)
	}
	if s, ok := st.(*store.S3); !ok || s.Bucket() != "skills" {
		t.Errorf("Open(s3) = %#v, want the S3 store of bucket skills", st)
	}

	for _, tt := range []struct{ url, wantErr string }{
		{"", "store is empty"},
		{filepath.Join(dir, "missing"), "no such file or directory"},
		{"http://example.com/skills", `unsupported scheme "http"`},
		{"file://host/tmp", `file URL host "host"`},
		{"file:///tmp?x=1", "no query"},
		{"s3://skills?endpoint=nope", "expected a URL like"},
		{"s3://?endpoint=http://h", "missing bucket"},
	} {
		if _, err := store.Open(ctx, tt.url); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Open(%q) = %v, want an error containing %q", tt.url, err, tt.wantErr)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/srv/skills":                   "/srv/skills",
		"s3://b?endpoint=http://h:9000": "s3://b?endpoint=http://h:9000",
		"s3://key:hunter2@b?region=x":   "s3://REDACTED@b?region=x",
		"s3://key:hunter2@b%zz":         "(a store URL that does not parse)",
	} {
		if got := store.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactAndRefuseEndpointCredentials(t *testing.T) {
	u := "s3://b?endpoint=http://AKIA:SECRETKEY@127.0.0.1:9000&region=auto"
	if got := store.Redact(u); strings.Contains(got, "SECRETKEY") || strings.Contains(got, "AKIA") {
		t.Errorf("Redact(%q) = %q", u, got)
	}
	_, err := store.Open(t.Context(), u)
	if err == nil || strings.Contains(err.Error(), "SECRETKEY") || !strings.Contains(err.Error(), "credentials in the URL are not accepted") {
		t.Errorf("Open: %v", err)
	}
}

package miniotest

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestBucketName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	for _, name := range []string{
		"TestX",
		"TestS3Loader/sub_test#01",
		strings.Repeat("TestVeryLong", 20),
		"Test--__--Odd",
	} {
		a, b := bucketName(name), bucketName(name)
		if !valid.MatchString(a) || a == b {
			t.Errorf("bucketName(%q) = %q, %q: want valid, distinct names", name, a, b)
		}
	}
}

func TestStartRestart(t *testing.T) {
	srv := Start(t)
	ctx := t.Context()
	bucket := srv.Bucket(t)
	put := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("v")}
	if _, err := srv.Client().PutObject(ctx, put); err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	if resp, err := http.Get(srv.Endpoint + "/minio/health/live"); err == nil {
		resp.Body.Close()
		t.Fatal("the server still answers after Stop")
	}
	srv.Stop() // stopping twice is fine

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	get := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")}
	if _, err := srv.Client().GetObject(ctx, get); err != nil {
		t.Errorf("the object did not survive the restart: %v", err)
	}
	if !strings.Contains(srv.Output(), "--- ") {
		t.Errorf("output = %q, want the command lines", srv.Output())
	}
	if env := srv.Env(); len(env) != 2 || !strings.HasPrefix(env[0], "AWS_ACCESS_KEY_ID=") {
		t.Errorf("Env = %q", env)
	}
}

func TestNoBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GOPATH", t.TempDir())
	if _, err := findBinary(); !errors.Is(err, ErrNoBinary) || !strings.Contains(err.Error(), InstallCommand) {
		t.Errorf("findBinary with no minio = %v, want ErrNoBinary naming the install command", err)
	}
}

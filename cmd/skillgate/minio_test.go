package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/store"
)

var minio miniotest.Once

func TestMain(m *testing.M) { os.Exit(minio.Run(m)) }

// TestEvalOnMinIO runs eval on the fixture bucket uploaded to a real MinIO
// and expects exactly the answer of the directory store.
func TestEvalOnMinIO(t *testing.T) {
	srv := minio.Get(t)
	bucketName := srv.Bucket(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	st, err := store.NewS3(t.Context(), store.S3Config{Bucket: bucketName, Endpoint: srv.Endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(bucket, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(bucket, path)
		return st.Put(t.Context(), filepath.ToSlash(rel), body)
	})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "eval", "--store", srv.StoreURL(bucketName), "--config", gwConfig, "--hosts", hosts, "--agent", "main", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "eval-main.golden.json", out)
}

// Command seed uploads a directory laid out like the skills bucket to an
// S3-compatible bucket (creating the bucket if needed). make dev uses it to
// fill a local MinIO with the example skills.
//
//	go run ./internal/seed --endpoint http://127.0.0.1:9900 --bucket skills examples/store
//
// It is a development tool, not one of the shipped binaries: like cmd/*
// it is flags and exit codes only, and writes through store's S3
// backend (the AWS SDK). Nothing imports it; it never imports gateway,
// eligibility or node.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/skillgate/skillgate/store"
)

func main() {
	endpoint := flag.String("endpoint", "", "S3 endpoint URL")
	bucket := flag.String("bucket", "", "bucket name")
	region := flag.String("region", "us-east-1", "region")
	flag.Parse()
	if *endpoint == "" || *bucket == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: seed --endpoint URL --bucket NAME DIR")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.NewS3(ctx, store.S3Config{Bucket: *bucket, Endpoint: *endpoint, Region: *region, PathStyle: true})
	if err != nil {
		fail(err)
	}
	if err := st.CreateBucket(ctx); err != nil {
		fail(err)
	}
	root := flag.Arg(0)
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		return st.Put(ctx, filepath.ToSlash(rel), body)
	})
	if err != nil {
		fail(err)
	}
	fmt.Printf("seeded %d files into s3://%s at %s\n", n, *bucket, *endpoint)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "seed:", err)
	os.Exit(1)
}

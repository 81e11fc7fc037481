// Package storetest holds what the tests of store and catalog share: a
// fresh MinIO bucket as a store, files written to it or to a directory
// store, and the keys of a listing. Only tests import it; it imports store,
// catalog, the MinIO launcher and the test kit.
package storetest

import (
	"context"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/store"
)

// S3 makes a fresh bucket for t on srv and returns its store. The region
// is left empty, so NewS3 signs for "auto" (what R2 wants) unless
// AWS_REGION is set.
func S3(t testing.TB, srv *miniotest.Server) *store.S3 {
	t.Helper()
	st, err := store.NewS3(t.Context(), store.S3Config{
		Bucket:          srv.Bucket(t),
		Endpoint:        srv.Endpoint,
		PathStyle:       true,
		AccessKeyID:     srv.AccessKey,
		SecretAccessKey: srv.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// PutAll writes files to st, 32 at a time; the first error fails t.
func PutAll(t testing.TB, st *store.S3, files map[string][]byte) {
	t.Helper()
	g, ctx := errgroup.WithContext(t.Context())
	g.SetLimit(32)
	for k, v := range files {
		g.Go(func() error { return st.Put(ctx, k, v) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Dir writes files (key → content) under a new directory and returns its
// store and root.
func Dir(t testing.TB, files map[string]string) (*store.Dir, string) {
	t.Helper()
	root := t.TempDir()
	testkit.WriteFiles(t, root, files)
	d, err := store.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return d, root
}

// Keys lists the keys of a listing, in its order.
func Keys(objs []store.Object) []string {
	ks := make([]string, len(objs))
	for i, o := range objs {
		ks[i] = o.Key
	}
	return ks
}

// SkillKeys lists the SKILL.md keys of a classified listing, in its order.
func SkillKeys(objs []catalog.SkillObject) []string {
	ks := make([]string, len(objs))
	for i, o := range objs {
		ks[i] = o.Key
	}
	return ks
}

// Counting wraps a store and counts the requests made through it.
type Counting struct {
	store.Store
	Lists, Gets atomic.Int64
}

// List counts a listing and makes it.
func (c *Counting) List(ctx context.Context, prefix string) ([]store.Object, error) {
	c.Lists.Add(1)
	return c.Store.List(ctx, prefix)
}

// Get counts a read and makes it.
func (c *Counting) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	c.Gets.Add(1)
	return c.Store.Get(ctx, key, etag)
}

// SkillFile returns a small SKILL.md of that name and description.
func SkillFile(name, desc string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nBody.\n")
}

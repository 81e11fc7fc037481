package gatewaytest

// The one file of the kit that names the storage package: the stores a
// test gateway serves.

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/store"
)

// Store is what a test gateway serves: a directory, or a MinIO bucket.
type Store struct {
	store store.Store
	name  string    // StoreName: the directory, or s3://BUCKET
	dir   string    // the directory store's root ("" for S3)
	s3    *store.S3 // the bucket's store (nil for a directory)
}

// NewStore makes a fresh directory store, or a fresh bucket on m when m
// is not nil, for gateways to share (Options.Shared).
func NewStore(t testing.TB, m *miniotest.Server) *Store {
	t.Helper()
	return newStore(t, m, "")
}

// newStore is NewStore, on the directory dir when it is not "".
func newStore(t testing.TB, m *miniotest.Server, dir string) *Store {
	t.Helper()
	if m != nil {
		st := BucketStore(t, m)
		return &Store{store: st, name: "s3://" + st.Bucket(), s3: st}
	}
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Store{store: st, name: dir, dir: dir}
}

// BucketStore makes a fresh bucket on m and returns its S3 store.
func BucketStore(t testing.TB, m *miniotest.Server) *store.S3 {
	t.Helper()
	st, err := store.NewS3(t.Context(), store.S3Config{
		Bucket:          m.Bucket(t),
		Endpoint:        m.Endpoint,
		Region:          "us-east-1",
		PathStyle:       true,
		AccessKeyID:     m.AccessKey,
		SecretAccessKey: m.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Shared returns g's store, for another gateway to serve too
// (Options.Shared).
func (g *Gateway) Shared() *Store { return g.store }

// Dir is the directory store's root ("" on MinIO).
func (g *Gateway) Dir() string { return g.store.dir }

// Put writes a store object: atomically in a directory (the gateway
// polls it), or into the bucket.
func (g *Gateway) Put(t testing.TB, key, body string) {
	t.Helper()
	if g.store.s3 == nil {
		testkit.WriteFileAtomic(t, filepath.Join(g.store.dir, filepath.FromSlash(key)), body, 0o644)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	if err := g.store.s3.Put(ctx, key, []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// Delete removes a store object.
func (g *Gateway) Delete(t testing.TB, key string) {
	t.Helper()
	if g.store.s3 == nil {
		if err := os.Remove(filepath.Join(g.store.dir, filepath.FromSlash(key))); err != nil {
			t.Fatal(err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	if err := g.store.s3.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
}

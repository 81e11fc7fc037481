package store_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/store"
)

// minio is the MinIO server the package's tests share.
var minio miniotest.Once

func TestMain(m *testing.M) { os.Exit(minio.Run(m)) }

// countingStore wraps a real store and counts the requests made through it.
type countingStore struct {
	store.Store
	lists, gets atomic.Int64
}

func (c *countingStore) List(ctx context.Context, prefix string) ([]store.Object, error) {
	c.lists.Add(1)
	return c.Store.List(ctx, prefix)
}

func (c *countingStore) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, key, etag)
}

// skillFile returns a small SKILL.md.
func skillFile(name, desc string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nBody.\n")
}

func newDir(t *testing.T, files map[string]string) (*store.Dir, string) {
	t.Helper()
	root := t.TempDir()
	testkit.WriteFiles(t, root, files)
	d, err := store.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return d, root
}

func keys(objs []store.Object) []string {
	ks := make([]string, len(objs))
	for i, o := range objs {
		ks[i] = o.Key
	}
	return ks
}

func skillKeys(objs []catalog.SkillObject) []string {
	ks := make([]string, len(objs))
	for i, o := range objs {
		ks[i] = o.Key
	}
	return ks
}

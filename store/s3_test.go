package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

func TestS3ListPaginates(t *testing.T) {
	t.Parallel()
	st := storetest.S3(t, minio.Get(t))
	const n = 1200
	files := map[string][]byte{}
	for i := range n {
		dir := fmt.Sprintf("s%04d", i)
		files[skill.GlobalKey(dir)] = storetest.SkillFile(dir, "skill "+dir)
	}
	storetest.PutAll(t, st, files)

	objs, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != n {
		t.Fatalf("List returned %d keys, want %d", len(objs), n)
	}
	if !slices.IsSortedFunc(objs, func(a, b store.Object) int { return strings.Compare(a.Key, b.Key) }) {
		t.Error("List is not sorted by key")
	}
	for _, o := range objs {
		if want := int64(len(files[o.Key])); o.Size != want || !strings.HasPrefix(o.ETag, `"`) {
			t.Fatalf("object %+v: want size %d and a quoted ETag", o, want)
		}
	}
	if objs, err := st.List(t.Context(), "skills/s01"); err != nil || len(objs) != 100 {
		t.Errorf("List(skills/s01) = %d keys, %v; want 100", len(objs), err)
	}
	if objs, err := st.List(t.Context(), "agents/"); err != nil || objs == nil || len(objs) != 0 {
		t.Errorf("List(agents/) = %v, %v; want an empty, non-nil list", objs, err)
	}
	all, diags, err := catalog.ListAll(t.Context(), st)
	if err != nil || len(all) != n || len(diags) != 0 {
		t.Errorf("ListAll = %d skills, %d diagnostics, %v", len(all), len(diags), err)
	}
}

func TestS3GetConditional(t *testing.T) {
	t.Parallel()
	st := storetest.S3(t, minio.Get(t))
	ctx := t.Context()
	const key = "skills/a/SKILL.md"
	if err := st.Put(ctx, key, []byte("one")); err != nil {
		t.Fatal(err)
	}

	body, etag, err := st.Get(ctx, key, "")
	if err != nil || string(body) != "one" || !strings.HasPrefix(etag, `"`) {
		t.Fatalf("Get = %q, %q, %v", body, etag, err)
	}
	objs, err := st.List(ctx, "skills/")
	if err != nil || len(objs) != 1 || objs[0].ETag != etag {
		t.Fatalf("List = %+v, %v; want the ETag %s of Get", objs, err, etag)
	}

	if body, got, err := st.Get(ctx, key, etag); !errors.Is(err, store.ErrNotModified) || body != nil || got != etag {
		t.Errorf("Get(current etag) = %q, %q, %v; want ErrNotModified", body, got, err)
	}

	if err := st.Put(ctx, key, []byte("two")); err != nil {
		t.Fatal(err)
	}
	body, etag2, err := st.Get(ctx, key, etag)
	if err != nil || string(body) != "two" || etag2 == etag {
		t.Errorf("Get(old etag) after a change = %q, %q, %v; want the new body and ETag", body, etag2, err)
	}

	if _, _, err := st.Get(ctx, "skills/missing/SKILL.md", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(missing) = %v, want ErrNotFound", err)
	}
	if _, _, err := st.Get(ctx, "skills/missing/SKILL.md", etag); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(missing, etag) = %v, want ErrNotFound", err)
	}
	if _, _, err := st.Get(ctx, "../x", ""); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(../x) = %v, want a key error", err)
	}
	if err := st.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Get(ctx, key, etag2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	if err := st.Delete(ctx, key); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
}

// TestS3RegionAuto checks that MinIO accepts requests signed for region
// "auto", the region R2 wants.
func TestS3RegionAuto(t *testing.T) {
	t.Parallel()
	srv := minio.Get(t)
	st, err := store.NewS3(t.Context(), store.S3Config{
		Bucket: srv.Bucket(t), Endpoint: srv.Endpoint, Region: "auto", PathStyle: true,
		AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(t.Context(), "skills/a/SKILL.md", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if objs, err := st.List(t.Context(), ""); err != nil || len(objs) != 1 {
		t.Errorf("List = %v, %v", objs, err)
	}
}

// TestS3OpenURL opens the bucket through a --store URL with credentials
// from the standard AWS environment variables.
func TestS3OpenURL(t *testing.T) {
	srv := minio.Get(t)
	bucket := srv.Bucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_PROFILE", "")
	st, err := store.Open(t.Context(), srv.StoreURL(bucket))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.(*store.S3).CreateBucket(t.Context()); err != nil {
		t.Errorf("CreateBucket of an existing bucket: %v", err)
	}
	if err := st.(*store.S3).Put(t.Context(), "skills/a/SKILL.md", storetest.SkillFile("ay", "a")); err != nil {
		t.Fatal(err)
	}
	view, _, err := catalog.ListView(t.Context(), st, "main")
	if err != nil || len(view) != 1 {
		t.Errorf("ListView = %v, %v", view, err)
	}
}

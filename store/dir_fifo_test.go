//go:build unix && !aix && !solaris

// syscall.Mkfifo is missing on AIX, Solaris and illumos.

package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// hangTimeout is how long a store call may take before the test calls it
// hung; every call here returns at once unless it blocks on a pipe.
const hangTimeout = 10 * time.Second

// mkfifo makes a named pipe at key under root. Its cleanup opens the pipe
// for writing once, which releases any reader blocked opening it, so a
// failing run leaves no goroutine stuck.
func mkfifo(t *testing.T, root, key string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("named pipes unavailable: %v", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// within runs f and fails the test when it has not returned in hangTimeout.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hangTimeout):
		t.Fatalf("%s did not return in %v: it blocks on a named pipe", what, hangTimeout)
	}
}

// checkNotRegular checks that err is the error of reading key when it is
// not a regular file: ErrNotFound (the gateway answers 404), saying why.
func checkNotRegular(t *testing.T, key string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Get(%s) = %v; want ErrNotFound naming the key and \"not a regular file\"", key, err)
	}
}

// fifoDir returns a store whose skill directories hold named pipes: x's
// SKILL.md is one, w's is a symlink to it, and y (a normal skill) has one
// beside its SKILL.md. z is a normal skill.
func fifoDir(t *testing.T) *store.Dir {
	t.Helper()
	d, root := storetest.Dir(t, map[string]string{
		"skills/y/SKILL.md": string(storetest.SkillFile("y", "has a pipe beside it")),
		"skills/z/SKILL.md": string(storetest.SkillFile("z", "plain")),
	})
	mkfifo(t, root, "skills/x/SKILL.md")
	mkfifo(t, root, "skills/y/notes.txt")
	if err := os.MkdirAll(filepath.Join(root, "skills", "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../x/SKILL.md", filepath.Join(root, "skills", "w", "SKILL.md")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	return d
}

// A named pipe in a skill directory used to block each read of it forever
// (an OS thread each: enough reads exhausted the gateway's threads).
// Listing must not offer a pipe as a skill but report it, and the other
// skills must still load.
func TestDirFIFOLoad(t *testing.T) {
	t.Parallel()
	d := fifoDir(t)
	ctx := t.Context()

	var (
		objs  []catalog.SkillObject
		diags []skill.Diagnostic
		err   error
	)
	within(t, "ListAll", func() { objs, diags, err = catalog.ListAll(ctx, d) })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := storetest.SkillKeys(objs), []string{"skills/y/SKILL.md", "skills/z/SKILL.md"}; !slices.Equal(got, want) {
		t.Errorf("ListAll skills = %q, want %q", got, want)
	}
	var warned []string
	for _, dg := range diags {
		if dg.Level == skill.LevelWarn && strings.Contains(dg.Message, "not a regular file") {
			warned = append(warned, dg.Location)
		}
	}
	if want := []string{"skills/w/SKILL.md", "skills/x/SKILL.md"}; !slices.Equal(warned, want) {
		t.Errorf("ListAll warned about %q, want %q; diagnostics %+v", warned, want, diags)
	}

	var skills []catalog.Loaded
	within(t, "Load", func() { skills, diags, err = catalog.NewLoader(d).Load(ctx, objs) })
	if err != nil || len(skills) != 2 || len(diags) != 0 {
		t.Errorf("Load = %d skills, %+v, %v; want y and z, no diagnostics", len(skills), diags, err)
	}

	// A SKILL.md listed as a regular file and replaced by a pipe before it
	// is read is reported by the Loader too.
	raced, _ := catalog.Classify([]store.Object{{Key: "skills/x/SKILL.md", Size: 10, ETag: `"1-a"`}})
	within(t, "Load of a pipe", func() { skills, diags, err = catalog.NewLoader(d).Load(ctx, raced) })
	if err != nil || len(skills) != 0 || len(diags) != 1 || diags[0].Level != skill.LevelWarn ||
		!strings.Contains(diags[0].Message, "not a regular file") {
		t.Errorf("Load of a pipe = %d skills, %+v, %v; want one not-a-regular-file warning", len(skills), diags, err)
	}
}

// Get (SKILL.md loading and the gateway's /read) refuses every pipe at
// once, however many readers ask: none may block.
func TestDirFIFOGet(t *testing.T) {
	t.Parallel()
	d := fifoDir(t)
	ctx := t.Context()

	keys := []string{"skills/x/SKILL.md", "skills/y/notes.txt", "skills/w/SKILL.md"}
	const readers = 200
	errs := make([]error, readers)
	within(t, "concurrent Gets", func() {
		var wg sync.WaitGroup
		for i := range readers {
			wg.Go(func() { _, _, errs[i] = d.Get(ctx, keys[i%len(keys)], "") })
		}
		wg.Wait()
	})
	for i, err := range errs {
		checkNotRegular(t, keys[i%len(keys)], err)
	}
	if body, _, err := d.Get(ctx, "skills/y/SKILL.md", ""); err != nil || len(body) == 0 {
		t.Errorf("Get(skills/y/SKILL.md) beside a pipe = %q, %v", body, err)
	}
}

// A named pipe among a skill's other files is delivered as a File with
// Err "not a regular file", without a read, whether the listing marked it
// (NotRegular) or it was listed as a regular file and replaced by a pipe
// before its Get. The SKILL.md beside it loads.
func TestDirFIFOFiles(t *testing.T) {
	t.Parallel()
	d := fifoDir(t)
	ctx := t.Context()
	st := &storetest.Counting{Store: d}
	wantFiles := []governance.File{{Path: "notes.txt", Err: "not a regular file"}}

	objs, _, err := catalog.ListAll(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var loaded []catalog.Loaded
	within(t, "Load", func() { loaded, _, err = catalog.NewLoader(st).Load(ctx, objs) })
	if err != nil || len(loaded) != 2 || loaded[0].Skill.Key != "skills/y/SKILL.md" {
		t.Fatalf("Load = %d skills, %v; want y and z", len(loaded), err)
	}
	if got := loaded[0].Input.Files; !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("y's files = %+v, want %+v", got, wantFiles)
	}
	if n := st.Gets.Load(); n != 2 {
		t.Errorf("%d Gets, want 2 (the SKILL.md files; none for the listed pipe)", n)
	}

	// Listed as a regular file: the Get finds the pipe.
	raced := append([]catalog.SkillObject(nil), objs[0])
	raced[0].Files = []store.Object{{Key: "skills/y/notes.txt", Size: 10, ETag: `"1-a"`}}
	within(t, "Load of a pipe", func() { loaded, _, err = catalog.NewLoader(st).Load(ctx, raced) })
	wantFiles[0].Size, wantFiles[0].ETag = 10, `"1-a"` // as listed
	if err != nil || len(loaded) != 1 || !reflect.DeepEqual(loaded[0].Input.Files, wantFiles) {
		t.Errorf("Load of a raced pipe = %+v, %v; want y with %+v", loaded, err, wantFiles)
	}
}

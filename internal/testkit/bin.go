package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/corpus"
)

// binMu serializes Binaries within one test binary; binLock (a file lock)
// across the test binaries `go test ./...` runs side by side.
var binMu sync.Mutex

// Binaries returns a directory holding the programs of the given packages
// of this module ("cmd/skillgate"), built for this platform as make dist
// builds them (CGO_ENABLED=0, -trimpath), each named after the last
// element of its path ("NAME=PKG" names it NAME instead:
// "scan-yara=examples/scanners/yara"; Binary gives one's path).
//
// Every package's tests that run the programs share one build: the
// binaries live in a cache directory keyed by the module's source (every
// file but tests, docs and testdata) and the Go toolchain, so that a
// `go test ./...` builds each program at most once, however many packages
// run it, and a second run of unchanged code builds nothing. Keys not used
// for an hour are removed (see pruneBins). SKILLGATE_TEST_BIN_CACHE names
// another cache directory.
func Binaries(t testing.TB, pkgs ...string) string {
	t.Helper()
	dir, err := BuildBinaries(pkgs...)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return dir
}

// Binary returns the path of the program of one package, as Binaries
// builds it.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	return filepath.Join(Binaries(t, pkg), exeName(pkg))
}

// BuildBinaries is Binaries for a TestMain, where there is no testing.TB.
func BuildBinaries(pkgs ...string) (string, error) {
	binMu.Lock()
	defer binMu.Unlock()
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := corpus.ModuleRoot(wd)
	if err != nil {
		return "", err
	}
	key, err := sourceKey(root)
	if err != nil {
		return "", fmt.Errorf("hashing the module's source: %w", err)
	}
	base := os.Getenv("SKILLGATE_TEST_BIN_CACHE")
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			c = os.TempDir()
		}
		base = filepath.Join(c, "skillgate-test-bin")
	}
	dir := filepath.Join(base, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := binLock(filepath.Join(base, "lock"))
	if err != nil {
		return "", fmt.Errorf("locking the binary cache: %w", err)
	}
	defer unlock()
	var missing []string
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, exeName(p))); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		if err := build(root, dir, missing); err != nil {
			return "", err
		}
	}
	now := time.Now()
	os.Chtimes(dir, now, now) // in use: pruneBins keeps it
	pruneBins(base, key)
	return dir, nil
}

// exeName is the file name of the program of p, a package or NAME=PKG.
func exeName(p string) string {
	name, _, ok := strings.Cut(p, "=")
	if !ok {
		name = path.Base(p)
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return name
}

// build builds the packages into a fresh directory beside dir, in one go
// build (compiling what they share once), then moves each binary into dir.
func build(root, dir string, pkgs []string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The flags of make dist and the Dockerfile (and of make test's vet):
	// one compile of each package serves them all, and, free of the
	// checkout's path, every clone of the repository.
	args := []string{"build", "-trimpath", "-o", tmp + string(os.PathSeparator)}
	for _, p := range pkgs {
		if _, pkg, ok := strings.Cut(p, "="); ok {
			p = pkg
		}
		args = append(args, "./"+p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, p := range pkgs {
		built := p
		if _, pkg, ok := strings.Cut(p, "="); ok {
			built = pkg
		}
		if err := os.Rename(filepath.Join(tmp, exeName(built)), filepath.Join(dir, exeName(p))); err != nil {
			return err
		}
	}
	return nil
}

var (
	keyOnce sync.Once
	keyVal  string
	keyErr  error
)

// sourceKey hashes what a build of the module's programs reads: every
// file of the module but tests, Markdown and the testdata, .git, bin and
// dist directories, with the toolchain's version, platform and the
// environment that changes a build.
func sourceKey(root string) (string, error) {
	keyOnce.Do(func() {
		h := sha256.New()
		fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH, "CGO_ENABLED=0 -trimpath")
		for _, env := range []string{"GOFLAGS", "GOEXPERIMENT", "GOAMD64", "GOARM64", "GOTOOLCHAIN"} {
			fmt.Fprintf(h, "%s=%s\n", env, os.Getenv(env))
		}
		var files []string
		keyErr = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" ||
					(filepath.Dir(p) == root && (name == "bin" || name == "dist"))) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, ".md") {
				return nil
			}
			files = append(files, p)
			return nil
		})
		if keyErr != nil {
			return
		}
		slices.Sort(files)
		for _, p := range files {
			f, err := os.Open(p)
			if err != nil {
				keyErr = err
				return
			}
			rel, _ := filepath.Rel(root, p)
			fmt.Fprintf(h, "%s\n", filepath.ToSlash(rel))
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				keyErr = err
				return
			}
		}
		keyVal = hex.EncodeToString(h.Sum(nil))[:24]
	})
	return keyVal, keyErr
}

// pruneBins removes the keys of base, other than keep, that no test used
// for an hour, or for ten minutes when four others were used since: each
// holds the programs of one state of the source.
func pruneBins(base, keep string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	type key struct {
		name string
		used time.Time
	}
	var keys []key
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !e.IsDir() || e.Name() == keep {
			continue
		}
		if strings.HasPrefix(e.Name(), "build-") { // a build in progress, or left by a killed one
			if time.Since(fi.ModTime()) > time.Hour {
				os.RemoveAll(filepath.Join(base, e.Name()))
			}
			continue
		}
		keys = append(keys, key{e.Name(), fi.ModTime()})
	}
	slices.SortFunc(keys, func(a, b key) int { return b.used.Compare(a.used) })
	for i, k := range keys {
		if age := time.Since(k.used); age > time.Hour || (i >= 4 && age > 10*time.Minute) {
			os.RemoveAll(filepath.Join(base, k.name))
		}
	}
}

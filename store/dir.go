package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Dir is a Store backed by a local directory laid out like the bucket:
// the key "skills/github/SKILL.md" is the file root/skills/github/SKILL.md.
// It never reads outside root: symlinked directories are not followed when
// listing, and symlinks that resolve outside root are skipped by List and
// not found by Get.
type Dir struct {
	root string // absolute path of the root directory
}

// NewDir returns the store of the directory root, which must exist.
func NewDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("store directory %q: %w", root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("store directory %q: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("store directory %q is not a directory", root)
	}
	return &Dir{root: abs}, nil
}

// Root returns the absolute path of the store's directory.
func (d *Dir) Root() string { return d.root }

// List returns the files whose keys start with prefix, sorted by key.
// Entries that are not regular files (named pipes, devices, sockets, or
// symlinks to them) are marked NotRegular, so that a SKILL.md of that kind
// is reported instead of silently missing; Get never reads them. A prefix
// whose directory does not exist gives an empty list.
//
// A directory or file that the process may not read (permission denied)
// inside a skill directory, or a skill directory itself, is listed marked
// Unreadable (a directory's key ends in "/"): it holds its skill and no
// other. Any other error, and an unreadable directory above the skill
// directories (skills/, agents/, an agent's), fails the whole listing, so
// that a caller never mistakes a partial listing for deleted skills.
func (d *Dir) List(ctx context.Context, prefix string) ([]Object, error) {
	if strings.Contains(prefix, `\`) || strings.HasPrefix(prefix, "/") {
		return nil, fmt.Errorf("dir list %q: a prefix is a relative key with / separators", prefix)
	}
	// Walk the deepest directory the prefix names in full, then keep the
	// keys that start with the prefix (S3 semantics: "skills/gi" matches
	// "skills/github/SKILL.md").
	start := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
	}
	if !fs.ValidPath(start) {
		return nil, fmt.Errorf("dir list %q: a prefix must not contain empty, \".\" or \"..\" path elements", prefix)
	}
	root, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, fmt.Errorf("dir list %q: %w", prefix, err)
	}
	defer root.Close()

	if ok, err := isPlainDir(root, start); err != nil {
		return nil, fmt.Errorf("dir list %q: %w", prefix, err)
	} else if !ok {
		return []Object{}, nil
	}

	objs := []Object{}
	err = fs.WalkDir(root.FS(), start, func(name string, de fs.DirEntry, err error) error {
		if err != nil {
			if de != nil && de.IsDir() && unreadableInSkill(name+"/", err) {
				// The second call for a directory whose entries could not
				// be read: none of them is listed.
				if strings.HasPrefix(name+"/", prefix) {
					objs = append(objs, Object{Key: name + "/", Unreadable: true})
				}
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if de.IsDir() || !strings.HasPrefix(name, prefix) {
			return nil
		}
		o, ok, err := listed(root, name, de)
		if ok {
			objs = append(objs, o)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dir list %q: %w", prefix, err)
	}
	slices.SortFunc(objs, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return objs, nil
}

// listed returns the object of the file name that Dir.List's walk met
// (de), or none (ok false): a file removed while listing, or a symlink
// that escapes root, dangles, loops or leads to a directory. An error
// other than a permission error inside a skill directory fails the
// listing.
func listed(root *os.Root, name string, de fs.DirEntry) (o Object, ok bool, err error) {
	var fi fs.FileInfo
	switch {
	case de.Type().IsRegular():
		fi, err = de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return Object{}, false, nil // removed while listing
		}
	case de.Type()&fs.ModeSymlink != 0:
		// Follow a symlink to a file inside root; skip one that
		// escapes, dangles, loops or leads to a directory.
		fi, err = root.Stat(name)
		if err != nil || fi.IsDir() {
			return Object{}, false, nil
		}
	default:
		fi, err = de.Info() // sockets, devices, pipes
		if errors.Is(err, fs.ErrNotExist) {
			return Object{}, false, nil
		}
	}
	if err != nil {
		if unreadableInSkill(name, err) {
			return Object{Key: name, Unreadable: true}, true, nil
		}
		return Object{}, false, err
	}
	if !fi.Mode().IsRegular() {
		// Listed for catalog.Classify to report; it is never read.
		return Object{Key: name, NotRegular: true}, true, nil
	}
	return Object{Key: name, Size: fi.Size(), ETag: fileETag(fi)}, true, nil
}

// unreadableInSkill reports whether err, met listing key, is a permission
// error about a skill directory or something in one: the entry is then
// listed as Unreadable. A directory's key ends in "/".
func unreadableInSkill(key string, err error) bool {
	_, ok := SkillDir(key)
	return ok && errors.Is(err, fs.ErrPermission)
}

// isPlainDir reports whether name exists in root and is a directory that is
// reached without any symlink, so that List never follows a symlinked
// directory, whichever prefix it is given.
func isPlainDir(root *os.Root, name string) (bool, error) {
	if name == "." {
		return true, nil
	}
	parts := strings.Split(name, "/")
	for i := range parts {
		fi, err := root.Lstat(strings.Join(parts[:i+1], "/"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !fi.IsDir() {
			return false, nil
		}
	}
	return true, nil
}

// Get reads the file of key. It returns ErrNotModified when etag is the
// file's current ETag, ErrNotFound when there is no such regular file inside
// root (or the path to it goes through a symlinked directory, which List
// does not follow either; a named pipe, device or socket is "not a regular
// file" at once, never waited on), and ErrTooLarge when it is over
// MaxFileSize.
func (d *Dir) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	if err := ValidateKey(key); err != nil {
		return nil, "", fmt.Errorf("dir get %q: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("dir get %s: %w", key, err)
	}
	root, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, "", fmt.Errorf("dir get %s: %w", key, err)
	}
	defer root.Close()

	// Like List, follow no symlinked directory; a symlinked file inside
	// root is fine (os.Root keeps it from escaping).
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		if plain, err := isPlainDir(root, key[:i]); errors.Is(err, fs.ErrPermission) {
			return nil, "", fmt.Errorf("dir get %s: %w", key, ErrUnreadable)
		} else if err != nil {
			return nil, "", fmt.Errorf("dir get %s: %w", key, err)
		} else if !plain {
			return nil, "", fmt.Errorf("dir get %s: %w", key, ErrNotFound)
		}
	}
	// Opening a named pipe would block until a writer comes, holding an OS
	// thread; openFlags opens it without waiting, and the mode check below
	// refuses it (and devices and sockets) before any read.
	f, err := root.OpenFile(key, os.O_RDONLY|openFlags, 0)
	if err != nil {
		if notFound(root, key, err) {
			return nil, "", fmt.Errorf("dir get %s: %w", key, ErrNotFound)
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, "", fmt.Errorf("dir get %s: %w", key, ErrUnreadable)
		}
		return nil, "", fmt.Errorf("dir get %s: %w", key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("dir get %s: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, "", fmt.Errorf("dir get %s: %w", key, ErrNotRegular)
	}
	cur := fileETag(fi)
	if etag != "" && etag == cur {
		return nil, cur, fmt.Errorf("dir get %s: %w", key, ErrNotModified)
	}
	if fi.Size() > MaxFileSize {
		return nil, "", fmt.Errorf("dir get %s: %d bytes: %w", key, fi.Size(), ErrTooLarge)
	}
	// Stat may be stale (the file can grow after it), so the read is
	// bounded too.
	body, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, "", fmt.Errorf("dir get %s: %w", key, err)
	}
	if len(body) > MaxFileSize {
		return nil, "", fmt.Errorf("dir get %s: %w", key, ErrTooLarge)
	}
	return body, cur, nil
}

// notFound reports whether an error opening key means there is no file to
// read: it does not exist, a path element is not a directory, or key is a
// symlink that escapes root, dangles or loops.
func notFound(root *os.Root, key string, err error) bool {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return true
	}
	fi, lerr := root.Lstat(key)
	return lerr == nil && fi.Mode()&fs.ModeSymlink != 0
}

// fileETag is a cheap validator of a file's content, quoted like an S3
// ETag: its modification time in nanoseconds, its inode change time in
// nanoseconds and its inode number, and its size, in hex. The change time
// is the clock's at any write, rename or utimes, and no call sets it back:
// a rewrite of the same size whose mtime was put back still changes it.
// The inode changes with a rename over the file. Where the platform has
// neither (Windows), both are 0.
func fileETag(fi fs.FileInfo) string {
	ctime, ino := changeStamp(fi)
	b := make([]byte, 0, 2+4*16+3)
	b = append(b, '"')
	b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, ctime, 16)
	b = append(b, '-')
	b = strconv.AppendUint(b, ino, 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, fi.Size(), 16)
	b = append(b, '"')
	return string(b)
}

// SkillDir returns the skill directory prefix a key is under,
// skills/{dir}/ or agents/{agentId}/skills/{dir}/ (the layout of
// skill.GlobalPrefix and skill.AgentPrefix, which catalog's tests hold it
// to), without checking the names (skill.ParseKey does): ok is false for
// a key not under one. The directory store lists an unreadable entry
// under one instead of failing; catalog matches a skill's files to it.
func SkillDir(key string) (prefix string, ok bool) {
	const skills, agents = "skills/", "agents/"
	var n int // length of the part before {dir}
	if rest, ok := strings.CutPrefix(key, agents); ok {
		i := strings.IndexByte(rest, '/')
		if i < 0 || !strings.HasPrefix(rest[i+1:], skills) {
			return "", false
		}
		n = len(agents) + i + 1 + len(skills)
	} else if strings.HasPrefix(key, skills) {
		n = len(skills)
	} else {
		return "", false
	}
	j := strings.IndexByte(key[n:], '/')
	if j < 0 {
		return "", false
	}
	return key[:n+j+1], true
}

// ValidateKey checks a key before it is read: not empty, relative, with "/"
// separators and no backslash, no empty, "." or ".." path element, and no
// NUL byte. Both stores apply it, so a key behaves the same on either.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return errors.New("key is empty")
	case strings.HasPrefix(key, "/"):
		return errors.New("key must be relative, not start with \"/\"")
	case strings.Contains(key, `\`):
		return errors.New("key must use \"/\" separators, not a backslash")
	case strings.ContainsRune(key, 0):
		return errors.New("key contains a NUL byte")
	}
	for _, p := range strings.Split(key, "/") {
		switch p {
		case "", ".", "..":
			return errors.New("key must not contain an empty, \".\" or \"..\" path element")
		}
	}
	return nil
}

package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
	"golang.org/x/sync/errgroup"
)

// loadConcurrency bounds the Gets one Load runs at a time.
const loadConcurrency = 16

// Loader turns listed skill objects into parsed skills and the bytes of
// their skill directories. It caches each object it reads (SKILL.md files
// and the other files of their directories) with its ETag, so an unchanged
// object is never downloaded again: an object listed with the cached ETag
// costs no request, and a changed one costs a conditional Get. It is safe
// for concurrent use; concurrent Loads run one after the other.
type Loader struct {
	st store.Store

	mu    sync.Mutex // serializes Load; guards cache
	cache map[string]cached

	gets        atomic.Int64
	notModified atomic.Int64
	downloads   atomic.Int64
	hits        atomic.Int64
}

// cached is one object as read, by key: a SKILL.md (skill set) or another
// file of a skill directory (skill nil).
type cached struct {
	etag  string
	data  []byte
	skill *skill.Skill
	lines skill.TextLines // where skill's text was read, for the governance scanner
}

// LoaderStats counts a Loader's work since it was made. Every object read
// counts, SKILL.md files and the other files of skill directories alike.
type LoaderStats struct {
	Gets        int64 // Get requests sent
	NotModified int64 // Gets answered "not modified"
	Downloads   int64 // Gets that transferred a body
	CacheHits   int64 // objects served from the cache without a request
}

// NewLoader returns a Loader reading from st.
func NewLoader(st store.Store) *Loader {
	return &Loader{st: st, cache: map[string]cached{}}
}

// Stats returns the Loader's counters.
func (l *Loader) Stats() LoaderStats {
	return LoaderStats{
		Gets:        l.gets.Load(),
		NotModified: l.notModified.Load(),
		Downloads:   l.downloads.Load(),
		CacheHits:   l.hits.Load(),
	}
}

// Loaded is one loaded skill with the bytes the governance scanner reads.
type Loaded struct {
	Skill *skill.Skill
	// Input is the skill directory as read: SKILL.md's bytes and its other
	// files (paths relative to the directory, "/"-separated), within
	// governance.Budget; a file refused by the caps, unreadable, or not a
	// regular file has Err set instead of Data, and its listed Size and
	// ETag; the files the count cap left out are in Files (the first, for
	// them all) and Skipped (the others). These bytes are the ones the
	// scanner reads, and the ones the gateway serves.
	Input governance.Input
}

// Error texts of a skill directory's file that is not read.
const (
	errTextNotRegular    = "not a regular file"
	errTextUnreadable    = "a file the gateway cannot read"
	errTextUnreadableDir = "a directory the gateway cannot read"
)

// errTextTooLarge is the Err of a file found over the cap by the read, not
// the listing (governance.Budget words the listed ones): the cap is the
// store's, store.MaxFileSize, which the loader gives governance.
var errTextTooLarge = governance.TooLargeText(store.MaxFileSize)

// IsTooLarge reports whether a governance.File's Err says the file is over
// the 256 KiB file limit (as listed or as read): the gateway answers 413
// for it rather than 403.
func IsTooLarge(f *governance.File) bool {
	return strings.HasSuffix(f.Err, errTextTooLarge)
}

// IsNotRegular reports whether a governance.File's Err says the file is a
// named pipe, device or socket, which no store serves (404).
func IsNotRegular(f *governance.File) bool { return f.Err == errTextNotRegular }

// Load returns the loaded skills of objs, in objs order, each with its
// skill directory as read.
//
// A SKILL.md over MaxFileSize is skipped with an error-level diagnostic, one
// deleted since the listing with an info diagnostic, one that is not a
// regular file or that the store may not read with a warning; parse
// findings stay in each Skill's Diagnostics.
//
// The other files of a loaded skill (SkillObject.Files) are offered to a
// governance.Budget in path order with their listed sizes, and the
// admitted ones are read through the same cache as SKILL.md files. In
// Input.Files, in path order, a file refused by the budget, found over the
// size cap by the read, not a regular file (as listed or as read), or that
// the store may not read (a directory too: its path ends in "/") has Err
// set; the files refused for the count cap are summed up in one last File
// (Budget.Unread), the others in Input.Skipped; a file deleted since the
// listing is left out; an object not under the skill's directory prefix
// is ignored. The files of a skill whose SKILL.md is not loaded are not
// read: they are read once every SKILL.md is, at most loadConcurrency Gets
// at a time as for SKILL.md files.
//
// Any other storage error fails the whole Load (the caller keeps its last
// good snapshot) and leaves the cache as it was. Otherwise the cache keeps
// exactly the loaded objects, SKILL.md files and other files, so its
// memory follows the bucket. Returned skills and Input bytes (SkillMD and
// each File's Data) are shared with the cache and later Loads: treat them
// as read-only.
func (l *Loader) Load(ctx context.Context, objs []SkillObject) ([]Loaded, []skill.Diagnostic, error) {
	l.mu.Lock()
	defer l.mu.Unlock()

	results, err := l.loadSkills(ctx, objs)
	if err != nil {
		return nil, nil, err
	}
	// The other files of the loaded skills' directories.
	fileReads := l.planFiles(objs, results)
	err = parallel(ctx, len(fileReads), func(ctx context.Context, j int) error {
		return l.readFile(ctx, &fileReads[j])
	})
	if err != nil {
		return nil, nil, err
	}
	gone := applyFiles(results, fileReads)
	loaded, diags, next := assemble(objs, results, gone)
	l.cache = next
	return loaded, diags, nil
}

// loadSkills reads the SKILL.md files of objs (the cached ones not
// again), at most loadConcurrency at a time: a result for each, in objs
// order.
func (l *Loader) loadSkills(ctx context.Context, objs []SkillObject) ([]loadResult, error) {
	results := make([]loadResult, len(objs))
	type skillRead struct {
		i    int // index in objs
		c    cached
		have bool
	}
	var skillReads []skillRead
	for i, o := range objs {
		c, have := l.cache[o.Key]
		have = have && c.skill != nil
		switch {
		case have && o.ETag != "" && c.etag == o.ETag:
			l.hits.Add(1)
			results[i] = loadResult{entry: c, ok: true}
		case o.Size > store.MaxFileSize:
			results[i] = loadResult{diag: tooLarge(o.Key, o.Size)}
		default:
			if !have {
				c = cached{}
			}
			skillReads = append(skillReads, skillRead{i, c, have})
		}
	}
	err := parallel(ctx, len(skillReads), func(ctx context.Context, j int) error {
		r := skillReads[j]
		res, err := l.fetchSkill(ctx, objs[r.i], r.c, r.have)
		results[r.i] = res
		return err
	})
	return results, err
}

// fileRead is one file of a loaded skill's directory to read, and the
// outcome of reading it.
type fileRead struct {
	i, f int // index in objs and in results[i].files
	o    store.Object
	c    cached
	have bool

	// The outcome: read (entry), refused (err), or deleted (gone).
	entry cached
	read  bool
	err   string
	gone  bool
}

// planFiles offers the other files of each loaded skill's directory to
// the directory's budget, in path order, and fills results[i].files:
// refused, unreadable and not regular files with their Err, cached ones
// with their Data. It returns the files to read.
func (l *Loader) planFiles(objs []SkillObject, results []loadResult) []fileRead {
	var fileReads []fileRead
	for i, o := range objs {
		if !results[i].ok || len(o.Files) == 0 {
			continue
		}
		prefix := dirPrefix(o.Key)
		var (
			budget = &governance.Budget{MaxFileBytes: store.MaxFileSize}
			files  []governance.File
			admits []admitted
		)
		for _, f := range o.Files {
			path, ok := strings.CutPrefix(f.Key, prefix)
			if !ok || path == "" || f.Key == o.Key {
				continue // not a file of this directory
			}
			if f.Unreadable {
				e := errTextUnreadable
				if strings.HasSuffix(path, "/") {
					e = errTextUnreadableDir
				}
				files = append(files, governance.File{Path: path, Err: e})
				continue
			}
			if f.NotRegular {
				files = append(files, governance.File{Path: path, Err: errTextNotRegular})
				continue
			}
			if ok, refused := budget.AdmitFile(governance.File{Path: path, Size: f.Size, ETag: f.ETag}); !ok {
				if refused != nil {
					files = append(files, *refused)
				}
				continue
			}
			files = append(files, governance.File{Path: path})
			admits = append(admits, admitted{len(files) - 1, f.Size, f.ETag})
			c, have := l.cache[f.Key]
			have = have && c.skill == nil
			if have && f.ETag != "" && c.etag == f.ETag {
				l.hits.Add(1)
				files[len(files)-1].Data = c.data
				results[i].cached = append(results[i].cached, keyed{f.Key, c})
				continue
			}
			if !have {
				c = cached{}
			}
			fileReads = append(fileReads, fileRead{i: i, f: len(files) - 1, o: f, c: c, have: have})
		}
		results[i].files = append(files, budget.Unread()...)
		results[i].skipped = budget.Skipped()
		results[i].budget, results[i].admitted = budget, admits
	}
	return fileReads
}

// readFile reads one file of a skill's directory into r. A file refused
// by what the read found, or deleted since the listing, is an outcome;
// any other storage error is returned.
func (l *Loader) readFile(ctx context.Context, r *fileRead) error {
	e, _, err := l.get(ctx, r.o.Key, r.o.ETag, r.c, r.have)
	switch {
	case err == nil:
		r.entry, r.read = e, true
	case errors.Is(err, store.ErrTooLarge):
		r.err = errTextTooLarge
	case errors.Is(err, store.ErrNotRegular):
		// Replaced by a named pipe, device or socket since the listing.
		r.err = errTextNotRegular
	case errors.Is(err, store.ErrUnreadable):
		r.err = errTextUnreadable
	case errors.Is(err, store.ErrNotFound):
		r.gone = true // deleted since the listing
	default:
		return err
	}
	return nil
}

// applyFiles puts the outcome of each file read into its skill's files,
// then keeps or refuses each file read by what it is. It returns the
// skills (by index) with a file deleted since the listing.
func applyFiles(results []loadResult, fileReads []fileRead) (gone map[int]bool) {
	gone = map[int]bool{}
	for _, r := range fileReads {
		f := &results[r.i].files[r.f]
		switch {
		case r.read:
			f.Data = r.entry.data
			results[r.i].cached = append(results[r.i].cached, keyed{r.o.Key, r.entry})
		case r.gone:
			f.Path = "" // marks it for withoutDropped
			gone[r.i] = true
		default:
			f.Err, f.Size, f.ETag = r.err, r.o.Size, r.o.ETag
		}
	}
	// Each file read is kept or refused by what it is, in path order
	// (governance.Budget.Keep): a refused one is not scanned and not
	// served. Its bytes stay in the cache (AdmitFile bounds what is read),
	// so that an unchanged poll reads nothing again.
	for i := range results {
		r := &results[i]
		for _, a := range r.admitted {
			f := &r.files[a.f]
			if f.Path == "" || f.Err != "" {
				continue
			}
			if no := r.budget.Keep(governance.File{Path: f.Path, Data: f.Data, Size: a.size, ETag: a.etag}); no != nil {
				*f = *no
			}
		}
	}
	return gone
}

// assemble returns the loaded skills, in objs order, the diagnostics of
// those not loaded, and the next cache: exactly the loaded objects.
func assemble(objs []SkillObject, results []loadResult, gone map[int]bool) ([]Loaded, []skill.Diagnostic, map[string]cached) {
	size := len(objs)
	for _, r := range results {
		size += len(r.cached)
	}
	var (
		loaded []Loaded
		diags  []skill.Diagnostic
		next   = make(map[string]cached, size)
	)
	for i, r := range results {
		if r.diag != nil {
			diags = append(diags, *r.diag)
		}
		if !r.ok {
			continue
		}
		next[objs[i].Key] = r.entry
		for _, k := range r.cached {
			next[k.key] = k.entry
		}
		files := r.files
		if gone[i] {
			files = withoutDropped(files)
		}
		// In path order: files after the count cap's first that were not
		// offered to the budget (not regular, unreadable) precede the one
		// File Budget.Unread appended for it.
		if !slices.IsSortedFunc(files, comparePaths) {
			slices.SortStableFunc(files, comparePaths)
		}
		loaded = append(loaded, Loaded{
			Skill: r.entry.skill,
			// The scanner reads the skill as parsed here: SKILL.md is
			// parsed once.
			Input: governance.Input{SkillMD: r.entry.data, Skill: r.entry.skill, Lines: r.entry.lines, Files: files, Skipped: r.skipped,
				MaxFileBytes: store.MaxFileSize},
		})
	}
	return loaded, diags, next
}

func comparePaths(a, b governance.File) int { return strings.Compare(a.Path, b.Path) }

// withoutDropped leaves out the files marked with an empty Path (no file
// of a directory has one), in place.
func withoutDropped(files []governance.File) []governance.File {
	out := files[:0]
	for _, f := range files {
		if f.Path != "" {
			out = append(out, f)
		}
	}
	return out
}

// loadResult is the outcome for one skill: a loaded entry (ok) and/or a
// diagnostic, and for a loaded one the files of its directory and the
// cache entries of those read.
type loadResult struct {
	entry   cached
	ok      bool
	diag    *skill.Diagnostic
	files   []governance.File
	skipped []governance.File
	cached  []keyed

	budget   *governance.Budget // the directory's files' budget: AdmitFile done, Keep once they are read
	admitted []admitted         // the files it admitted, in path order
}

// admitted is a file the budget admitted for reading: its index in
// loadResult.files and its listed size and ETag.
type admitted struct {
	f    int
	size int64
	etag string
}

// keyed is a cache entry with its key.
type keyed struct {
	key   string
	entry cached
}

// parallel runs f(ctx, j) for each j in [0, n), at most loadConcurrency
// at a time. The first error cancels the rest and is returned; so is the
// end of ctx, even when n is 0.
func parallel(ctx context.Context, n int, f func(ctx context.Context, j int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(loadConcurrency)
	for j := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil // canceled while it waited for its turn: not started
			}
			return f(gctx, j)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err() // the caller's context ended
}

// get reads key with a Get, conditional on c's ETag when there is a cached
// entry (have): not modified gives c back, a download a new entry (fresh)
// whose ETag is the Get's, else the listed one.
func (l *Loader) get(ctx context.Context, key, listedETag string, c cached, have bool) (e cached, fresh bool, err error) {
	l.gets.Add(1)
	body, etag, err := l.st.Get(ctx, key, c.etag)
	switch {
	case errors.Is(err, store.ErrNotModified) && have:
		l.notModified.Add(1)
		return c, false, nil
	case err != nil:
		return cached{}, false, err
	}
	l.downloads.Add(1)
	if etag == "" {
		etag = listedETag
	}
	return cached{etag: etag, data: body}, true, nil
}

// fetchSkill reads one SKILL.md with a conditional Get against its cached
// entry (have) and parses it when it changed.
func (l *Loader) fetchSkill(ctx context.Context, o SkillObject, c cached, have bool) (loadResult, error) {
	e, fresh, err := l.get(ctx, o.Key, o.ETag, c, have)
	switch {
	case errors.Is(err, store.ErrTooLarge):
		return loadResult{diag: tooLarge(o.Key, -1)}, nil
	case errors.Is(err, store.ErrNotRegular):
		// Replaced by a named pipe, device or socket since the listing.
		d := notRegular(o.Key)
		return loadResult{diag: &d}, nil
	case errors.Is(err, store.ErrUnreadable):
		return loadResult{diag: &skill.Diagnostic{
			Location: o.Key,
			Level:    skill.LevelWarn,
			Message:  o.Key + " cannot be read by the gateway (permission denied); it is not loaded",
		}}, nil
	case errors.Is(err, store.ErrNotFound):
		return loadResult{diag: &skill.Diagnostic{
			Location: o.Key,
			Level:    skill.LevelInfo,
			Message:  o.Key + " was deleted after it was listed; it is not loaded",
		}}, nil
	case err != nil:
		return loadResult{}, err
	}
	if fresh {
		e.skill, e.lines = skill.ParseLines(o.Ref, e.data)
	}
	return loadResult{entry: e, ok: true}, nil
}

// tooLarge is the diagnostic of a file over MaxFileSize; size < 0 when only
// the read found out.
func tooLarge(key string, size int64) *skill.Diagnostic {
	kib := store.MaxFileSize >> 10
	msg := fmt.Sprintf("%s is over the %d KiB limit; it is not loaded", key, kib)
	if size >= 0 {
		msg = fmt.Sprintf("%s is %d bytes, over the %d KiB limit; it is not loaded", key, size, kib)
	}
	return &skill.Diagnostic{Location: key, Level: skill.LevelError, Message: msg}
}

// notRegular is the diagnostic of a SKILL.md that is a named pipe, device or
// socket: the directory store never reads one.
func notRegular(key string) skill.Diagnostic {
	return skill.Diagnostic{
		Location: key,
		Level:    skill.LevelWarn,
		Message:  key + " is not a regular file (a named pipe, device or socket); it is not loaded — replace it with a regular file",
	}
}

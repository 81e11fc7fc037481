package r2store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/skillgate/skillgate/skill"
)

// loadConcurrency bounds the Gets one Load runs at a time.
const loadConcurrency = 16

// Loader turns listed skill objects into parsed skills. It caches each
// parsed file with its ETag, so an unchanged file is never downloaded again:
// an object listed with the cached ETag costs no request, and a changed one
// costs a conditional Get. It is safe for concurrent use; concurrent Loads
// run one after the other.
type Loader struct {
	st Store

	mu    sync.Mutex // serializes Load; guards cache
	cache map[string]cached

	gets        atomic.Int64
	notModified atomic.Int64
	downloads   atomic.Int64
	hits        atomic.Int64
}

type cached struct {
	etag  string
	skill *skill.Skill
}

// LoaderStats counts a Loader's work since it was made.
type LoaderStats struct {
	Gets        int64 // Get requests sent
	NotModified int64 // Gets answered "not modified"
	Downloads   int64 // Gets that transferred a body
	CacheHits   int64 // objects served from the cache without a request
}

// NewLoader returns a Loader reading from st.
func NewLoader(st Store) *Loader {
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

// Load returns the parsed skills of objs, in objs order. Files over
// MaxFileSize are skipped with an error-level diagnostic, files deleted
// since the listing with an info diagnostic; parse findings stay in each
// Skill's Diagnostics. Any other storage error fails the whole Load (the
// caller keeps its last good snapshot) and leaves the cache as it was.
// Otherwise the cache keeps exactly the loaded objects, so its memory
// follows the bucket. Returned skills are shared with the cache and later
// Loads: treat them as read-only.
func (l *Loader) Load(ctx context.Context, objs []SkillObject) ([]*skill.Skill, []skill.Diagnostic, error) {
	l.mu.Lock()
	defer l.mu.Unlock()

	results := make([]loadResult, len(objs))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, loadConcurrency)
		once sync.Once
		fail error
	)
	for i, o := range objs {
		c, ok := l.cache[o.Key]
		if ok && o.ETag != "" && c.etag == o.ETag {
			l.hits.Add(1)
			results[i] = loadResult{entry: c, ok: true}
			continue
		}
		if o.Size > MaxFileSize {
			results[i] = loadResult{diag: tooLarge(o.Key, o.Size)}
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := l.fetch(ctx, o, c)
			if err != nil {
				once.Do(func() { fail = err; cancel() })
				return
			}
			results[i] = r
		}()
	}
	wg.Wait()
	if fail == nil {
		fail = ctx.Err() // the caller's context ended
	}
	if fail != nil {
		return nil, nil, fail
	}

	var (
		skills []*skill.Skill
		diags  []skill.Diagnostic
		next   = make(map[string]cached, len(objs))
	)
	for i, r := range results {
		if r.diag != nil {
			diags = append(diags, *r.diag)
		}
		if r.ok {
			skills = append(skills, r.entry.skill)
			next[objs[i].Key] = r.entry
		}
	}
	l.cache = next
	return skills, diags, nil
}

// loadResult is the outcome for one object: a loaded entry (ok) and/or a
// diagnostic.
type loadResult struct {
	entry cached
	ok    bool
	diag  *skill.Diagnostic
}

// fetch reads one object with a conditional Get against its cached entry
// (the zero value when there is none) and parses it.
func (l *Loader) fetch(ctx context.Context, o SkillObject, c cached) (loadResult, error) {
	l.gets.Add(1)
	body, etag, err := l.st.Get(ctx, o.Key, c.etag)
	switch {
	case errors.Is(err, ErrNotModified) && c.skill != nil:
		l.notModified.Add(1)
		return loadResult{entry: c, ok: true}, nil
	case errors.Is(err, ErrTooLarge):
		return loadResult{diag: tooLarge(o.Key, -1)}, nil
	case errors.Is(err, errNotRegular):
		// Replaced by a named pipe, device or socket since the listing.
		d := notRegular(o.Key)
		return loadResult{diag: &d}, nil
	case errors.Is(err, ErrNotFound):
		return loadResult{diag: &skill.Diagnostic{
			Location: o.Key,
			Level:    skill.LevelInfo,
			Message:  o.Key + " was deleted after it was listed; it is not loaded",
		}}, nil
	case err != nil:
		return loadResult{}, err
	}
	l.downloads.Add(1)
	if etag == "" {
		etag = o.ETag
	}
	return loadResult{entry: cached{etag: etag, skill: skill.Parse(o.Ref, body)}, ok: true}, nil
}

// tooLarge is the diagnostic of a file over MaxFileSize; size < 0 when only
// the read found out.
func tooLarge(key string, size int64) *skill.Diagnostic {
	msg := key + " is over the 256 KiB limit; it is not loaded"
	if size >= 0 {
		msg = fmt.Sprintf("%s is %d bytes, over the 256 KiB limit; it is not loaded", key, size)
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

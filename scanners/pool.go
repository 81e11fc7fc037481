package scanners

import (
	"context"
	"sync"
)

// key identifies one scanner's result for one content: the skill
// directory's governance digest and the scanner's Config.Fingerprint.
type key struct{ digest, config string }

// Cache keeps scanners' answers (never failures) by skill digest and
// scanner fingerprint, at most a fixed number, the oldest dropped first.
// It is safe for concurrent use and never blocks on a scan.
type Cache struct {
	mu    sync.Mutex
	max   int
	seq   uint64
	m     map[key]cached
	order []ordered // insertion order, for eviction; may hold stale entries
}

type cached struct {
	r   Result
	seq uint64
}

type ordered struct {
	k   key
	seq uint64
}

// NewCache returns a cache of at most max answers (DefaultCacheSize when
// max ≤ 0).
func NewCache(max int) *Cache {
	if max <= 0 {
		max = DefaultCacheSize
	}
	return &Cache{max: max, m: map[key]cached{}}
}

// Get returns the answer of cfg's scanner for the content digest, if
// cached.
func (c *Cache) Get(digest string, cfg *Config) (Result, bool) {
	return c.get(key{digest, cfg.Fingerprint()})
}

func (c *Cache) get(k key) (Result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	return e.r, ok
}

// Put caches an answer and reports whether it did: a failure
// (VerdictError) is not cached.
func (c *Cache) Put(digest string, cfg *Config, r Result) bool {
	return c.put(key{digest, cfg.Fingerprint()}, r)
}

func (c *Cache) put(k key, r Result) bool {
	if r.Failed() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.m[k] = cached{r, e.seq}
		return true
	}
	for len(c.m) >= c.max && len(c.order) > 0 {
		o := c.order[0]
		c.order = c.order[1:]
		if e, ok := c.m[o.k]; ok && e.seq == o.seq {
			delete(c.m, o.k)
		}
	}
	c.seq++
	c.m[k] = cached{r, c.seq}
	c.order = append(c.order, ordered{k, c.seq})
	if len(c.order) > 2*len(c.m)+64 {
		c.compact()
	}
	return true
}

// compact drops the stale entries of c.order. c.mu is held.
func (c *Cache) compact() {
	live := c.order[:0:0]
	for _, o := range c.order {
		if e, ok := c.m[o.k]; ok && e.seq == o.seq {
			live = append(live, o)
		}
	}
	c.order = live
}

// Retain drops every answer for which keep(digest, fingerprint) is false:
// call it with the current contents' digests and the current scanners'
// fingerprints so that memory follows the bucket.
func (c *Cache) Retain(keep func(digest, fingerprint string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !keep(k.digest, k.config) {
			delete(c.m, k)
		}
	}
	c.compact()
}

// Len returns the number of answers cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// PoolOptions configure a Pool.
type PoolOptions struct {
	// Concurrency is the most scans at once (DefaultConcurrency when ≤ 0):
	// gateway.governance.scanConcurrency.
	Concurrency int
	// Cache keeps the answers (a new NewCache(0) when nil).
	Cache *Cache
	// OnResult, when set, is called after each scan that ended with an
	// answer or a failure (not one canceled by Retain or Close), on the
	// scan's goroutine, after the result is visible to Lookup. It must not
	// block for long nor call Close (which waits for it). The gateway uses
	// it to wake its poll loop (a non-blocking send).
	OnResult func(digest string, r Result)
}

// Pool runs scans in the background, at most Concurrency at once, and
// keeps their results: answers in its Cache, and for a scanner that
// failed the latest failure until an answer replaces it. Lookup never
// waits for a scan; Schedule never blocks. Close cancels every scan and
// waits for them.
//
// A gateway calls Schedule for each current content and scanner at every
// poll (it does nothing when an answer is cached or a scan is queued or
// running, and retries a failure), and Lookup wherever it needs the
// results.
type Pool struct {
	cache    *Cache
	limit    int
	onResult func(string, Result)
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	running int
	queue   []*job
	jobs    map[key]*job   // queued or running
	failed  map[key]Result // the latest failure of a key with no answer
}

// job is one scan, queued or running.
type job struct {
	k       key
	cfg     Config
	files   map[string][]byte
	cancel  context.CancelFunc // set when running
	dropped bool               // Retain or Close dropped it: its result is not kept
}

// NewPool returns a Pool; Close it.
func NewPool(o PoolOptions) *Pool {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Cache == nil {
		o.Cache = NewCache(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{cache: o.Cache, limit: o.Concurrency, onResult: o.OnResult, ctx: ctx, cancel: cancel,
		jobs: map[key]*job{}, failed: map[key]Result{}}
}

// Cache returns the pool's cache.
func (p *Pool) Cache() *Cache { return p.cache }

// Lookup returns cfg's scanner's result for the content digest: the cached
// answer, else the latest failure (a retry may be running), else false:
// never scanned yet (or a scan is queued or running).
func (p *Pool) Lookup(digest string, cfg *Config) (Result, bool) {
	k := key{digest, cfg.Fingerprint()}
	if r, ok := p.cache.get(k); ok {
		return r, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.failed[k]
	return r, ok
}

// Pending reports whether a scan of the content digest by cfg's scanner is
// queued or running.
func (p *Pool) Pending(digest string, cfg *Config) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jobs[key{digest, cfg.Fingerprint()}] != nil
}

// Schedule queues a scan of the content digest (whose files are files,
// not to be changed afterwards) by cfg's scanner, unless an answer is
// cached, the scan is already queued or running, or the pool is closed;
// it reports whether it queued one. It never blocks on a scan.
func (p *Pool) Schedule(digest string, cfg Config, files map[string][]byte) bool {
	k := key{digest, cfg.Fingerprint()}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.jobs[k] != nil {
		return false
	}
	if _, ok := p.cache.get(k); ok {
		return false
	}
	j := &job{k: k, cfg: cfg, files: files}
	p.jobs[k] = j
	p.queue = append(p.queue, j)
	p.startLocked()
	return true
}

// startLocked starts queued jobs while there is room. p.mu is held.
func (p *Pool) startLocked() {
	for p.running < p.limit && len(p.queue) > 0 {
		j := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		ctx, cancel := context.WithCancel(p.ctx)
		j.cancel = cancel
		p.running++
		p.wg.Go(func() { p.run(ctx, j) })
	}
}

// run runs one job, keeps its result and starts the next.
func (p *Pool) run(ctx context.Context, j *job) {
	r := Run(ctx, j.cfg, j.files)
	j.cancel()
	p.mu.Lock()
	p.running--
	if p.jobs[j.k] == j {
		delete(p.jobs, j.k)
	}
	keep := !j.dropped && !p.closed
	if keep {
		if r.Failed() {
			p.failed[j.k] = r
		} else {
			delete(p.failed, j.k)
			p.cache.put(j.k, r)
		}
	}
	if !p.closed {
		p.startLocked()
	}
	p.mu.Unlock()
	if keep && p.onResult != nil {
		p.onResult(j.k.digest, r)
	}
}

// Retain drops every queued job, running scan (canceled), failure and
// cached answer for which keep(digest, fingerprint) is false: call it
// after each poll with the current contents' digests and the current
// scanners' fingerprints.
func (p *Pool) Retain(keep func(digest, fingerprint string) bool) {
	p.mu.Lock()
	q := p.queue[:0]
	for _, j := range p.queue {
		if keep(j.k.digest, j.k.config) {
			q = append(q, j)
		} else {
			j.dropped = true
			delete(p.jobs, j.k)
		}
	}
	clear(p.queue[len(q):])
	p.queue = q
	for k, j := range p.jobs {
		if j.cancel != nil && !keep(k.digest, k.config) {
			j.dropped = true
			j.cancel()
			delete(p.jobs, k)
		}
	}
	for k := range p.failed {
		if !keep(k.digest, k.config) {
			delete(p.failed, k)
		}
	}
	p.mu.Unlock()
	p.cache.Retain(keep)
}

// Close cancels every scan (their processes are killed), drops the queue
// and waits for the scans' goroutines. Lookup still answers from what was
// kept; Schedule does nothing.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	for _, j := range p.queue {
		j.dropped = true
		delete(p.jobs, j.k)
	}
	p.queue = nil
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
}

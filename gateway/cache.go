package gateway

import (
	"sync"
)

// Defaults of the per-agent answer caches.
const (
	// MaxCachedAgents bounds the entries of each cache: agent ids come
	// from requests.
	MaxCachedAgents = 4096
	// DefaultCacheBytes bounds the bytes of each cache. Agents without
	// skills of their own share one entry, so only agents with local
	// skills (which the bucket, not a client, decides) take more.
	DefaultCacheBytes = 256 << 20
)

// viewCache holds one answer per view key (see viewKey) as of a
// generation. It is bounded by entries and by bytes; past a bound it
// evicts stale entries first, then arbitrary ones (Go's map order), never
// the whole cache at once, so no bound makes every agent miss together.
type viewCache[V any] struct {
	maxEntries int
	maxBytes   int64

	mu      sync.RWMutex
	entries map[string]*cached[V]
	bytes   int64
}

type cached[V any] struct {
	gen  uint64
	size int64
	val  V
}

func newViewCache[V any](maxEntries int, maxBytes int64) *viewCache[V] {
	return &viewCache[V]{maxEntries: maxEntries, maxBytes: maxBytes, entries: map[string]*cached[V]{}}
}

// get returns the value of key if it was stored at generation gen.
func (c *viewCache[V]) get(key string, gen uint64) (V, bool) {
	c.mu.RLock()
	e := c.entries[key]
	c.mu.RUnlock()
	if e == nil || e.gen != gen {
		var zero V
		return zero, false
	}
	return e.val, true
}

// peek returns the value of key whatever its generation.
func (c *viewCache[V]) peek(key string) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.entries[key]; e != nil {
		return e.val, true
	}
	var zero V
	return zero, false
}

// put stores val of the given size for key at generation gen, evicting
// what the bounds require; cur is the current generation (entries of
// other generations are stale and go first).
func (c *viewCache[V]) put(key string, gen, cur uint64, size int64, val V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(key)
	over := func() bool { return len(c.entries) >= c.maxEntries || c.bytes+size > c.maxBytes }
	if over() {
		for k, e := range c.entries {
			if e.gen != cur {
				c.removeLocked(k)
			}
		}
	}
	for k := range c.entries {
		if !over() {
			break
		}
		c.removeLocked(k)
	}
	c.entries[key] = &cached[V]{gen: gen, size: size, val: val}
	c.bytes += size
}

// drop removes key.
func (c *viewCache[V]) drop(key string) {
	c.mu.Lock()
	c.removeLocked(key)
	c.mu.Unlock()
}

// clear removes every entry.
func (c *viewCache[V]) clear() {
	c.mu.Lock()
	clear(c.entries)
	c.bytes = 0
	c.mu.Unlock()
}

// stats returns the number of entries and their bytes.
func (c *viewCache[V]) stats() (entries int, bytes int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries), c.bytes
}

func (c *viewCache[V]) removeLocked(key string) {
	if e, ok := c.entries[key]; ok {
		c.bytes -= e.size
		delete(c.entries, key)
	}
}

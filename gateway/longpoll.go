package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/promptbuild"
)

// A long poll over HTTP/1 does not keep its request's goroutine and
// buffers while it waits: the handler takes the connection over (hijack),
// parks it in the change feed and returns. What stays is the connection,
// this struct, a timer and one goroutine blocked reading the socket to
// notice a client that leaves: about 5 KiB instead of about 16 KiB with
// net/http's own goroutine and buffers (BENCHMARKS.md). A change of the
// waiter's view wakes it (changeFeed.wake); it looks at its block again and
// answers, or parks again. The answer closes the connection.

// parkedPoll is one long poll waiting without a goroutine of its own.
type parkedPoll struct {
	s       *Server
	conn    net.Conn
	agentID string
	budget  promptbuild.Budget
	etag    string
	gzip    bool
	done    atomic.Bool // answered, timed out, left or closed: once
	release func()      // its count in the server's pollLimits

	mu   sync.Mutex
	stop func() bool // stops the wait's timer; nil until armed
	key  string      // the view key it is parked under (the feed's)
}

// park takes the request's connection over and parks it until the agent's
// block under b differs from etag, or until wait ends. It reports false
// when the connection cannot be taken over (HTTP/2): the caller then waits
// in the handler.
//
// When it reports true, park owns release (the poll's count in
// pollLimits) and calls it when the poll ends.
func (s *Server) park(w http.ResponseWriter, r *http.Request, agentID string, b promptbuild.Budget, etag string, wait time.Duration, release func()) bool {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	conn.SetDeadline(time.Time{})
	if brw.Reader.Buffered() > 0 {
		// A client that sends more while it waits is not a long-poll
		// client: no answer, as with any other abuse of the connection.
		release()
		conn.Close()
		return true
	}
	p := &parkedPoll{s: s, conn: conn, agentID: agentID, budget: b, etag: etag,
		gzip: acceptsGzip(r.Header.Get("Accept-Encoding")), release: release}
	p.mu.Lock() // the timer may fire before stop is stored
	p.stop = s.life.afterFunc(wait, func() { p.finish(p.notModified) })
	p.mu.Unlock()
	// The reader notices a client that leaves (and ends when the answer
	// closes the connection).
	if !s.life.goFunc(func() {
		var one [1]byte
		p.conn.Read(one[:])
		p.finish(nil)
	}) {
		p.finish(nil)
		return true
	}
	p.recheck()
	return true
}

// recheck looks at p's block and answers when it changed; else it parks p
// under its agent's current view key and looks again, so that a change
// between the first look and the parking is not missed.
func (p *parkedPoll) recheck() {
	if p.done.Load() {
		return
	}
	if v := p.s.promptView(p.agentID).block(p.budget); v.etag != p.etag {
		p.finish(func() { p.answer(v) })
		return
	}
	key := viewKey(p.s.now.Load(), p.agentID)
	p.mu.Lock()
	p.key = key
	p.mu.Unlock()
	if !p.s.feed.park(key, p) {
		p.finish(nil) // the gateway is closing
		return
	}
	if p.done.Load() {
		p.s.feed.unpark(key, p) // finished meanwhile, under the old key
		return
	}
	if v := p.s.promptView(p.agentID).block(p.budget); v.etag != p.etag {
		p.finish(func() { p.answer(v) })
	}
}

// wake is the feed's call when p's view may have changed: p was unparked.
func (p *parkedPoll) wake() {
	if !p.s.life.goFunc(p.recheck) {
		p.finish(nil)
	}
}

// finish ends p once: stops its timer, unparks it, writes an answer (when
// write is not nil) and closes the connection.
func (p *parkedPoll) finish(write func()) {
	if !p.done.CompareAndSwap(false, true) {
		return
	}
	p.mu.Lock()
	stop, key := p.stop, p.key
	p.mu.Unlock()
	if stop != nil {
		stop()
	}
	p.s.feed.unpark(key, p)
	if write != nil {
		p.conn.SetWriteDeadline(time.Now().Add(p.s.cfg.WriteTimeout)) // the API's
		write()
	}
	p.conn.Close()
	p.release()
}

// answer writes the new block (200), as handlePrompt would, but over the
// raw connection, which closes after it.
func (p *parkedPoll) answer(v *agentBlock) {
	body := []byte(v.prompt)
	enc := ""
	if p.gzip && len(v.prompt) >= gzipMinSize {
		body, enc = v.gzip(), "Content-Encoding: gzip\r\n"
	}
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n" + enc +
		"ETag: " + v.etag + "\r\nCache-Control: no-cache\r\nVary: Accept-Encoding\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n"
	bufs := net.Buffers{[]byte(head), body}
	bufs.WriteTo(p.conn)
}

// notModified writes the 304 of a wait that ended without a change.
func (p *parkedPoll) notModified() {
	p.conn.Write([]byte("HTTP/1.1 304 Not Modified\r\nETag: " + p.etag +
		"\r\nCache-Control: no-cache\r\nVary: Accept-Encoding\r\nConnection: close\r\n\r\n"))
}

// longPollRetry is the Retry-After (seconds) of a long poll refused by
// the bounds.
const longPollRetry = 5

// pollLimits counts the long polls waiting, in all and per client (a
// bearer token's hash, or the source address without tokens): one client
// parked 20,200 polls, every descriptor the process had (L1, L2, L4).
type pollLimits struct {
	mu    sync.Mutex
	total int
	per   map[string]int
}

// acquire counts a poll of client in, unless a bound is reached; the
// release it returns must be called once when the poll ends.
func (l *pollLimits) acquire(client string, maxTotal, maxPer int) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= maxTotal || l.per[client] >= maxPer {
		return nil, false
	}
	if l.per == nil {
		l.per = map[string]int{}
	}
	l.total++
	l.per[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.total--
			if l.per[client]--; l.per[client] <= 0 {
				delete(l.per, client)
			}
			l.mu.Unlock()
		})
	}, true
}

// waiting returns the long polls counted now.
func (l *pollLimits) waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// pollClient names the client a long poll counts against: its bearer
// token (hashed: the map is no place for a secret) when tokens are
// checked, else its source address (without tokens, any header would
// make a new client).
func (s *Server) pollClient(r *http.Request) string {
	if !s.auth.Load().agentAuthed() {
		return "addr:" + remoteHost(r)
	}
	if tok, ok := bearerToken(r); ok {
		sum := sha256.Sum256([]byte(tok))
		return "token:" + hex.EncodeToString(sum[:16])
	}
	return "addr:" + remoteHost(r)
}

// remoteHost is the request's source address without its port.
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// maxLongPolls is the bound on all long polls: gateway.maxLongPolls, and
// no more descriptors than leave 1,024 (or half of them, when there are
// fewer than 2,048) for nodes and operators.
func (s *Server) maxLongPolls(configured int) int {
	if s.fdBudget > 0 {
		return max(1, min(configured, max(s.fdBudget/2, s.fdBudget-1024)))
	}
	return configured
}

// acquireLongPoll counts a long poll of r in the server's bounds
// (gateway.maxLongPolls, gateway.maxLongPollsPerToken) and returns its
// release; past a bound it answers 429 itself and reports false.
func (s *Server) acquireLongPoll(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	set := s.now.Load().pol.settings
	release, ok = s.polls.acquire(s.pollClient(r), s.maxLongPolls(set.MaxLongPolls), set.MaxLongPollsPerToken)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(longPollRetry))
		writeError(w, http.StatusTooManyRequests, "too many long polls waiting (gateway.maxLongPolls, gateway.maxLongPollsPerToken); retry later, or poll without wait")
	}
	return release, ok
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/api"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/protocol"
	"golang.org/x/sync/errgroup"
)

// Bounds of `eval --hosts` and of the pages `status` reads. At 10,000
// nodes a host-facts file is about 8 MB and the answer of GET /v1/nodes
// about 42 MB: the bounds leave room for fleets a hundred times larger,
// while a wrong file or a misbehaving gateway cannot take all memory or
// keep eval waiting forever. Variables only so that tests can lower them.
var (
	maxHostsBytes int64 = 1 << 30          // a file, or every page of a URL together
	maxNodesPages       = 100_000          // pages of GET /v1/nodes followed
	hostsTimeout        = 30 * time.Second // per page request of eval --hosts URL
)

// maxSkipNotes bounds the "factsAt is null" notes on stderr; the rest are
// counted.
const maxSkipNotes = 20

// limitText words maxHostsBytes for messages.
func limitText() string {
	if maxHostsBytes%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB (%d bytes)", maxHostsBytes>>30, maxHostsBytes)
	}
	return fmt.Sprintf("%d bytes", maxHostsBytes)
}

// hostSet is what --hosts yields: the hosts in the gateway's host index,
// and the nodes left out because they have not reported facts yet.
type hostSet struct {
	index    *eligibility.Index
	skipped  []string // ids of the first maxSkipNotes nodes left out
	nskipped int
	// nodes counts the hosts read from answers of GET /v1/nodes, and
	// answered, for each binary name, how many of them list it in
	// hostBinStatus (present or absent): a node lists exactly the names
	// it was asked, so that the others are not known yet (unknownBins).
	nodes    int
	answered map[string]int
}

// readHosts reads --hosts: a host-facts file, or the URL of GET /v1/nodes
// (every page), an https:// one verified by the CA certificates of caFile
// (--ca-file) when it is set, else by the system's roots. Each host is
// validated as the gateway validates a node's facts, one at a time as it
// is decoded: the input is never held whole.
func readHosts(ctx context.Context, src, caFile string) (*hostSet, error) {
	c := &hostCollector{seen: map[string]int{}}
	if scheme, _, ok := strings.Cut(src, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
		u, err := nodesURL(src)
		if err != nil {
			return nil, err
		}
		tr, err := gatewayTransport(u, caFile)
		if err != nil {
			return nil, err
		}
		client := &http.Client{Timeout: hostsTimeout, Transport: tr}
		notFound := " (give the URL of GET /v1/nodes, e.g. http://127.0.0.1:7780/v1/nodes)"
		if err := followNodePages(ctx, client, u, notFound, func(r io.Reader) (string, error) { return decodeHosts(r, c) }); err != nil {
			return nil, withCAHint(fmt.Errorf("--hosts: %w", err), caFile)
		}
	} else if caFile != "" {
		return nil, cli.Usagef("--ca-file: --hosts %s is a file; --ca-file verifies an https:// URL of GET /v1/nodes", src)
	} else if err := readHostsFile(src, c); err != nil {
		return nil, err
	}
	return c.finish(), nil
}

// nodesURL checks an http:// or https:// URL of GET /v1/nodes.
func nodesURL(src string) (*url.URL, error) {
	u, err := url.Parse(src)
	switch {
	case err != nil:
		return nil, fmt.Errorf("--hosts: %q is not a URL: %v", src, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("--hosts: scheme %q: give a file, or the http:// or https:// URL of GET /v1/nodes", u.Scheme)
	case u.Host == "":
		return nil, fmt.Errorf("--hosts: %q has no host; e.g. http://127.0.0.1:7780/v1/nodes", src)
	case u.User != nil:
		return nil, errors.New("--hosts: credentials in the URL are not supported (a command line shows in ps); set SKILLGATE_AGENT_TOKEN")
	}
	u.Fragment = ""
	return u, nil
}

// readHostsFile decodes a host-facts file as a stream, up to maxHostsBytes.
func readHostsFile(path string, c *hostCollector) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--hosts: %w", err)
	}
	defer f.Close()
	tooLarge := fmt.Errorf("--hosts: %s: larger than %s, the limit of a hosts file", path, limitText())
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > maxHostsBytes {
		return tooLarge
	}
	r := &budgetReader{r: f, left: maxHostsBytes}
	// "next" is a cursor of the gateway that answered: nothing to follow
	// in a file.
	if _, err := decodeHosts(cli.NewHuJSONReader(r), c); err != nil {
		if errors.Is(err, errOverBudget) {
			return tooLarge
		}
		return fmt.Errorf("--hosts: %s: %w", path, err)
	}
	return nil
}

// hostCollector gathers the hosts of --hosts in input order and checks
// that no id appears twice.
type hostCollector struct {
	hosts    []*eligibility.Host
	seen     map[string]int // id → position, for duplicates
	n        int            // position of the next element in the input
	skipped  []string
	nskipped int
	nodes    int // hosts of GET /v1/nodes answers

	mu       sync.Mutex     // guards answered, which decodeList's workers add to
	answered map[string]int // see hostSet
}

// addAnswered adds one worker's counts of the binary names its hosts
// answered.
func (c *hostCollector) addAnswered(counts map[string]int) {
	if len(counts) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answered == nil {
		c.answered = make(map[string]int, len(counts))
	}
	for name, n := range counts {
		c.answered[name] += n
	}
}

// hostItem is one decoded element of a hosts list: a host, or the id of a
// node left out because it has not reported facts yet.
type hostItem struct {
	host    *eligibility.Host
	skipped string
	node    bool // of a GET /v1/nodes answer
}

// add takes the next element.
func (c *hostCollector) add(it hostItem) error {
	i := c.n
	c.n++
	if it.host == nil {
		// As in the gateway: a node counts from its first facts.update.
		c.nskipped++
		if len(c.skipped) < maxSkipNotes {
			c.skipped = append(c.skipped, it.skipped)
		}
		return nil
	}
	if _, dup := c.seen[it.host.ID]; dup {
		return fmt.Errorf("host %d: id %q appears twice", i, it.host.ID)
	}
	c.seen[it.host.ID] = i
	c.hosts = append(c.hosts, it.host)
	if it.node {
		c.nodes++
	}
	return nil
}

// finish indexes the hosts in id order: host lists then come out of the
// index already sorted, which makes their sort nearly free.
func (c *hostCollector) finish() *hostSet {
	slices.SortFunc(c.hosts, func(a, b *eligibility.Host) int { return strings.Compare(a.ID, b.ID) })
	x := eligibility.NewIndex()
	for _, h := range c.hosts {
		x.Put(h)
	}
	return &hostSet{index: x, skipped: c.skipped, nskipped: c.nskipped, nodes: c.nodes, answered: c.answered}
}

// decodeHost decodes and validates the element at position pos of a hosts
// list: hostParser, or encoding/json for shapes that parser leaves to it.
// Hosts are validated as the gateway validates a node's facts. With nodes
// (a GET /v1/nodes answer), each binary name the host lists is counted in
// answered.
func decodeHost(p *hostParser, raw []byte, nodes bool, pos int, answered map[string]int) (hostItem, error) {
	var n nodeFacts // fresh each time: decoding merges into existing maps
	if !p.parse(raw, &n, nodes) {
		n = nodeFacts{}
		var err error
		if nodes {
			err = json.Unmarshal(raw, &n)
		} else {
			err = json.Unmarshal(raw, &n.HostFacts)
		}
		if err != nil {
			return hostItem{}, fmt.Errorf("host %d: %w", pos, err)
		}
	}
	if nodes && string(n.FactsAt) == "null" {
		return hostItem{skipped: n.ID}, nil
	}
	if err := n.Validate(); err != nil {
		return hostItem{}, fmt.Errorf("host %d (id %q): %w", pos, n.ID, err)
	}
	if nodes {
		for name := range n.HostBinStatus {
			answered[name]++
		}
	}
	return hostItem{host: eligibility.NewHost(&n.HostFacts), node: nodes}, nil
}

// unknownBins is the diagnostic of one skill whose binaries some hosts of
// a GET /v1/nodes answer were not asked yet (so not listed in their
// hostBinStatus): not known is not absent, but such a host does not count
// as having it, in eval as in the gateway. A gateway asks its nodes for a
// binary when a skill first needs it (a new skill, or a held one
// approved), and they answer within moments. "" when every host answered
// every binary the skill needs, or no host came from GET /v1/nodes.
func (hs *hostSet) unknownBins(req *eligibility.Requirements) string {
	if hs == nil || hs.nodes == 0 {
		return ""
	}
	var parts []string
	seen := map[string]bool{}
	for _, names := range [][]string{req.Bins, req.AnyBins} {
		for _, name := range names {
			if seen[name] {
				continue
			}
			seen[name] = true
			if n := hs.nodes - hs.answered[name]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s (%d of %d hosts)", name, n, hs.nodes))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return unknownBinsPrefix + strings.Join(parts, ", ") +
		": they count as not having it until they answer, as in the gateway (a gateway asks its nodes when a skill first needs a binary; run eval again in a few seconds)"
}

// unknownBinsPrefix starts the diagnostic of unknownBins.
const unknownBinsPrefix = "not asked yet whether hosts have "

// errNoNodes is the complaint about a document of neither accepted form.
var errNoNodes = errors.New(`expected a JSON array of host facts, or an object with "nodes" (the answer of GET /v1/nodes)`)

// nodeFacts is the part of a GET /v1/nodes node (an api.Node) that eval
// reads: its host facts, and factsAt only to tell null (connectedAt and
// any other field are ignored, and no time is parsed).
type nodeFacts struct {
	protocol.HostFacts
	FactsAt json.RawMessage `json:"factsAt"`
}

// decodeHosts reads one JSON document token by token and hands each host
// to c as soon as it is decoded: a JSON array of host facts, or the
// answer of GET /v1/nodes, {"nodes": [...], "next": "CURSOR"}, whose
// nodes with "factsAt": null are skipped. It returns "next" ("" when
// absent).
func decodeHosts(r io.Reader, c *hostCollector) (next string, err error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return "", syntaxErr(dec, err)
	}
	switch tok {
	case json.Delim('['):
		if err := decodeList(dec, c, false); err != nil {
			return "", err
		}
	case json.Delim('{'):
		hasNodes := false
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return "", syntaxErr(dec, err)
			}
			switch key {
			case "nodes":
				tok, err := dec.Token()
				switch {
				case err != nil:
					return "", syntaxErr(dec, err)
				case tok == nil: // null: as if absent
				case tok != json.Delim('['):
					return "", fmt.Errorf("nodes: expected a list of nodes, got %v", tok)
				default:
					hasNodes = true
					if err := decodeList(dec, c, true); err != nil {
						return "", err
					}
				}
			case "next":
				var s *string
				if err := dec.Decode(&s); err != nil {
					return "", fmt.Errorf("next: %w", syntaxErr(dec, err))
				}
				if s != nil {
					next = *s
				}
			default:
				if err := skipValue(dec); err != nil {
					return "", err
				}
			}
		}
		if _, err := dec.Token(); err != nil { // '}'
			return "", syntaxErr(dec, err)
		}
		if !hasNodes {
			return "", errNoNodes
		}
	default:
		return "", errNoNodes
	}
	// As with json.Unmarshal, nothing but space may follow the document.
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return "", errors.New("not valid JSON: more data after the end of the document")
		}
		return "", syntaxErr(dec, err)
	}
	return next, nil
}

// hostBatch is a run of elements of a hosts list, cut out by the decoder,
// then decoded by a worker.
type hostBatch struct {
	seq   int // order among the batches of the list
	pos   int // position of the first element in the input
	buf   []byte
	ends  []int // end of each element in buf
	items []hostItem
	err   error // of the element after items
}

// decodeList decodes the elements of a list whose '[' was read, and the
// ']'. The decoder cuts out each element, checking its syntax, and hands
// them in batches to one worker per core that decodes and validates them;
// the batches are then collected in input order. So the decoder, the
// decoding and the loading of the skills run side by side. The first
// error in input order wins, as in a single pass.
func decodeList(dec *json.Decoder, c *hostCollector, nodes bool) error {
	const batchSize = 256
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *hostBatch, 2*workers)
	decoded := make(chan *hostBatch, 2*workers)
	free := make(chan *hostBatch, 4*workers) // batches come back for reuse
	// At most this many batches between the decoder and the collector, so
	// that a slow batch cannot make the others pile up in memory.
	inflight := make(chan struct{}, 4*workers)
	var failed atomic.Bool // stop cutting: an element failed
	var g errgroup.Group
	for range workers {
		g.Go(func() error { decodeBatches(work, decoded, c, nodes); return nil })
	}
	go func() {
		g.Wait() // the workers return no error
		close(decoded)
	}()
	collected := make(chan error, 1)
	go func() { collected <- collectBatches(decoded, free, inflight, c, &failed) }()

	var decErr error
	var raw json.RawMessage
	pos, seq := c.n, 0
	b := &hostBatch{pos: pos}
	for dec.More() && !failed.Load() {
		raw = raw[:0]
		if decErr = dec.Decode(&raw); decErr != nil {
			decErr = syntaxErr(dec, decErr)
			break
		}
		b.buf = append(b.buf, raw...)
		b.ends = append(b.ends, len(b.buf))
		pos++
		if len(b.ends) == batchSize {
			size := len(b.buf)
			inflight <- struct{}{}
			work <- b // b is the workers' from here on
			seq++
			select {
			case b = <-free:
			default:
				b = &hostBatch{buf: make([]byte, 0, size), ends: make([]int, 0, batchSize)}
			}
			b.seq, b.pos = seq, pos
		}
	}
	inflight <- struct{}{}
	work <- b
	close(work)
	if err := <-collected; err != nil {
		return err
	}
	if decErr != nil {
		return decErr
	}
	_, err := dec.Token() // ']'
	return syntaxErr(dec, err)
}

// decodeBatches is one worker of decodeList: it decodes and validates
// the elements of each batch of work, up to the first that fails, and
// hands the batch on to decoded. Its parser and its tally of answered
// requirements are its own.
func decodeBatches(work <-chan *hostBatch, decoded chan<- *hostBatch, c *hostCollector, nodes bool) {
	p := newHostParser()
	answered := map[string]int{}
	defer func() { c.addAnswered(answered) }()
	for b := range work {
		start := 0
		for k, end := range b.ends {
			it, err := decodeHost(p, b.buf[start:end], nodes, b.pos+k, answered)
			if err != nil {
				b.err = err
				break
			}
			b.items = append(b.items, it)
			start = end
		}
		decoded <- b
	}
}

// collectBatches adds the decoded batches' hosts to c in input order
// (batches arrive in any order) and returns the first error in input
// order. After an error it sets failed, so that the decoder stops
// cutting, and goes on draining, so that nothing blocks. Each batch
// collected frees a place in inflight and goes back to free for reuse.
func collectBatches(decoded <-chan *hostBatch, free chan<- *hostBatch, inflight <-chan struct{}, c *hostCollector, failed *atomic.Bool) error {
	var err error
	pending := map[int]*hostBatch{}
	for next := 0; ; {
		b, ok := pending[next]
		if !ok {
			if b, ok = <-decoded; !ok {
				return err
			}
			pending[b.seq] = b
			continue
		}
		delete(pending, next)
		next++
		for _, it := range b.items {
			if err == nil {
				err = c.add(it)
			}
		}
		if err == nil && b.err != nil {
			err = b.err
		}
		if err != nil {
			failed.Store(true)
		}
		b.buf, b.ends, b.items, b.err = b.buf[:0], b.ends[:0], b.items[:0], nil
		select {
		case free <- b:
		default:
		}
		<-inflight
	}
}

// skipValue skips one value, token by token, so that an unknown key of a
// large answer costs no memory.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return syntaxErr(dec, err)
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// syntaxErr words a decoding error for people, keeping read errors (the
// size limit, a cut connection) as they are.
func syntaxErr(dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return fmt.Errorf("not valid JSON or HuJSON: %v (after %d bytes)", err, se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("not valid JSON or HuJSON: it ends in the middle of a value")
	}
	return err
}

// errOverBudget is returned by a budgetReader past its budget.
var errOverBudget = errors.New("over the size limit")

// budgetReader reads from r until left bytes are spent, then fails with
// errOverBudget. One budget may span several readers (pages).
type budgetReader struct {
	r    io.Reader
	left int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errOverBudget
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more tells "exactly the limit" from "over"
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, errOverBudget
	}
	return n, err
}

// followNodePages reads every page of GET /v1/nodes from u: the next page
// is the same URL with its query kept and cursor set to the "next" of the
// previous answer, until an answer has no "next". page decodes one answer
// and returns its "next"; notFound is the hint for a 404. Bounded:
// maxHostsBytes over all pages, at most maxNodesPages pages, the client's
// timeout per request.
func followNodePages(ctx context.Context, client *http.Client, u *url.URL, notFound string, page func(io.Reader) (next string, err error)) error {
	budget := &budgetReader{left: maxHostsBytes}
	cursor := ""
	for n := 1; ; n++ {
		if n > maxNodesPages {
			return fmt.Errorf("GET %s: more than %d pages; stopped (the gateway keeps answering a \"next\")", u, maxNodesPages)
		}
		pu := *u
		if cursor != "" {
			q := pu.Query()
			q.Set("cursor", cursor)
			pu.RawQuery = q.Encode()
		}
		next, err := getPage(ctx, client, pu.String(), budget, notFound, page)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		if next == cursor {
			return fmt.Errorf("GET %s: the gateway answered the same \"next\" again; stopped", pu.String())
		}
		cursor = next
	}
}

// getPage GETs one page and hands its body to page.
func getPage(ctx context.Context, client *http.Client, u string, budget *budgetReader, notFound string, page func(io.Reader) (string, error)) (string, error) {
	resp, err := agentGet(ctx, client, u)
	if err != nil {
		return "", fmt.Errorf("%w (is the gateway running? each page must arrive within %v)", err, client.Timeout)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", statusErr(u, resp, notFound)
	}
	budget.r = resp.Body
	next, err := page(budget)
	switch {
	case errors.Is(err, errOverBudget):
		return "", fmt.Errorf("GET %s: the pages of GET /v1/nodes add up to more than %s, the limit; stopped", u, limitText())
	case err != nil:
		return "", fmt.Errorf("GET %s: %w", u, err)
	}
	return next, nil
}

// agentGet GETs u as an agent: with SKILLGATE_AGENT_TOKEN as bearer token
// when it is set.
func agentGet(ctx context.Context, client *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if tok := os.Getenv(cli.AgentTokenEnv); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return client.Do(req)
}

// statusErr words a non-200 answer: the URL, the status and the gateway's
// {"error": …} message, with a hint where one helps (notFound for 404).
// The gateway's words pass through cli.Printable.
func statusErr(u string, resp *http.Response, notFound string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e api.Error
	json.Unmarshal(body, &e)
	hint := ""
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = " (set SKILLGATE_AGENT_TOKEN to the gateway's agent token)"
	case http.StatusNotFound:
		hint = notFound
	}
	return &statusError{code: resp.StatusCode, msg: e.Error,
		text: fmt.Sprintf("GET %s: %s: %s%s", u, cli.Printable(resp.Status), cli.Printable(e.Error), hint)}
}

// statusError is a gateway's non-200 answer: its status code and its
// {"error": …} message (as sent), and the whole sentence for people.
type statusError struct {
	code int
	msg  string
	text string
}

func (e *statusError) Error() string { return e.text }

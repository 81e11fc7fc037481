package governance

import (
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// The rules ask of most lines whether they hold one of a few keywords
// before anything costlier runs ("curl", "wget" … before the fetch-and-run
// expressions), and most lines hold none of them. Checking each keyword
// with strings.Contains (later behind a 3-byte hash filter) was a sixth
// of a scan. Instead every keyword of every rule is compiled, once, into
// one Aho-Corasick automaton; one pass over a (lowercased) line finds
// them all, and marks in a bitmap, with a bit per set of keywords, the
// sets that have one in the line: a rule's check is then one bit. The
// answer is strings.Contains's for each keyword of the set, exactly:
// only the cost changes.
//
// The literals of the expressions' prefilters (prefilter.go) are a
// second index of their own: asked of a line only when an expression is
// about to run on it (a tenth of the text), they would make the first
// automaton, read for every line, three times larger.

// kwWords bounds the sets of keywords of an index: kwWords*64.
const kwWords = 32

// keySet is a set of keywords: has(low, ks) reports whether low holds one
// of them. Sets are made by keys (the rules' own) and prefilterKeys (an
// expression's clauses): the automata are built from every set
// registered when the first scan asks.
type keySet struct {
	words []string
	id    int    // its bit in kwBits (sets of the same words share one)
	w     int    // id's word in kwBits
	m     uint64 // and its bit there
}

// kwBits is the bitmap of the sets of keywords a text holds one of.
type kwBits [kwWords]uint64

// kwIndex is an index of sets of keywords and its automaton.
type kwIndex struct {
	sets  map[string]*keySet // by their words, sorted
	words map[string][]int   // each keyword's sets
	n     int
	ac    *automaton
}

var (
	ruleKeys, prefilterKeys = &kwIndex{sets: map[string]*keySet{}, words: map[string][]int{}},
		&kwIndex{sets: map[string]*keySet{}, words: map[string][]int{}}
	kwOnce  sync.Once
	kwBuilt bool
)

// keys registers a set of the rules' keywords and returns it.
func keys(words ...string) *keySet { return ruleKeys.add(words) }

// add registers a set of keywords and returns it.
func (x *kwIndex) add(words []string) *keySet {
	if kwBuilt {
		panic("governance: keys after the automata were built")
	}
	sorted := slices.Clone(words)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	key := strings.Join(sorted, "\x00")
	if ks := x.sets[key]; ks != nil {
		return ks
	}
	if x.n >= kwWords*64 {
		panic("governance: too many keyword sets; raise kwWords")
	}
	ks := &keySet{words: sorted, id: x.n, w: x.n >> 6, m: 1 << (x.n & 63)}
	x.n++
	x.sets[key] = ks
	for _, w := range sorted {
		if w == "" {
			panic("governance: an empty keyword")
		}
		x.words[w] = append(x.words[w], ks.id)
	}
	return ks
}

// build makes the index's automaton.
func (x *kwIndex) build() {
	words := make([]string, 0, len(x.words))
	for w := range x.words {
		words = append(words, w)
	}
	slices.Sort(words)
	sets := make([][]int, len(words))
	for i, w := range words {
		sets[i] = x.words[w]
	}
	x.ac = newAutomaton(words, sets)
}

// keywordAutomata builds, once, the expressions' prefilters and the two
// automata.
func keywordAutomata() {
	kwOnce.Do(func() {
		prepareRx()
		kwBuilt = true
		if ruleKeys.n > kwLineWords*64 {
			panic("governance: too many sets of the rules' keywords; raise kwLineWords")
		}
		ruleKeys.build()
		prefilterKeys.build()
	})
}

// in reports whether bits has the set.
func (ks *keySet) in(bits *kwBits) bool {
	return bits[ks.w]&ks.m != 0
}

// kwCacheSize is how many texts' bitmaps a scanner keeps: a line is looked
// at as a whole, lowercased, and in pieces (its code spans, a command)
// by turns.
const kwCacheSize = 4

// kwCache keeps the bitmaps of the last texts looked at in an index.
type kwCache struct {
	of   [kwCacheSize]string
	ok   [kwCacheSize]bool
	bits [kwCacheSize]kwBits
	next int
	seen acSeen
	// The string asked of last and its bitmap.
	lastPtr  *byte
	lastLen  int
	lastBits *kwBits
}

// bitsOf returns the sets of keywords of x that low holds one of.
func (c *kwCache) bitsOf(x *kwIndex, low string) *kwBits {
	// Most calls ask of the very string asked of last: its bytes are
	// where they were (a string of the same bytes elsewhere is found
	// below).
	if unsafe.StringData(low) == c.lastPtr && len(low) == c.lastLen && c.lastBits != nil {
		return c.lastBits
	}
	k := -1
	for j := range c.of {
		if c.ok[j] && c.of[j] == low {
			k = j
			break
		}
	}
	if k < 0 {
		k = c.next
		c.next = (k + 1) % kwCacheSize
		c.of[k], c.ok[k] = low, true
		c.bits[k] = kwBits{}
		x.ac.scan(low, &c.bits[k], &c.seen)
	}
	c.lastPtr, c.lastLen, c.lastBits = unsafe.StringData(low), len(low), &c.bits[k]
	return &c.bits[k]
}

// has reports whether low holds one of the keywords of ks, a set of the
// rules' (strings.Contains of each). It is asked several times a line,
// mostly of the text asked of last: that text's words are kept (hasPtr,
// hasLen, hasWords) and has, inlined, answers from them.
func (s *scanner) has(low string, ks *keySet) bool {
	w := s.hasWords
	if unsafe.StringData(low) != s.hasPtr || len(low) != s.hasLen {
		w = s.wordsOf(low)
	}
	return w[ks.w]&ks.m != 0
}

// wordsOf returns the rules' sets of keywords low holds, and keeps them
// as has's last: a line of the file read (lineKw), or a text the
// automaton reads (kwCache). The rules' sets are in the first
// kwLineWords words of kwBits.
func (s *scanner) wordsOf(low string) *[kwLineWords]uint64 {
	var words *[kwLineWords]uint64
	switch k := s.lineAt(low); {
	case low == "":
		words = &noWords // no keyword is empty
	case k >= 0:
		words = (*[kwLineWords]uint64)(s.lineKw[k*kwLineWords:])
	default:
		words = (*[kwLineWords]uint64)(s.kw.bitsOf(ruleKeys, low)[:])
	}
	// The bytes stay where they are while kept: a line's until the next
	// file is read (readLines forgets them), another text's while the
	// cache holds it (it is replaced only here, by the text kept next).
	s.hasPtr, s.hasLen, s.hasWords = unsafe.StringData(low), len(low), words
	return words
}

// noWords are the words of no keyword: an empty text's (a nil pointer
// with hasLen 0 is one).
var noWords [kwLineWords]uint64

// lineAt returns k when low is lowLines[k], the line being read or the
// one before (rules look back at it), and lineKw holds its keywords; or
// -1.
func (s *scanner) lineAt(low string) int {
	k := s.cur
	if k < 0 || k >= len(s.lowLines) || low == "" || len(low) > maxLineScan {
		return -1
	}
	p := unsafe.StringData(low)
	if l := s.lowLines[k]; p == unsafe.StringData(l) && len(low) == len(l) {
		return k
	}
	if k > 0 {
		if l := s.lowLines[k-1]; p == unsafe.StringData(l) && len(low) == len(l) {
			return k - 1
		}
	}
	return -1
}

// kwLineWords is how many words of kwBits the rules' sets of keywords
// use: those kept per line (lineKw).
const kwLineWords = 2

// lineKeywords finds the sets of the rules' keywords each line of the
// current file holds (lineKw), in one pass over its lines. A line
// longer than maxLineScan is left to has's other paths (the rules read
// its first part only).
func (s *scanner) lineKeywords() {
	n := len(s.lowLines) * kwLineWords
	if cap(s.lineKw) < n {
		s.lineKw = make([]uint64, n)
	}
	s.lineKw = s.lineKw[:n]
	ac := ruleKeys.ac
	var bits kwBits
	for k, low := range s.lowLines {
		if len(low) > maxLineScan || low == "" {
			continue
		}
		bits[0], bits[1] = 0, 0 // the only words the rules' sets set
		ac.scan(low, &bits, &s.kw.seen)
		copy(s.lineKw[k*kwLineWords:], bits[:kwLineWords])
	}
}

// textOrder are the bytes of (lowercased) skill text, most frequent first;
// acRowAlign the entries of a cache line (a row of the table is a multiple
// of it).
const (
	textOrder  = " etaoinsrlcdhupmg-.f/y`b,w:v\"k_=x()'0#1|2$*>[]3j<q@z{}&;~!?%+\\^\t"
	acRowAlign = 32
)

// automaton is an Aho-Corasick automaton over bytes, as a full table of
// transitions between byte classes (the bytes of no keyword are one
// class). States are numbered so that those where keywords end come
// last (from firstOut on).
type automaton struct {
	class    [256]uint8
	ncls     int
	delta    []uint16 // delta[state*ncls+class]: the next state
	firstOut int
	// outStart/outBits: the sets of the keywords that end at each state
	// from firstOut on (its own and those of its suffix states), as the
	// words of kwBits they set.
	outStart []int32
	outBits  []kwPart
}

// kwPart is a word of kwBits and the bits to set in it.
type kwPart struct {
	w int32
	m uint64
}

// newAutomaton builds the automaton of words, sets[i] being the sets
// words[i] is in.
func newAutomaton(words []string, sets [][]int) *automaton {
	a := &automaton{}
	// Byte classes: every byte of a keyword its own, the others 0. The
	// bytes most frequent in text are numbered first, and rows are a
	// whole number of cache lines: what a text reads of a row is mostly
	// its first line, and the states a text is in most fit in the
	// first-level cache (numbered in the order of the keywords, the
	// prefilters' automaton read twice as many lines as that cache holds).
	var in [256]bool
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			in[w[i]] = true
		}
	}
	for i := 0; i < len(textOrder)+256; i++ {
		c := byte(i - len(textOrder))
		if i < len(textOrder) {
			c = textOrder[i]
		}
		if in[c] && a.class[c] == 0 {
			a.ncls++
			a.class[c] = uint8(a.ncls)
		}
	}
	a.ncls++
	a.ncls = (a.ncls + acRowAlign - 1) / acRowAlign * acRowAlign
	// The trie, as the table of its transitions (-1: none yet), and the
	// sets of the keywords that end at each state.
	ncls := a.ncls
	states := 1 // at most: one a byte of the keywords, and the root
	for _, w := range words {
		states += len(w)
	}
	next := make([]int32, ncls, states*ncls)
	for c := range next {
		next[c] = -1
	}
	out := [][]int32{nil}
	for i, w := range words {
		st := int32(0)
		for k := 0; k < len(w); k++ {
			c := int32(a.class[w[k]])
			if next[st*int32(ncls)+c] < 0 {
				next[st*int32(ncls)+c] = int32(len(out))
				out = append(out, nil)
				for range ncls {
					next = append(next, -1)
				}
			}
			st = next[st*int32(ncls)+c]
		}
		out[st] = append(out[st], toInt32(sets[i])...)
	}
	n := len(out)
	if n > 1<<16 {
		panic("governance: too many keyword states")
	}
	// Failure links, breadth first; a missing transition is the failure
	// state's (whose row, shallower, is complete by then): the table
	// becomes the full automaton.
	fail := make([]int32, n)
	queue := make([]int32, 0, n)
	for c := 0; c < ncls; c++ {
		if nx := next[c]; nx < 0 {
			next[c] = 0
		} else {
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		f := fail[st]
		for _, id := range out[f] {
			if !slices.Contains(out[st], id) {
				out[st] = append(out[st], id)
			}
		}
		row, frow := next[int(st)*ncls:int(st+1)*ncls], next[int(f)*ncls:int(f+1)*ncls]
		for c := range row {
			if nx := row[c]; nx >= 0 {
				fail[nx] = frow[c]
				queue = append(queue, nx)
			} else {
				row[c] = frow[c]
			}
		}
	}
	// Renumber: the states without keywords first (the root stays 0).
	num := make([]int, n)
	k := 0
	for st := range out {
		if len(out[st]) == 0 {
			num[st] = k
			k++
		}
	}
	a.firstOut = k
	for st := range out {
		if len(out[st]) > 0 {
			num[st] = k
			k++
		}
	}
	a.delta = make([]uint16, n*ncls)
	for st := range out {
		for c := 0; c < ncls; c++ {
			a.delta[num[st]*ncls+c] = uint16(num[next[st*ncls+c]])
		}
	}
	a.outStart = make([]int32, n-a.firstOut+1)
	order := make([]int, n)
	for st := range out {
		order[num[st]] = st
	}
	for i := a.firstOut; i < n; i++ {
		a.outStart[i-a.firstOut] = int32(len(a.outBits))
		var bits kwBits
		for _, id := range out[order[i]] {
			bits[id>>6] |= 1 << (id & 63)
		}
		for w, m := range bits {
			if m != 0 {
				a.outBits = append(a.outBits, kwPart{int32(w), m})
			}
		}
	}
	a.outStart[n-a.firstOut] = int32(len(a.outBits))
	return a
}

func toInt32(xs []int) []int32 {
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

// acSeen marks the keyword states a scan has reported (seen[o] == gen):
// a state met again (a common word, a quotation mark) adds nothing.
type acSeen struct {
	seen []uint32
	gen  uint32
}

// scan sets the bits of the keywords text holds.
func (a *automaton) scan(text string, bits *kwBits, sn *acSeen) {
	if len(sn.seen) != len(a.outStart)-1 {
		sn.seen, sn.gen = make([]uint32, len(a.outStart)-1), 0
	}
	sn.gen++
	if sn.gen == 0 {
		clear(sn.seen)
		sn.gen = 1
	}
	seen, gen := sn.seen, sn.gen
	st := 0
	delta, class, ncls, firstOut := a.delta, &a.class, a.ncls, a.firstOut
	for i := 0; i < len(text); i++ {
		st = int(delta[st*ncls+int(class[text[i]])])
		if st >= firstOut {
			if o := st - firstOut; seen[o] != gen {
				seen[o] = gen
				for _, p := range a.outBits[a.outStart[o]:a.outStart[o+1]] {
					bits[p.w] |= p.m
				}
			}
		}
	}
}

// containsAny reports whether s holds one of subs.
func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/publisher"
	"github.com/skillgate/skillgate/scanners"
	"github.com/tailscale/hujson"
)

// File is a config file as parsed and checked.
type File struct {
	Name string         // the file's name, as problems show it
	Root map[string]any // the whole object: requires.config resolves against it
	Sum  string         // SHA-256 of the bytes (hex), to notice changes

	Gateway Gateway
	// Agents are the agents the file names, in either form, by id.
	Agents map[string]*Agent
	// DefaultSkills is agents.defaults.skills (HasDefaultSkills: set, even
	// empty): the scope of every agent without one of its own.
	DefaultSkills    []string
	HasDefaultSkills bool
	// Entries are skills.entries, by key.
	Entries map[string]*Entry

	values      map[string]any // the decoded value of each setting set, by concrete path
	maxCharsSet bool
	limitChars  int                             // skills.limits.maxSkillsPromptChars
	scanners    map[string]*scanners.Config     // gateway.governance.scanners index → scanner
	publishers  map[string]*publisher.Publisher // gateway.governance.publishers index → publisher
	listID      map[string]string               // agents.list index → id
	listSkills  map[string][]string             // agents.list index → skills
	keyed       []string                        // agents.entries ids, in file order
	keyedSkills map[string][]string             // agents.entries id → skills
}

// Gateway is the gateway object's settings.
type Gateway struct {
	Listen, Store string
	Poll          time.Duration // 0: not set
	Insecure      bool
	MaxNodes      int // 0: not set
	// MaxLongPolls and MaxLongPollsPerToken bound the long polls waiting
	// at once (defaults when not set).
	MaxLongPolls, MaxLongPollsPerToken int
	NodeTokens                         map[string]string
	AgentTokens                        map[string]string
	TLSCert                            string
	TLSKey                             string
	TLSClientCA                        string
	Prompt                             Prompt
	Governance                         governance.Policy
	// Scanners are gateway.governance.scanners, ScanConcurrency how many
	// run at once (0: not set).
	Scanners        []scanners.Config
	ScanConcurrency int
	Cluster         Cluster
	MCP             MCP
}

// MCP is gateway.mcp: the bounds of the MCP endpoint's sessions.
type MCP struct {
	MaxSessions int           // sessions open at once
	IdleTimeout time.Duration // a session without a request for this long is closed
}

// Prompt is gateway.prompt, or an agent's agents.<id>.prompt (0: the
// gateway's value; Hosts is the gateway's only).
type Prompt struct {
	MaxChars  int    `json:"maxChars"`
	MaxSkills int    `json:"maxSkills"`
	Hosts     string `json:"hosts,omitempty"`
}

// Cluster is gateway.cluster. File paths are resolved against the config
// file's directory.
type Cluster struct {
	URL, Replica, Bucket       string
	TTL                        time.Duration // 0: not set
	SecretFile                 string        // the cluster secret's file; "": SKILLGATE_CLUSTER_SECRET
	MaxRemote                  int           // 0: not set
	Creds, NKey, CA, Cert, Key string
}

// Agent is one agent's settings, from agents.<id> or an agents.list entry.
type Agent struct {
	ID     string
	Where  string // the key path that configures it: "agents.main" or "agents.list[0]"
	Prompt Prompt // 0: the gateway's
	Skills Scope
}

// Scope is an agent's skill scope. Set says the agent has one of its own:
// skillgate's globs (Allow, Deny), or OpenClaw's list of names (Listed).
type Scope struct {
	Allow  []string `json:"allow,omitempty"`
	Deny   []string `json:"deny,omitempty"`
	Names  []string `json:"names,omitempty"`
	Listed bool     `json:"-"`
	Set    bool     `json:"-"`
}

// Entry is one skills.entries value.
type Entry struct {
	// Enabled is nil when not set; only false excludes.
	Enabled *bool
	// Always, when set, overrides the frontmatter value.
	Always *bool
	// Requires overrides the frontmatter requirements field by field: a
	// field that is absent or null keeps the frontmatter value, any other
	// value (including []) replaces it.
	Requires any
	// Approve lists "sha256:<digest>"s: the operator approves exactly
	// the skill contents of those governance digests.
	Approve []string
	// Mode is the operator's governance mode, "quarantine" or "block" (""
	// when not set): it only tightens. Reason says why, when given.
	Mode   string
	Reason string
	// Suppress lists the governance findings that do not count, in file
	// order.
	Suppress []Suppression
	// Priority orders skills for the prompt budget: higher first.
	Priority int
	// Version is a semver constraint on the skill's version as written
	// (">=1.2.0 <2"), "" when not set; VersionConstraint is it parsed.
	Version           string
	VersionConstraint *semver.Constraints
}

// Suppression is one skills.entries.<key>.suppress element: the findings
// of Rule (in File, at Line, when set) are reported but do not count
// toward score, verdict or mode until Expires (zero: never).
type Suppression struct {
	Rule    string    `json:"rule"`
	File    string    `json:"file,omitempty"`
	Line    int       `json:"line,omitempty"`
	Reason  string    `json:"reason"`
	Expires time.Time `json:"-"`
	// at is the element's index in the file, to keep file order.
	at int
}

// Covers says whether the suppression applies to a finding of rule at
// file:line (at the time now).
func (s *Suppression) Covers(rule, file string, line int, now time.Time) bool {
	return s.Rule == rule && (s.File == "" || s.File == file) && (s.Line == 0 || s.Line == line) &&
		(s.Expires.IsZero() || now.Before(s.Expires))
}

// suppression returns the suppression at index i (a string of the index,
// as the walker keys it), made on first use.
func (e *Entry) suppression(i string) *Suppression {
	n, _ := strconv.Atoi(i)
	at, found := slices.BinarySearchFunc(e.Suppress, n, func(s Suppression, n int) int { return s.at - n })
	if !found {
		e.Suppress = slices.Insert(e.Suppress, at, Suppression{at: n})
	}
	return &e.Suppress[at]
}

// Problem is one thing wrong in a file, located at its key (or value).
type Problem struct {
	Path      string // the key path, e.g. "gateway.prompt.maxChars"; "" for the file
	Line, Col int    // 1-based; 0 when unknown
	Message   string
}

// Error is every problem of a file.
type Error struct {
	File     string
	Problems []Problem
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.format(p)
	}
	return strings.Join(lines, "\n")
}

func (e *Error) format(p Problem) string {
	loc := e.File
	if p.Line > 0 {
		loc += fmt.Sprintf(":%d:%d", p.Line, p.Col)
	}
	if p.Path == "" {
		return loc + ": " + p.Message
	}
	return loc + ": " + p.Path + ": " + p.Message
}

// Lines returns each problem as "file:line:col: path: message".
func (e *Error) Lines() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = e.format(p)
	}
	return out
}

// Parse reads a config file's bytes (HuJSON: JSON with comments and
// trailing commas). name is how problems name the file, and the directory
// relative file settings resolve against. Every problem is returned, in
// file order, as an *Error.
func Parse(name string, data []byte) (*File, error) {
	f := &File{Name: name, Agents: map[string]*Agent{}, Entries: map[string]*Entry{},
		values: map[string]any{}, scanners: map[string]*scanners.Config{}, publishers: map[string]*publisher.Publisher{}, listID: map[string]string{}, listSkills: map[string][]string{}, keyedSkills: map[string][]string{}}
	sum := sha256.Sum256(data)
	f.Sum = hex.EncodeToString(sum[:])
	f.Gateway.Governance = governance.DefaultPolicy()
	f.Gateway.Prompt = Prompt{MaxChars: DefaultMaxChars, MaxSkills: DefaultMaxSkills, Hosts: HostsNone}
	f.Gateway.MaxLongPolls, f.Gateway.MaxLongPollsPerToken = DefaultMaxLongPolls, DefaultMaxLongPollsPerToken
	f.Gateway.MCP = MCP{MaxSessions: DefaultMCPMaxSessions, IdleTimeout: DefaultMCPIdleTimeout}

	w := &walker{f: f, data: data, pos: map[string]int{}}
	if off := tooDeep(data); off >= 0 {
		w.problemAt(off, "", fmt.Sprintf("nested deeper than %d levels", MaxDepth))
		return nil, w.err()
	}
	// hujson's values alias the bytes they were parsed from, and
	// Standardize blanks comments in place: the caller's data must stay.
	ast, err := hujson.Parse(bytes.Clone(data))
	if err != nil {
		w.problems = append(w.problems, syntaxProblem(err))
		return nil, w.err()
	}
	w.positions(ast, nil)
	ast.Standardize()
	var root any
	if err := json.Unmarshal(ast.Pack(), &root); err != nil {
		w.problemAt(0, "", "not valid JSON: "+err.Error())
		return nil, w.err()
	}
	m, ok := root.(map[string]any)
	if !ok {
		w.problemAt(ast.StartOffset, "", "the config must be one JSON object, got "+describe(root))
		return nil, w.err()
	}
	f.Root = m
	w.objectKeys(m, nil, "", nil)
	f.finish(w)
	if len(w.problems) > 0 {
		return nil, w.err()
	}
	return f, nil
}

// finish derives what depends on several settings, once they are all read.
func (f *File) finish(w *walker) {
	if !f.maxCharsSet && f.limitChars > 0 {
		f.Gateway.Prompt.MaxChars = f.limitChars
	}
	if c := f.Gateway.Cluster; (c.Cert == "") != (c.Key == "") {
		set := "cert"
		if c.Key != "" {
			set = "key"
		}
		w.problem([]string{"gateway", "cluster", set}, "gateway.cluster.cert and gateway.cluster.key go together: set both, or neither")
	}
	f.finishGovernance(w)
	// OpenClaw's agents (agents.list, in order, then agents.entries): an
	// id once, and not configured in skillgate's form too.
	type openClawAgent struct {
		id     string
		path   []string
		skills []string
		has    bool
	}
	var oc []openClawAgent
	idx := slices.SortedFunc(maps.Keys(f.listID), func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	for _, i := range idx {
		skills, has := f.listSkills[i]
		oc = append(oc, openClawAgent{f.listID[i], []string{"agents", "list", "[" + i + "]"}, skills, has})
	}
	for _, id := range slices.Sorted(slices.Values(f.keyed)) {
		skills, has := f.keyedSkills[id]
		oc = append(oc, openClawAgent{id, []string{"agents", "entries", id}, skills, has})
	}
	seen := map[string]string{}
	for _, a := range oc {
		where := display(a.path)
		if prev, ok := seen[a.id]; ok {
			w.problem(a.path, fmt.Sprintf("agent %s is configured twice, at %s and %s: keep one", a.id, prev, where))
			continue
		}
		seen[a.id] = where
		if own, ok := f.Agents[a.id]; ok {
			w.problem(a.path, fmt.Sprintf("agent %s is configured in both forms, at %s and %s: keep one", a.id, where, own.Where))
			continue
		}
		ag := f.agent(a.id, where)
		if a.has {
			ag.Skills = Scope{Names: a.skills, Listed: true, Set: true}
		}
	}
}

// finishGovernance checks the external scanners and the publishers as
// lists (their own packages' rules: a program that exists, unique names,
// keys that parse), placing each problem at its key.
func (f *File) finishGovernance(w *walker) {
	f.Gateway.Scanners = inOrder(f.scanners)
	if err := scanners.ValidateList("gateway.governance.scanners", f.Gateway.Scanners); err != nil {
		for _, e := range unjoin(err) {
			var fe *scanners.FieldError
			if errors.As(e, &fe) {
				// A scanner without its name or exec was reported as
				// such by the walker.
				if i := scannerIndex(fe.Path); i >= 0 && (f.Gateway.Scanners[i].Name == "" || len(f.Gateway.Scanners[i].Exec) == 0) {
					continue
				}
				w.problem(splitPath(fe.Path), fe.Msg)
			} else {
				w.problem([]string{"gateway", "governance", "scanners"}, e.Error())
			}
		}
	}
	pubs := inOrder(f.publishers)
	trust, err := publisher.Parse(pubs, "gateway.governance.publishers")
	for _, e := range unjoin(err) {
		var ke *publisher.KeyError
		if errors.As(e, &ke) {
			w.problem(splitPath(ke.Path), ke.Msg)
		} else {
			w.problem([]string{"gateway", "governance", "publishers"}, e.Error())
		}
	}
	f.Gateway.Governance.Publishers = pubs
	f.Gateway.Governance.Trust = trust
}

// scannerIndex is the index of the scanner a key path is in; -1 when none.
func scannerIndex(p string) int {
	rest, ok := strings.CutPrefix(p, "gateway.governance.scanners[")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(rest[:max(0, strings.IndexByte(rest, ']'))])
	if err != nil {
		return -1
	}
	return n
}

// inOrder returns the elements of a list setting, by index.
func inOrder[T any](m map[string]*T) []T {
	idx := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	out := make([]T, 0, len(idx))
	for _, i := range idx {
		out = append(out, *m[i])
	}
	return out
}

// unjoin returns the errors errors.Join joined (err itself when it is
// not a join; none when nil).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// splitPath is the segments of a key path as problems take them:
// "gateway.governance.scanners[1].exec[0]" → gateway, governance,
// scanners, [1], exec, [0].
func splitPath(p string) []string {
	var out []string
	for _, seg := range strings.Split(p, ".") {
		for {
			i := strings.IndexByte(seg, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, seg[:i])
			}
			j := strings.IndexByte(seg, ']')
			if j < i {
				break
			}
			out = append(out, seg[i:j+1])
			seg = seg[j+1:]
		}
		if seg != "" {
			out = append(out, seg)
		}
	}
	return out
}

// scanner returns gateway.governance.scanners[i], made on first use.
func (f *File) scanner(i string) *scanners.Config {
	if f.scanners[i] == nil {
		f.scanners[i] = &scanners.Config{}
	}
	return f.scanners[i]
}

// publisher returns gateway.governance.publishers[i], made on first use.
func (f *File) publisher(i string) *publisher.Publisher {
	if f.publishers[i] == nil {
		f.publishers[i] = &publisher.Publisher{}
	}
	return f.publishers[i]
}

// agent returns the agent's settings, made on first use.
func (f *File) agent(id, where string) *Agent {
	a := f.Agents[id]
	if a == nil {
		a = &Agent{ID: id, Where: where}
		f.Agents[id] = a
	}
	return a
}

// entry returns a skills.entries entry, made on first use.
func (f *File) entry(key string) *Entry {
	e := f.Entries[key]
	if e == nil {
		e = &Entry{}
		f.Entries[key] = e
	}
	return e
}

// Value returns the decoded value of a setting at a concrete path (e.g.
// "gateway.listen"), and whether the file sets it.
func (f *File) Value(path string) (any, bool) {
	if f == nil {
		return nil, false
	}
	v, ok := f.values[path]
	return v, ok
}

// walker checks a decoded file against the table.
type walker struct {
	f        *File
	data     []byte
	pos      map[string]int // concrete path (segments joined by "\x00") → offset of its key, or of the value at the root
	problems []Problem
}

func (w *walker) err() error {
	slices.SortStableFunc(w.problems, func(a, b Problem) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
	return &Error{File: w.f.Name, Problems: w.problems}
}

// positions records where every key of the file is, and reports duplicate
// keys: JSON decoders keep the last, which would let a later "enabled":
// true hide an earlier false.
func (w *walker) positions(v hujson.Value, path []string) {
	switch x := v.Value.(type) {
	case *hujson.Object:
		seen := map[string]bool{}
		for _, m := range x.Members {
			var name string
			if err := json.Unmarshal(m.Name.Value.(hujson.Literal), &name); err != nil {
				continue
			}
			p := append(slices.Clip(path), name)
			k := strings.Join(p, "\x00")
			if seen[name] {
				w.problemAt(m.Name.StartOffset, display(p), "duplicate key: a key may appear once in an object")
			}
			seen[name] = true
			w.pos[k] = m.Name.StartOffset
			w.positions(m.Value, p)
		}
	case *hujson.Array:
		for i, e := range x.Elements {
			p := append(slices.Clip(path), "["+strconv.Itoa(i)+"]")
			w.pos[strings.Join(p, "\x00")] = e.StartOffset
			w.positions(e, p)
		}
	}
}

// problem records a problem at a concrete path.
func (w *walker) problem(path []string, msg string) {
	off, ok := w.pos[strings.Join(path, "\x00")]
	if !ok {
		off = -1
	}
	w.problemAt(off, display(path), msg)
}

func (w *walker) problemAt(off int, path, msg string) {
	p := Problem{Path: path, Message: msg}
	if off >= 0 && off <= len(w.data) {
		p.Line, p.Col = lineCol(w.data, off)
	}
	w.problems = append(w.problems, p)
}

// lineCol turns a byte offset into a 1-based line and column (in
// characters).
func lineCol(data []byte, off int) (int, int) {
	before := data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, 1 + utf8.RuneCount(before)
}

// display renders concrete path segments: "agents.list[0].skills".
func display(path []string) string {
	var b strings.Builder
	for i, s := range path {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// syntaxProblem turns hujson's "line L, column C: …" into a problem at
// that position.
func syntaxProblem(err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "hujson: ")
	var line, col int
	if n, _ := fmt.Sscanf(msg, "line %d, column %d: ", &line, &col); n == 2 {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			return Problem{Line: line, Col: col, Message: "not valid JSON or HuJSON: " + rest}
		}
	}
	return Problem{Message: "not valid JSON or HuJSON: " + msg}
}

// wildcard checks the value of a key that stands for an agent id or a
// skills.entries key (pattern is the wildcard's).
func (w *walker) wildcard(parent *object, k string, v any, p []string, pattern string, keys []string) {
	if parent.wild == "<id>" {
		if err := validID(k); err != nil {
			w.problem(p, "agent id "+err.Error())
			return
		}
	}
	if _, ok := v.(map[string]any); !ok && v != nil {
		msg := "must be an object" + objectHint(pattern) + ", got " + describe(v)
		if parent.wild == "<id>" {
			// agents.lsit: [...] is an agent id to the walker; the
			// value says it is a typo of OpenClaw's key.
			if near := nearest(k, knownKeys(parent.Path)); near != "" {
				msg += "; did you mean " + join(parent.Path, near) + "?"
			}
		}
		w.problem(p, msg)
		return
	}
	w.nested(objectAt(pattern), v, p, pattern, append(slices.Clip(keys), k))
}

// nested descends into an object value.
func (w *walker) nested(o *object, v any, p []string, pattern string, keys []string) {
	if v == nil {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		w.problem(p, "must be an object"+objectHint(pattern)+", got "+describe(v))
		return
	}
	switch o.Path {
	case "agents.<id>":
		// Made even when it sets nothing, so that its view is its own.
		w.f.agent(keys[0], display(p))
	case "agents.entries.<id>":
		w.f.keyed = append(w.f.keyed, keys[0])
	case "skills.entries.<key>":
		// An entry with nothing skillgate reads still matches its skill
		// first (name, then directory, then location).
		w.f.entry(keys[len(keys)-1])
	}
	w.objectKeys(m, p, pattern, keys)
}

// objectKeys is object with the wildcard keys of the path so far.
func (w *walker) objectKeys(m map[string]any, path []string, pattern string, keys []string) {
	obj := objectAt(pattern)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		p := append(slices.Clip(path), k)
		child := join(pattern, k)
		s, o := settingAt(child), objectAt(child)
		if _, isObject := v.(map[string]any); o != nil && (isObject || s == nil) {
			w.nested(o, v, p, child, keys)
			continue
		}
		if s != nil {
			w.setting(s, v, p, keys)
			continue
		}
		if slices.Contains(openClawKeys[pattern], k) {
			continue
		}
		if obj.wild != "" {
			w.wildcard(obj, k, v, p, join(pattern, obj.wild), keys)
			continue
		}
		near := nearest(k, knownKeys(pattern))
		switch {
		case obj.Owned && near != "":
			w.problem(p, fmt.Sprintf("unknown setting; did you mean %s? (known: %s)", join(display(path), near), strings.Join(ownKeys(pattern), ", ")))
		case obj.Owned:
			w.problem(p, fmt.Sprintf("unknown setting (known: %s)", strings.Join(ownKeys(pattern), ", ")))
		case near != "":
			w.problem(p, fmt.Sprintf("unknown key; did you mean %s? (unknown keys here are kept for requires.config, but not one this close to a known key)", join(display(path), near)))
		}
	}
}

// setting checks a setting's value and stores it.
func (w *walker) setting(s *Setting, v any, p []string, keys []string) {
	if v == nil {
		return // null: not set
	}
	if s.Type == Objects {
		list, ok := v.([]any)
		if !ok {
			w.problem(p, "must be "+typeName(s)+", got "+describe(v))
			return
		}
		for i, e := range list {
			ep := append(slices.Clip(p), "["+strconv.Itoa(i)+"]")
			pattern := s.Path + "[]"
			if _, ok := e.(map[string]any); !ok {
				w.problem(ep, "must be an object"+objectHint(pattern)+", got "+describe(e))
				continue
			}
			w.objectKeys(e.(map[string]any), ep, pattern, append(slices.Clip(keys), strconv.Itoa(i)))
			for _, r := range objectAt(pattern).required {
				if e.(map[string]any)[r.key] == nil {
					w.problem(ep, r.msg)
				}
			}
		}
		return
	}
	val, err := decode(s, v)
	if err != nil && objectAt(s.Path) != nil {
		// agents.<id>.skills: an object of globs, or a list of names.
		err = fmt.Errorf("must be an object%s, or %s; got %s", objectHint(s.Path), typeName(s), describe(v))
	}
	if err == nil && s.check != nil {
		err = s.check(val)
	}
	if err != nil {
		switch e := err.(type) {
		case *keyError:
			w.problem(append(slices.Clip(p), e.key), e.err.Error())
		case *indexError:
			w.problem(append(slices.Clip(p), "["+strconv.Itoa(e.i)+"]"), e.err.Error())
		default:
			w.problem(p, err.Error())
		}
		return
	}
	w.f.values[display(p)] = val
	if s.set != nil {
		s.set(w.f, keys, val)
	}
}

// decode checks a value's type and returns it as the setting's Go type.
func decode(s *Setting, v any) (any, error) {
	wrong := func() error { return fmt.Errorf("must be %s, got %s", typeName(s), describe(v)) }
	switch s.Type {
	case String:
		str, ok := v.(string)
		if len(s.Enum) > 0 && (!ok || !slices.Contains(s.Enum, str)) {
			return nil, fmt.Errorf("must be one of %s, got %s", quoteList(s.Enum), quoteValue(v))
		}
		if !ok {
			return nil, wrong()
		}
		return str, nil
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, wrong()
		}
		return b, nil
	case Int:
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) || n < float64(s.Min) || (s.Max != 0 && n > float64(s.Max)) {
			return nil, wrong()
		}
		return int(n), nil
	case Duration:
		str, ok := v.(string)
		if !ok {
			return nil, wrong()
		}
		d, err := time.ParseDuration(str)
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration like \"2s\"", str)
		}
		return d, nil
	case Strings, StringOrList:
		if str, ok := v.(string); ok && s.Type == StringOrList {
			return []string{str}, nil
		}
		list, ok := v.([]any)
		if !ok {
			return nil, wrong()
		}
		out := make([]string, 0, len(list))
		for i, e := range list {
			str, ok := e.(string)
			if !ok {
				return nil, &indexError{i, fmt.Errorf("must be a string, got %s", describe(e))}
			}
			out = append(out, str)
		}
		return out, nil
	case TokenMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, wrong()
		}
		out := make(map[string]string, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			str, ok := m[k].(string)
			if !ok || str == "" {
				return nil, &keyError{key: k, err: fmt.Errorf("must be a non-empty string, got %s", describe(m[k]))}
			}
			out[k] = str
		}
		return out, nil
	case Object:
		if _, ok := v.(map[string]any); !ok {
			return nil, wrong()
		}
		return v, nil
	}
	return v, nil
}

// typeName says what a setting's value must be.
func typeName(s *Setting) string {
	switch s.Type {
	case String:
		return "a string"
	case Bool:
		return "true or false"
	case Int:
		switch {
		case s.Min == 1:
			return "a positive whole number"
		case s.Max != 0:
			return fmt.Sprintf("a whole number from %d to %d", s.Min, s.Max)
		}
		return "a whole number"
	case Duration:
		return "a duration string like \"2s\""
	case Strings:
		return "a list of strings"
	case StringOrList:
		return "a string or a list of strings"
	case TokenMap:
		return "an object of id → token (or \"sha256:<hex>\" of the token)"
	case Object:
		return "an object"
	case Objects:
		return "a list of objects"
	}
	return "a value"
}

// describe names a decoded JSON value for a message: its type and, for
// scalars, the value itself.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		if len(x) > 60 {
			x = x[:60] + "…"
		}
		return "the string " + strconv.Quote(x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// quoteValue is a string value quoted, any other described.
func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return describe(v)
}

func quoteList(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// objectHint names an object's keys in a "must be an object" message.
func objectHint(pattern string) string {
	keys := ownKeys(pattern)
	if len(keys) == 0 || objectAt(pattern) == nil {
		return ""
	}
	if len(keys) == 1 {
		return " with " + keys[0]
	}
	return " with " + strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}

func join(pattern, k string) string {
	if pattern == "" {
		return k
	}
	if strings.HasPrefix(k, "[") {
		return pattern + k
	}
	return pattern + "." + k
}

// Limits returns an agent's prompt budget: its own agents.<id>.prompt
// values where set, else the gateway's. A nil File has the defaults.
func (f *File) Limits(agent string) Prompt {
	if f == nil {
		return Prompt{MaxChars: DefaultMaxChars, MaxSkills: DefaultMaxSkills, Hosts: HostsNone}
	}
	p := f.Gateway.Prompt
	if a := f.Agents[agent]; a != nil {
		if a.Prompt.MaxChars > 0 {
			p.MaxChars = a.Prompt.MaxChars
		}
		if a.Prompt.MaxSkills > 0 {
			p.MaxSkills = a.Prompt.MaxSkills
		}
	}
	return p
}

// Changed returns the settings (of fixed paths) applied at apply whose
// value differs between two versions of a file (nil: none).
func Changed(old, cur *File, apply Apply) []*Setting {
	var out []*Setting
	for i := range Settings {
		s := &Settings[i]
		if s.Apply != apply || strings.ContainsAny(s.Path, "<[") {
			continue
		}
		a, _ := old.Value(s.Path)
		b, _ := cur.Value(s.Path)
		if !reflect.DeepEqual(a, b) {
			out = append(out, s)
		}
	}
	return out
}

// MaxDepth bounds how deeply a file's objects and arrays nest: parsing is
// recursive, and a few megabytes of "[" would overflow the stack, which no
// recover catches (a reload must never end the gateway).
const MaxDepth = 128

// tooDeep returns the offset of the first bracket nested deeper than
// MaxDepth, or -1. It skips strings and comments as HuJSON has them.
func tooDeep(data []byte) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case i+1 < len(data) && data[i+1] == '/':
				for i < len(data) && data[i] != '\n' {
					i++
				}
			case i+1 < len(data) && data[i+1] == '*':
				end := bytes.Index(data[i+2:], []byte("*/"))
				if end < 0 {
					return -1 // the parser says it is not closed
				}
				i += end + 3
			}
		case '{', '[':
			if depth++; depth > MaxDepth {
				return i
			}
		case '}', ']':
			depth--
		}
	}
	return -1
}

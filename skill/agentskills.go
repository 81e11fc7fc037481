package skill

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"gopkg.in/yaml.v3"
)

// Limits of the Agent Skills format (agentskills.io specification).
const (
	maxFormatName          = 64
	maxFormatCompatibility = 500
	maxFormatBodyLines     = 500
)

// specKeys are the top-level frontmatter keys the Agent Skills
// specification defines, in the order its messages list them.
var specKeys = []string{keyName, keyDescription, "license", "compatibility", keyMetadata, "allowed-tools"}

// formatKeys are the top-level frontmatter keys validate accepts: the
// specification's, the keys Parse reads and the extensions real skills carry
// for the agents that read them (OpenClaw, Claude Code). Any other key is an
// error, as in the reference validator. The reference refuses the
// extensions too; validate accepts them because skillgate and those agents
// read them, and refusing them would fail most real skills for no problem.
var formatKeys = append(append([]string(nil), specKeys...),
	// Parse reads these
	keyHomepage, keyAlways, keyVersion,
	// known extensions
	"user-invocable", "requires",
	"disable-model-invocation", "argument-hint", "model",
)

// CheckFormat checks a SKILL.md against the Agent Skills format rules: an
// error for each rule of the specification it breaks (the rules of the
// reference validator, skills-ref), a warning for each of skillgate's own
// advice (a description with "<" or ">", a license that is not text, a long
// body, relative links that do not resolve), each with Location = s.Key. It
// is what `skillgate validate` adds to ParseChecked's diagnostics; the
// gateway does not report it. s is the parse result for data; exists reports
// whether a path relative to the skill directory ("/"-separated, cleaned,
// never leaving the directory) exists, for relative links in the body; nil
// skips that check.
//
// Problems ParseChecked reports already (frontmatter not closed, not YAML or
// not a mapping; a name or description that is empty or not a string; a
// description over 1,024 characters) are not repeated. A missing
// description is reported even when Parse says the skill has none at all:
// Parse's warning is about what the gateway shows, this error about the
// format.
func CheckFormat(s *Skill, data []byte, exists func(rel string) bool) []Diagnostic {
	var out []Diagnostic
	report := func(level Level) func(string, ...any) {
		return func(format string, args ...any) {
			out = append(out, Diagnostic{Location: s.Key, Level: level, Message: fmt.Sprintf(format, args...)})
		}
	}
	// The reference validator's rules are errors; skillgate's extra rules
	// are notes (info): they never fail --strict on a skill the reference
	// accepts.
	fail, note := report(LevelError), report(LevelInfo)
	p := &parser{ref: s.Ref} // its diagnostics duplicate Parse's and are dropped
	text := p.normalize(data)
	fm, body, hasFM := p.splitFrontmatter(text)
	bodyLine := 1 + strings.Count(text[:len(text)-len(body)], "\n")

	// root is the frontmatter mapping; an empty frontmatter (nothing, only
	// comments, or null) has no keys at all. Frontmatter that is not a
	// readable mapping is ParseChecked's error.
	var root *yaml.Node
	empty := false
	if hasFM && bracketDepth(fm) <= maxNesting {
		r, err := parseYAML(fm)
		switch {
		case err != nil:
		case r == nil:
			empty = true
		case r.Kind == yaml.MappingNode:
			root = r
		}
	}
	switch {
	case root != nil || empty:
		keys := map[string]*yaml.Node{}
		var unknown []string
		for i := 0; root != nil && i+1 < len(root.Content); i += 2 {
			k := root.Content[i].Value
			if _, dup := keys[k]; !dup {
				keys[k] = root.Content[i+1]
				if !isFormatKey(k) {
					unknown = append(unknown, k)
				}
			}
		}
		checkFormatFields(keys, s.Dir, s.Description != "", fail, note)
		if len(unknown) > 0 {
			fail("%s", unexpectedFields(unknown))
		}
	case !hasFM && firstLine(text) != "---":
		// A first line "---" without a closing one is ParseChecked's error.
		fail("no frontmatter: the file must start with YAML frontmatter, a block opened and closed by a line \"---\" that holds name and description")
	}

	if n := strings.Count(strings.TrimRight(body, "\n"), "\n") + 1; body != "" && n > maxFormatBodyLines {
		note("the body is %d lines long, more than %d; move details into files the skill links to", n, maxFormatBodyLines)
	}
	if exists != nil {
		for _, l := range relativeLinks(body, bodyLine) {
			switch {
			case l.rel == "":
				// "./" or similar: the directory itself.
			case l.rel == ".." || strings.HasPrefix(l.rel, "../"):
				note("line %d: link %q points outside the skill directory", l.line, l.target)
			case !exists(l.rel):
				note("line %d: link %q does not resolve: no file %q in the skill directory", l.line, l.target, l.rel)
			}
		}
	}
	return out
}

// firstLine returns text up to its first line feed.
func firstLine(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	return line
}

// checkFormatFields checks the specification's fields of a frontmatter
// mapping: fail reports what breaks the specification, warn skillgate's
// advice. Scalars that YAML reads as numbers or booleans count as text, as
// the reference validator reads every scalar as a string.
func checkFormatFields(keys map[string]*yaml.Node, dir string, hasDescription bool, fail, note func(string, ...any)) {
	if v, ok := keys[keyName]; !ok {
		fail("missing required field in frontmatter: name (the directory name %q is used)", dir)
	} else if isString(v) && strings.TrimSpace(v.Value) != "" {
		for _, problem := range nameProblems(v.Value, dir) {
			fail("%s", problem)
		}
	}
	if v, ok := keys[keyDescription]; !ok {
		if hasDescription {
			fail("missing required field in frontmatter: description (the first paragraph of the body is used)")
		} else {
			fail("missing required field in frontmatter: description")
		}
	} else if isNull(v) || (isString(v) && strings.TrimSpace(v.Value) == "") {
		fail("description is empty; the Agent Skills format requires a non-empty description")
	} else if isString(v) && strings.ContainsAny(v.Value, "<>") {
		note("description contains \"<\" or \">\", which can break the markup of a prompt it is pasted into (some skill validators refuse them)")
	}
	if v, ok := keys["compatibility"]; ok {
		if !isScalar(v) {
			fail("compatibility is %s, not a string", nodeKind(v))
		} else if n := utf8.RuneCountInString(v.Value); !isNull(v) && n > maxFormatCompatibility {
			fail("compatibility exceeds the %d character limit (%d characters)", maxFormatCompatibility, n)
		}
	}
	if v, ok := keys["license"]; ok && !isScalar(v) {
		note("license is %s, not a string", nodeKind(v))
	}
	if v, ok := keys["allowed-tools"]; ok {
		switch {
		case v.Kind == yaml.SequenceNode:
			for _, item := range v.Content {
				if !isScalar(item) || isNull(item) {
					fail("allowed-tools has an item that is %s, not a string; write a string or a list of strings", nodeKind(item))
					break
				}
			}
		case !isScalar(v):
			fail("allowed-tools is %s, not a string or a list of strings", nodeKind(v))
		}
	}
}

// isString reports whether n is a YAML string scalar.
func isString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// isScalar reports whether n is a YAML scalar of any type.
func isScalar(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode
}

// isNull reports whether n is YAML null.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// nameProblems says what is wrong with a skill name under the Agent Skills
// rule, one message per problem in the reference validator's order. The
// name is trimmed and NFKC-normalised first ("cafe" + U+0301 is "café"); it
// may hold at most 64 Unicode letters, digits and hyphens, none of them
// uppercase, not start or end with a hyphen nor hold two in a row, and must
// equal its directory's name (NFKC-normalised too: macOS may store the
// directory decomposed).
func nameProblems(raw, dir string) []string {
	name := norm.NFKC.String(strings.TrimSpace(raw))
	var out []string
	if n := utf8.RuneCountInString(name); n > maxFormatName {
		out = append(out, fmt.Sprintf("name %q exceeds the %d character limit (%d characters)", name, maxFormatName, n))
	}
	if strings.ToLower(name) != name {
		out = append(out, fmt.Sprintf("name %q must be lowercase", name))
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		out = append(out, fmt.Sprintf("name %q cannot start or end with a hyphen", name))
	}
	if strings.Contains(name, "--") {
		out = append(out, fmt.Sprintf("name %q cannot contain consecutive hyphens", name))
	}
	if bad := invalidNameChars(name); bad != "" {
		out = append(out, fmt.Sprintf("name %q contains invalid characters (%s); only letters, digits and hyphens are allowed", name, bad))
	}
	if norm.NFKC.String(dir) != name {
		out = append(out, fmt.Sprintf("directory name %q must match skill name %q; the Agent Skills format requires them to be equal", dir, name))
	}
	return out
}

// invalidNameChars lists, quoted, the distinct characters of name that are
// not letters, digits or hyphens (the first 5), or returns "".
func invalidNameChars(name string) string {
	const show = 5
	var bad []string
	seen := map[rune]bool{}
	more := false
	for _, r := range name {
		if r == '-' || unicode.IsLetter(r) || unicode.IsNumber(r) || seen[r] {
			continue
		}
		seen[r] = true
		if len(bad) == show {
			more = true
			break
		}
		bad = append(bad, strconv.QuoteRune(r))
	}
	if more {
		bad = append(bad, "…")
	}
	return strings.Join(bad, ", ")
}

// unexpectedFields is the message about top-level keys the format does not
// define, with the nearest known key as a hint where one is close.
func unexpectedFields(keys []string) string {
	const show = 20 // a file of many keys must not make one huge line
	var b strings.Builder
	b.WriteString("unexpected fields in frontmatter: ")
	for i, k := range keys {
		if i == show {
			fmt.Fprintf(&b, " and %d more", len(keys)-show)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(truncate(k, 64)))
		if hint := nearestFormatKey(k); hint != "" {
			fmt.Fprintf(&b, " (did you mean %q?)", hint)
		}
	}
	b.WriteString("; the Agent Skills format defines only " + strings.Join(specKeys[:len(specKeys)-1], ", ") + " and " + specKeys[len(specKeys)-1] + " — move other data under metadata")
	return b.String()
}

// isFormatKey reports whether k is a known top-level frontmatter key.
func isFormatKey(k string) bool {
	for _, f := range formatKeys {
		if f == k {
			return true
		}
	}
	return false
}

// nearestFormatKey returns the known key closest to k by edit distance,
// or "" when none is close (at most 2 edits, or a third of the key).
func nearestFormatKey(k string) string {
	if len(k) > 128 {
		return ""
	}
	lk := strings.ToLower(k)
	best, bestD := "", -1
	keys := append([]string(nil), formatKeys...)
	sort.Strings(keys) // ties go to the first in order
	for _, f := range keys {
		d := editDistance(lk, f)
		if bestD < 0 || d < bestD {
			best, bestD = f, d
		}
	}
	if bestD <= 2 || bestD*3 <= len(k) {
		return best
	}
	return ""
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment: a swap of two neighbours is one edit) of a and b in bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// link is a relative markdown link of the body.
type link struct {
	line   int    // file line
	target string // as written
	rel    string // cleaned path relative to the skill directory
}

var linkRE = regexp.MustCompile(`!?\[[^\]\n]*\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)`)

// relativeLinks returns the body's markdown links that are relative paths
// (no scheme, not "#…", not absolute), outside fenced code blocks and code
// spans. firstLine is the file line of the body's first line.
func relativeLinks(body string, firstLine int) []link {
	var out []link
	fence := ""
	for i, line := range strings.Split(body, "\n") {
		t := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.TrimSpace(strings.TrimLeft(t, fence[:1])) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			n := len(t) - len(strings.TrimLeft(t, t[:1]))
			fence = strings.Repeat(t[:1], n)
			continue
		}
		if !strings.Contains(line, "](") {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatchIndex(withoutCodeSpans(line), -1) {
			target := strings.TrimSuffix(strings.TrimPrefix(line[m[2]:m[3]], "<"), ">")
			if rel, ok := relativeTarget(target); ok {
				out = append(out, link{line: firstLine + i, target: target, rel: rel})
			}
		}
	}
	return out
}

// withoutCodeSpans blanks `code spans` of a line, keeping byte offsets.
func withoutCodeSpans(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	b := []byte(line)
	in := false
	for i, c := range b {
		if c == '`' {
			in = !in
			continue
		}
		if in {
			b[i] = ' '
		}
	}
	return string(b)
}

// relativeTarget returns the cleaned path of a link target relative to the
// skill directory; ok is false for URLs, anchors and absolute paths.
func relativeTarget(target string) (rel string, ok bool) {
	// OpenClaw's and Claude Code's skills write paths in their own
	// directory as {baseDir}/…, which the agent replaces with it.
	target = strings.TrimPrefix(target, "{baseDir}/")
	if target == "" || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "/") || strings.HasPrefix(target, "\\") {
		return "", false
	}
	if i := strings.IndexAny(target, ":/?#"); i >= 0 && target[i] == ':' {
		return "", false // a scheme: https:, mailto:, …
	}
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	if u, err := url.PathUnescape(target); err == nil {
		target = u
	}
	rel = path.Clean(target)
	if rel == "." {
		return "", true
	}
	return rel, true
}

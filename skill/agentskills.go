package skill

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits of the Agent Skills format (agentskills.io specification).
const (
	maxFormatName          = 64
	maxFormatCompatibility = 500
	maxFormatBodyLines     = 500
)

// formatKeys are the top-level frontmatter keys the Agent Skills
// specification defines, the extensions real skills carry (OpenClaw,
// Claude Code) and the keys Parse reads. Other keys are warned about.
var formatKeys = []string{
	// the specification
	keyName, keyDescription, "license", "compatibility", keyMetadata, "allowed-tools",
	// Parse reads these
	keyHomepage, keyAlways,
	// known extensions
	"user-invocable", "version", "requires",
	"disable-model-invocation", "argument-hint", "model",
}

// CheckFormat checks a SKILL.md against the Agent Skills format rules and
// returns one warning per problem (Location = s.Key). It is what
// `skillgate validate` adds to the parse diagnostics; the gateway does not
// report it. s is Parse's result for data; exists reports whether a path
// relative to the skill directory ("/"-separated, cleaned, never leaving the
// directory) exists, for relative links in the body; nil skips that check.
//
// Problems Parse already reports (a name or description that is empty or
// not a string, a description over 1,024 characters, no description at
// all) are not repeated.
func CheckFormat(s *Skill, data []byte, exists func(rel string) bool) []Diagnostic {
	var out []Diagnostic
	warn := func(format string, args ...any) {
		out = append(out, Diagnostic{Location: s.Key, Level: LevelWarn, Message: fmt.Sprintf(format, args...)})
	}
	p := &parser{ref: s.Ref} // its diagnostics duplicate Parse's and are dropped
	text := p.normalize(data)
	fm, body, hasFM := p.splitFrontmatter(text)
	bodyLine := 1 + strings.Count(text[:len(text)-len(body)], "\n")

	var root *yaml.Node
	if hasFM && bracketDepth(fm) <= maxNesting {
		if r, err := parseYAML(fm); err == nil && r != nil && r.Kind == yaml.MappingNode {
			root = r
		}
	}
	keys := map[string]*yaml.Node{}
	if root != nil {
		var unknown []string
		for i := 0; i+1 < len(root.Content); i += 2 {
			k := root.Content[i].Value
			if _, dup := keys[k]; !dup {
				keys[k] = root.Content[i+1]
				if !isFormatKey(k) {
					unknown = append(unknown, k)
				}
			}
		}
		checkFormatFields(keys, s.Dir, s.Description != "", warn)
		for _, k := range unknown {
			if hint := nearestFormatKey(k); hint != "" {
				warn("unknown frontmatter key %q; did you mean %q?", k, hint)
			} else {
				warn("unknown frontmatter key %q; the Agent Skills format does not define it", k)
			}
		}
	} else if !hasFM {
		warn("no frontmatter: the Agent Skills format requires name and description in a frontmatter block opened and closed by \"---\"")
	}

	if n := strings.Count(strings.TrimRight(body, "\n"), "\n") + 1; body != "" && n > maxFormatBodyLines {
		warn("the body is %d lines long, more than %d; move details into files the skill links to", n, maxFormatBodyLines)
	}
	if exists != nil {
		for _, l := range relativeLinks(body, bodyLine) {
			switch {
			case l.rel == "":
				// "./" or similar: the directory itself.
			case l.rel == ".." || strings.HasPrefix(l.rel, "../"):
				warn("line %d: link %q points outside the skill directory", l.line, l.target)
			case !exists(l.rel):
				warn("line %d: link %q does not resolve: no file %q in the skill directory", l.line, l.target, l.rel)
			}
		}
	}
	return out
}

// checkFormatFields checks the specification's fields of a frontmatter
// mapping.
func checkFormatFields(keys map[string]*yaml.Node, dir string, hasDescription bool, warn func(string, ...any)) {
	if v, ok := keys[keyName]; !ok {
		warn("name is missing; the Agent Skills format requires it (the directory name %q is used)", dir)
	} else if isString(v) && strings.TrimSpace(v.Value) != "" {
		if problem := nameProblem(v.Value); problem != "" {
			warn("name %q %s", v.Value, problem)
		} else if v.Value != dir {
			warn("name %q is not the directory name %q; the Agent Skills format requires them to be equal", v.Value, dir)
		}
	}
	if v, ok := keys[keyDescription]; !ok || isNull(v) {
		if hasDescription {
			warn("description is missing from the frontmatter; the Agent Skills format requires it (the first paragraph of the body is used)")
		}
	} else if isString(v) && strings.ContainsAny(v.Value, "<>") {
		warn("description contains \"<\" or \">\"; the Agent Skills format forbids them (they can break the prompt's markup)")
	}
	if v, ok := keys["compatibility"]; ok {
		if !isString(v) {
			warn("compatibility is %s, not a string", nodeKind(v))
		} else if n := utf8.RuneCountInString(v.Value); n > maxFormatCompatibility {
			warn("compatibility is %d characters long, more than %d", n, maxFormatCompatibility)
		}
	}
	if v, ok := keys["license"]; ok && !isString(v) {
		warn("license is %s, not a string", nodeKind(v))
	}
	if v, ok := keys["allowed-tools"]; ok && !isString(v) && v.Kind != yaml.SequenceNode {
		warn("allowed-tools is %s, not a string or a list", nodeKind(v))
	}
}

// isString reports whether n is a YAML string scalar.
func isString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// isNull reports whether n is YAML null.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// nameProblem says what is wrong with a skill name under the Agent Skills
// rule (1–64 of [a-z0-9-], no leading, trailing or double hyphen), or "".
func nameProblem(name string) string {
	if n := utf8.RuneCountInString(name); n > maxFormatName {
		return fmt.Sprintf("is %d characters long, more than %d", n, maxFormatName)
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return "may hold only lowercase letters a-z, digits and hyphens"
		}
	}
	switch {
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return "must not start or end with a hyphen"
	case strings.Contains(name, "--"):
		return "must not contain two hyphens in a row"
	}
	return ""
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

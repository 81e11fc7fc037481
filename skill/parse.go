package skill

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits on descriptions, in Unicode code points.
const (
	// maxBodyDescription is the length a description taken from the body is
	// cut to, as the reference does.
	maxBodyDescription = 200
	// maxDescription is the length above which a frontmatter description is
	// reported: it is pasted into every prompt build.
	maxDescription = 1024
)

// maxNesting bounds how deeply frontmatter may nest brackets. The YAML and
// HuJSON parsers recurse per level, and a 256 KiB file of brackets would
// cost hundreds of MiB; real metadata nests a handful of levels.
const maxNesting = 64

// bracketDepth returns how deeply [ and { nest in s, ignoring quoting: a
// string with dozens of unbalanced opening brackets is no real skill
// either, and ignoring quotes leaves no way to hide nesting from the count.
func bracketDepth(s string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// maxDiagnostics caps the findings kept per file, so a file with thousands
// of duplicate keys cannot flood `validate` output and gateway snapshots.
const maxDiagnostics = 50

// Frontmatter keys Parse reads. Other keys are ignored without a
// diagnostic because real files carry many (allowed-tools, user-invocable…).
const (
	keyName        = "name"
	keyDescription = "description"
	keyHomepage    = "homepage"
	keyAlways      = "always"
	keyMetadata    = "metadata"
)

// isKnownKey reports whether Parse reads the frontmatter key k.
func isKnownKey(k string) bool {
	switch k {
	case keyName, keyDescription, keyHomepage, keyAlways, keyMetadata, keyVersion:
		return true
	}
	return false
}

// Parse parses one SKILL.md stored at ref. It never fails: every problem
// becomes a Diagnostic (Location = ref.Key) on the returned Skill, and the
// skill is still returned, because one broken file must not hide the others
// or stop a prompt build.
func Parse(ref Ref, data []byte) *Skill {
	s, _ := parse(ref, data)
	return s
}

// TextLines says where Parse read the text a skill puts into prompts from,
// as file lines (the opening "---" is line 1).
type TextLines struct {
	// Name is the line of the frontmatter name; 0 when Name is the
	// directory.
	Name int
	// Description is the line of the frontmatter description, or the first
	// line of the body paragraph it was taken from; 0 when there is none.
	Description int
	// DescriptionFromBody reports a description taken from the body.
	DescriptionFromBody bool
	// Body is the line the body starts on: 1 without frontmatter, one
	// past the last line when the file ends at the closing "---". It is
	// where the frontmatter ends by SplitFrontmatter's rule, so that the
	// governance scanner reads the lines Parse reads as the body as the
	// body, without splitting the file again.
	Body int
}

// ParseLines is Parse, also saying where the name, description and body
// were read from: the governance scanner reports what it finds in them
// there, and reads the body from there.
func ParseLines(ref Ref, data []byte) (*Skill, TextLines) {
	p := &parser{ref: ref}
	s, fromBody := p.parse(data)
	return s, TextLines{Name: p.nameLine, Description: p.descLine, DescriptionFromBody: fromBody, Body: p.bodyStart}
}

// ParseChecked is Parse as `skillgate validate` reads a file: the same Skill
// and the same findings, but those that also break the Agent Skills
// specification are errors instead of warnings: frontmatter that is not
// closed, not YAML (or not readable: nested too deeply, aliases past the
// bounds) or not a mapping; a name or description that is empty or
// a list or mapping; a description over 1,024 characters. The gateway keeps
// Parse's levels because it loads such a skill anyway (with the fallbacks
// the messages name), while validate must fail it as the reference
// validator does. The other spec rules are CheckFormat's.
func ParseChecked(ref Ref, data []byte) *Skill {
	p := &parser{ref: ref, checked: true}
	s, _ := p.parse(data)
	return s
}

// parser collects the diagnostics of one file in the order they are found.
type parser struct {
	ref         Ref
	checked     bool // ParseChecked: spec findings are errors
	diags       []Diagnostic
	dropped     int  // findings beyond maxDiagnostics
	droppedWarn bool // whether one of them was a warning (or an error)
	droppedErr  bool // whether one of them was an error

	nameKeyLine, descKeyLine int // file lines of the name and description keys read
	nameLine, descLine       int // where the name and description were read (see TextLines)
	bodyStart                int // file line the body starts on

	// Where the metadata in use was read from, to find a version's text
	// again (see metadataScalarText): its YAML node, or its JSON text.
	mdNode *yaml.Node
	mdText string
}

// add records a finding about the file; past maxDiagnostics it only counts.
func (p *parser) add(level Level, format string, args ...any) {
	if len(p.diags) >= maxDiagnostics {
		p.dropped++
		p.droppedWarn = p.droppedWarn || level != LevelInfo
		p.droppedErr = p.droppedErr || level == LevelError
		return
	}
	p.diags = append(p.diags, Diagnostic{Location: p.ref.Key, Level: level, Message: fmt.Sprintf(format, args...)})
}

// finish returns the diagnostics, with a last one counting those dropped.
func (p *parser) finish() []Diagnostic {
	if p.dropped > 0 {
		level := LevelInfo
		switch {
		case p.droppedErr:
			level = LevelError
		case p.droppedWarn:
			level = LevelWarn
		}
		p.diags = append(p.diags, Diagnostic{Location: p.ref.Key, Level: level,
			Message: fmt.Sprintf("%d more findings in this file are not shown; fix the ones above and validate again", p.dropped)})
	}
	return p.diags
}

// warn and info record a finding at their level.
func (p *parser) warn(format string, args ...any) { p.add(LevelWarn, format, args...) }
func (p *parser) info(format string, args ...any) { p.add(LevelInfo, format, args...) }

// spec records a finding that also breaks the Agent Skills specification:
// a warning, or an error for ParseChecked.
func (p *parser) spec(format string, args ...any) {
	level := LevelWarn
	if p.checked {
		level = LevelError
	}
	p.add(level, format, args...)
}

// specIf is spec when isSpec holds, else warn.
func (p *parser) specIf(isSpec bool, format string, args ...any) {
	if isSpec {
		p.spec(format, args...)
		return
	}
	p.warn(format, args...)
}

// parse is Parse, also reporting whether the description came from the body
// (the fuzz tests check the 200-code-point cut with it).
func parse(ref Ref, data []byte) (s *Skill, descFromBody bool) {
	p := &parser{ref: ref}
	return p.parse(data)
}

// parse is parse with a parser of the caller's.
func (p *parser) parse(data []byte) (s *Skill, descFromBody bool) {
	ref := p.ref
	s = &Skill{Ref: ref}

	text := p.normalize(data)
	fmText, body, hasFM := p.splitFrontmatter(text)
	s.Body = body
	p.bodyStart = bodyLineOf(fmText, hasFM)

	var fields map[string]any
	if hasFM {
		if d := bracketDepth(fmText); d > maxNesting {
			p.spec("frontmatter nests brackets %d levels deep, more than %d; it is not read (name and description fall back to the directory and the body) — flatten it", d, maxNesting)
		} else {
			fields = p.readFrontmatter(fmText)
		}
	}

	s.Name = p.name(fields, ref.Dir)
	s.Description, descFromBody = p.description(fields, body)
	s.Homepage = p.homepage(fields)
	s.Always = p.always(fields)
	var nsObj map[string]any
	if md := p.metadata(fields); md != nil {
		s.Metadata = md
		s.Namespace, s.Emoji, s.Requires, nsObj = p.namespace(md)
	}
	s.Version = p.version(fields, s.Namespace, nsObj)

	s.Diagnostics = p.finish()
	return s, descFromBody
}

// normalize is normalizeText, warning about invalid UTF-8.
func (p *parser) normalize(data []byte) string {
	text, bad := normalizeText(data)
	if bad > 0 {
		p.warn("file is not valid UTF-8 (line %d); invalid bytes were replaced with U+FFFD — save the file as UTF-8", bad)
	}
	return text
}

// normalizeText strips a UTF-8 BOM, turns CRLF and lone CR into LF and
// replaces invalid UTF-8 with U+FFFD, so that every string of the Skill is
// valid UTF-8 and line numbers in diagnostics match what editors show.
// badLine is the line of the first invalid byte, 0 when there is none.
func normalizeText(data []byte) (text string, badLine int) {
	text = strings.TrimPrefix(string(data), "\uFEFF")
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	if utf8.ValidString(text) {
		return text, 0
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			badLine = 1 + strings.Count(text[:i], "\n")
			break
		}
		i += size
	}
	return strings.ToValidUTF8(text, "\uFFFD"), badLine
}

// SplitFrontmatter separates a SKILL.md's frontmatter from its body exactly
// as Parse does; it is the one rule for where frontmatter ends, shared with
// the governance scanner so that both read the same lines as the body. The
// file is normalized first (BOM stripped, CRLF and lone CR turned into LF,
// invalid UTF-8 replaced with U+FFFD). The first line must be exactly
// "---"; the frontmatter ends at the next line that is "---" with optional
// trailing spaces or tabs. Without that opening line, or without a closing
// line, ok is false and the whole file is the body. bodyLine is the file
// line the body starts on (1 when there is no frontmatter; one past the
// last line when the file ends at the closing line).
func SplitFrontmatter(data []byte) (fm, body string, bodyLine int, ok bool) {
	text, _ := normalizeText(data)
	fm, body, ok, _ = splitText(text)
	if !ok {
		return "", text, 1, false
	}
	return fm, body, bodyLineOf(fm, true), true
}

// bodyLineOf is the file line a body starts on: after the opening line, the
// frontmatter's lines and the closing line, or 1 without frontmatter.
func bodyLineOf(fm string, hasFM bool) int {
	if !hasFM {
		return 1
	}
	return strings.Count(fm, "\n") + 3
}

// Why splitText found no frontmatter.
const (
	splitNoOpening = iota // the first line is not "---"
	splitNearMiss         // the first line is "---" with trailing spaces or tabs
	splitNotClosed        // no line closes it
)

// splitText is SplitFrontmatter on normalized text; why says what kept it
// from finding frontmatter.
func splitText(text string) (fm, body string, ok bool, why int) {
	first, rest, hasNewline := strings.Cut(text, "\n")
	if first != "---" {
		if strings.TrimRight(first, " \t") == "---" {
			return "", text, false, splitNearMiss
		}
		return "", text, false, splitNoOpening
	}
	if hasNewline {
		for pos := 0; pos <= len(rest); {
			line, next := rest[pos:], len(rest)+1
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line, next = line[:i], pos+i+1
			}
			if strings.TrimRight(line, " \t") == "---" {
				return rest[:pos], rest[min(next, len(rest)):], true, 0
			}
			pos = next
		}
	}
	return "", text, false, splitNotClosed
}

// splitFrontmatter is splitText, reporting why a file that looks like it
// has frontmatter has none.
func (p *parser) splitFrontmatter(text string) (fm, body string, ok bool) {
	fm, body, ok, why := splitText(text)
	switch {
	case ok:
	case why == splitNearMiss:
		// Looks like frontmatter to a person, so say why it is not.
		first, _, _ := strings.Cut(text, "\n")
		p.warn("the first line is %q, not exactly \"---\", so it does not open frontmatter; the whole file is read as the body — remove the trailing spaces", first)
	case why == splitNotClosed:
		p.spec("frontmatter is not closed: the first line is \"---\" but no later line is \"---\"; the whole file is read as the body — add a line \"---\" after the frontmatter")
	}
	return fm, body, ok
}

// name returns the trimmed frontmatter name, else the directory name.
func (p *parser) name(fields map[string]any, dir string) string {
	v, present := fields[keyName]
	if !present {
		return dir
	}
	str, isString := v.(string)
	switch {
	case isString && strings.TrimSpace(str) != "":
		p.nameLine = p.nameKeyLine
		return strings.TrimSpace(str)
	case isString || v == nil:
		p.spec("name is empty; the directory name %q is used — set name or remove the line", dir)
	default:
		// A number or boolean is text to the reference validator (it reads
		// every scalar as a string); a list or mapping is not.
		p.specIf(isCollection(v), "name is %s, not a string; the directory name %q is used — write name as text", aKind(v), dir)
	}
	return dir
}

// description returns the trimmed frontmatter description, else the first
// paragraph of the body that is not a heading.
func (p *parser) description(fields map[string]any, body string) (desc string, fromBody bool) {
	if v, present := fields[keyDescription]; present && v != nil {
		str, isString := v.(string)
		if !isString {
			p.specIf(isCollection(v), "description is %s, not a string; the first paragraph of the body is used — write description as text", aKind(v))
		} else if d := strings.TrimSpace(str); d != "" {
			if n := utf8.RuneCountInString(d); n > maxDescription {
				p.spec("description exceeds the %d character limit (%d characters); it is kept, but it is pasted into every prompt — shorten it", maxDescription, n)
			}
			p.descLine = p.descKeyLine
			return d, false
		}
	}
	if d, line := bodyParagraph(body); d != "" {
		p.descLine = p.bodyStart + line
		return d, true
	}
	p.warn("no description: the frontmatter has none and the body has no paragraph of text; the skill is listed without one — add description to the frontmatter")
	return "", false
}

// homepage returns the trimmed frontmatter homepage, or "".
func (p *parser) homepage(fields map[string]any) string {
	v, present := fields[keyHomepage]
	if !present || v == nil {
		return ""
	}
	str, isString := v.(string)
	if !isString {
		p.warn("homepage is %s, not a string; it is ignored — write homepage as text", aKind(v))
		return ""
	}
	return strings.TrimSpace(str)
}

// always returns the frontmatter `always`. The strings "true" and "false"
// are accepted because hand-written files quote them; anything else is false.
func (p *parser) always(fields map[string]any) bool {
	v, present := fields[keyAlways]
	if !present || v == nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		switch t := strings.TrimSpace(x); {
		case strings.EqualFold(t, "true"):
			p.warn("always is the string %q, not a boolean; it is read as true — write always: true without quotes", x)
			return true
		case strings.EqualFold(t, "false"):
			p.warn("always is the string %q, not a boolean; it is read as false — write always: false without quotes", x)
			return false
		}
	}
	p.warn("always is %s, not true or false; it is read as false — write always: true or always: false", describe(v))
	return false
}

// kind names a JSON-compatible value's type for messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// isCollection reports whether a JSON-compatible value is a list or a
// mapping.
func isCollection(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

// aKind is kind with an article: "a list", "null".
func aKind(v any) string {
	if v == nil {
		return "null"
	}
	return "a " + kind(v)
}

// describe names a value for a message: its text for scalars (shortened),
// its type for lists and mappings.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", truncate(x, 40))
	case float64:
		return fmt.Sprintf("the number %v", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	}
	return aKind(v)
}

// truncate cuts s to at most n code points, marking the cut with "…".
func truncate(s string, n int) string {
	if cut := cutRunes(s, n); len(cut) < len(s) {
		return cut + "…"
	}
	return s
}

// cutRunes returns the longest prefix of s with at most n code points, so a
// multi-byte character is never split.
func cutRunes(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}

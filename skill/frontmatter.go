package skill

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// fmLineOffset turns a frontmatter line number into a file line number: the
// opening "---" is line 1.
const fmLineOffset = 1

// readFrontmatter returns the keys Parse reads (see isKnownKey) that the
// frontmatter holds, as JSON-compatible values. YAML that does not parse, or
// whose top level is not a mapping, is read line by line instead (see
// readFlat), so one YAML mistake does not lose the whole skill.
func (p *parser) readFrontmatter(fm string) map[string]any {
	root, err := parseYAML(fm)
	if err != nil {
		p.spec("frontmatter is invalid YAML (%s); read name, description, homepage, always and metadata line by line", yamlErrorText(err, fmLineOffset))
		return p.readFlat(fm)
	}
	if root == nil {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.spec("frontmatter is a YAML %s, not a mapping of keys to values; read name, description, homepage, always and metadata line by line", nodeKind(root))
		return p.readFlat(fm)
	}
	c := p.newConverter(len(fm), fmLineOffset)
	out := make(map[string]any)
	pairs, err := c.pairs(root)
	if err != nil {
		p.spec("frontmatter cannot be read (%v); read name, description, homepage, always and metadata line by line", err)
		return p.readFlat(fm)
	}
	lines := make(map[string]int)
	var fmLines []string // split once, only when needed
	for _, kv := range pairs {
		if !isKnownKey(kv.key) {
			continue
		}
		if kv.key == keyMetadata && kv.val.Kind == yaml.MappingNode && kv.val.Style&yaml.FlowStyle != 0 {
			if fmLines == nil {
				fmLines = strings.Split(fm, "\n")
			}
			if md, text, ok := flowMetadataAsJSON(fmLines, kv); ok {
				c.noteKey(lines, kv, nil)
				out[kv.key] = md
				p.mdText, p.mdNode = text, nil
				continue
			}
		}
		if kv.key == keyVersion {
			c.noteKey(lines, kv, nil)
			out[kv.key] = versionOf(kv.val)
			continue
		}
		v, err := c.value(kv.val, rootPath(kv.key))
		if err != nil {
			p.warn("frontmatter key %q cannot be read (%v); it is ignored — fix its value", kv.key, err)
			continue
		}
		c.noteKey(lines, kv, nil)
		out[kv.key] = v
		if kv.key == keyMetadata {
			p.mdText, p.mdNode = "", kv.val
		}
		p.noteKeyLine(kv.key, kv.line)
	}
	return out
}

// noteKeyLine records the file line the name or description was read from.
func (p *parser) noteKeyLine(key string, line int) {
	switch key {
	case keyName:
		p.nameKeyLine = line
	case keyDescription:
		p.descKeyLine = line
	}
}

// flowMetadataAsJSON reads metadata written as a YAML flow mapping ({…})
// as HuJSON from its source lines (the frontmatter's lines). Such metadata is meant as JSON, and YAML
// misreads JSON comments without an error: `/* c */ "openclaw": {…}` is a
// YAML key "/* c */ \"openclaw\"", which would silently drop the skill's
// requirements. ok is false when the text is not HuJSON; YAML's reading is
// used then (e.g. for unquoted keys). For valid JSON both readings agree.
// text is the metadata's source text.
func flowMetadataAsJSON(lines []string, kv pair) (md map[string]any, text string, ok bool) {
	i := kv.line - fmLineOffset - 1
	if i < 0 || i >= len(lines) {
		return nil, "", false
	}
	inline, block, _ := valueLines(lines, i, kv.col)
	text = inline + "\n" + strings.Join(block, "\n")
	md, err := parseMetadataJSON(text)
	return md, text, err == nil
}

// parseYAML parses one YAML document into its root node; nil means an
// empty document (nothing, only comments, or null).
func parseYAML(text string) (root *yaml.Node, err error) {
	defer func() {
		// The file comes from storage and must never take the gateway down.
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	root = doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	return root, nil
}

// yamlErrorText renders a yaml.v3 error without its "yaml: " prefix and
// with a file line number (frontmatter line + offset). yaml.v3 reports
// scanner errors with 1-based lines but parser errors with 0-based ones, and
// leaves the line out when it is 0, so both are corrected here.
func yamlErrorText(err error, offset int) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, tail
			}
		}
	}
	switch {
	case isYAMLParserProblem(msg):
		line++
	case line == 0 && isYAMLScannerProblem(msg):
		line = 1
	}
	if line == 0 {
		return msg // not about a position, e.g. an unknown anchor
	}
	return fmt.Sprintf("line %d: %s", line+offset, msg)
}

// isYAMLParserProblem reports whether msg is one of yaml.v3's parser
// (not scanner) problems, whose line numbers are 0-based.
func isYAMLParserProblem(msg string) bool {
	switch msg {
	case "did not find expected key",
		"did not find expected node content",
		"did not find expected ',' or '}'",
		"did not find expected ',' or ']'",
		"did not find expected '-' indicator",
		"did not find expected <document start>",
		"did not find expected <stream-start>",
		"found undefined tag handle",
		"found duplicate %YAML directive",
		"found duplicate %TAG directive",
		"found incompatible YAML document":
		return true
	}
	return false
}

// isYAMLScannerProblem reports whether msg is one of yaml.v3's scanner
// problems, which always have a position.
func isYAMLScannerProblem(msg string) bool {
	for _, prefix := range []string{"found ", "did not find ", "could not find ", "mapping values ", "mapping keys ", "block sequence entries "} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// nodeKind names a YAML node's kind for messages.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			return "number"
		case "!!bool":
			return "boolean"
		}
		return "string"
	}
	return "document"
}

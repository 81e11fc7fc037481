package skill

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// flatMetadata is what the line reader found for `metadata`: the value after
// "metadata:" with its indented block, and the same lines as a YAML snippet.
type flatMetadata struct {
	raw     string
	snippet string
	line    int // file line of "metadata:"
}

// readFlat is the fallback for frontmatter that is not valid YAML. It reads
// the known keys from unindented "key: value" lines; a key's value goes on
// over the lines after it that are indented or blank.
//
// Each key's own lines are first parsed as YAML on their own, so a mistake
// elsewhere does not lose quoting, escapes or block scalars here. When they
// do not parse either, a scalar is the trimmed text (continuation lines
// joined with a space, one pair of matching surrounding quotes removed), and
// metadata is parsed as HuJSON (see flatMetadataValue).
func (p *parser) readFlat(fm string) map[string]any {
	lines := strings.Split(strings.TrimSuffix(fm, "\n"), "\n")
	out := make(map[string]any)
	seen := make(map[string]int)
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" || isIndented(line) || line[0] == '#' {
			continue
		}
		k, _, ok := strings.Cut(line, ":")
		key := strings.TrimRight(k, " \t")
		if !ok || !isKnownKey(key) {
			continue
		}
		inline, block, next := valueLines(lines, i, 0)
		fileLine := i + 1 + fmLineOffset
		if prev, dup := seen[key]; dup {
			p.duplicateKey(key, "", prev, fileLine)
		}
		seen[key] = fileLine
		snippet := strings.Join(lines[i:i+1+len(block)], "\n")
		switch key {
		case keyMetadata:
			raw := strings.TrimSpace(inline + "\n" + strings.Join(block, "\n"))
			out[key] = flatMetadata{raw: raw, snippet: snippet, line: fileLine}
		case keyVersion:
			out[key] = flatVersion(snippet, inline, block)
		default:
			out[key] = p.flatScalar(key, snippet, inline, block, fileLine)
		}
		p.noteKeyLine(key, fileLine)
		i = next - 1
	}
	return out
}

// valueLines returns the text of the value of the key that starts at byte
// column col of lines[i]: what follows the key's colon on that line, and the
// lines after it that are blank or indented deeper than col, without
// trailing blank lines. next is the index of the first line not taken.
func valueLines(lines []string, i, col int) (inline string, block []string, next int) {
	if col < len(lines[i]) {
		_, inline, _ = strings.Cut(lines[i][col:], ":")
	}
	next = i + 1
	for next < len(lines) && (strings.TrimSpace(lines[next]) == "" || indentWidth(lines[next]) > col) {
		next++
	}
	end := next
	for end > i+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	return inline, lines[i+1 : end], next
}

// indentWidth is the number of leading spaces and tabs of line.
func indentWidth(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}

// isIndented reports whether line starts with a space or a tab.
func isIndented(line string) bool {
	return line != "" && (line[0] == ' ' || line[0] == '\t')
}

// flatScalar reads one key's value from its lines.
func (p *parser) flatScalar(key, snippet, inline string, block []string, line int) any {
	if v, ok := p.snippetValue(key, snippet, line); ok {
		return v
	}
	parts := []string{strings.TrimSpace(inline)}
	for _, l := range block {
		if t := strings.TrimSpace(l); t != "" {
			parts = append(parts, t)
		}
	}
	return unquote(strings.TrimSpace(strings.Join(parts, " ")))
}

// snippetValue parses the lines of one key as a YAML mapping of that key
// alone and returns the key's value.
func (p *parser) snippetValue(key, snippet string, line int) (any, bool) {
	root, err := parseYAML(snippet)
	if err != nil || root == nil || root.Kind != yaml.MappingNode || len(root.Content) != 2 || root.Content[0].Value != key {
		return nil, false
	}
	c := p.newConverter(len(snippet), line-1)
	v, err := c.value(root.Content[1], rootPath(key))
	if err != nil {
		return nil, false
	}
	return v, true
}

// unquote removes one pair of matching surrounding quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// flatVersion reads the version key's lines: as YAML on their own (the
// scalar's text as written), else as the trimmed text without quotes.
func flatVersion(snippet, inline string, block []string) versionValue {
	if root, err := parseYAML(snippet); err == nil && root != nil && root.Kind == yaml.MappingNode && len(root.Content) == 2 {
		return versionOf(root.Content[1])
	}
	parts := []string{strings.TrimSpace(inline)}
	for _, l := range block {
		if t := strings.TrimSpace(l); t != "" {
			parts = append(parts, t)
		}
	}
	return versionValue{text: strings.TrimSpace(unquote(strings.TrimSpace(strings.Join(parts, " "))))}
}

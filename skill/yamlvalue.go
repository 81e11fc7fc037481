package skill

import (
	"fmt"
	"math"

	"gopkg.in/yaml.v3"
)

// minValueBudget is the number of YAML values a conversion may produce
// beyond one per byte of input. Without aliases a document cannot have more
// values than bytes; the budget stops alias bombs ("billion laughs").
const minValueBudget = 10000

// converter turns yaml.v3 nodes into JSON-compatible values: map[string]any,
// []any, string, float64, bool and nil, the same shapes the HuJSON metadata
// path produces, so later stages never see YAML-specific types.
type converter struct {
	p          *parser
	lineOffset int // added to node lines to get file lines
	limit      int
	spent      int
	active     map[*yaml.Node]bool // alias targets being converted, to stop cycles
}

func (p *parser) newConverter(inputLen, lineOffset int) *converter {
	return &converter{p: p, lineOffset: lineOffset, limit: inputLen + minValueBudget, active: make(map[*yaml.Node]bool)}
}

func (c *converter) spend() error {
	c.spent++
	if c.spent > c.limit {
		return fmt.Errorf("YAML aliases expand to more than %d values", c.limit)
	}
	return nil
}

// enter marks an alias target as being converted; it fails when the target
// contains the alias itself.
func (c *converter) enter(alias *yaml.Node) (*yaml.Node, error) {
	t := alias.Alias
	if t == nil {
		return nil, fmt.Errorf("alias *%s at line %d has no anchor", alias.Value, alias.Line+c.lineOffset)
	}
	if c.active[t] {
		return nil, fmt.Errorf("alias *%s at line %d refers to a value that contains it", alias.Value, alias.Line+c.lineOffset)
	}
	c.active[t] = true
	return t, nil
}

// value converts n. path names it in messages ("metadata.openclaw").
func (c *converter) value(n *yaml.Node, path string) (any, error) {
	if err := c.spend(); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.AliasNode:
		t, err := c.enter(n)
		if err != nil {
			return nil, err
		}
		defer delete(c.active, t)
		return c.value(t, path)
	case yaml.ScalarNode:
		return scalarValue(n), nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			v, err := c.value(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		pairs, err := c.pairs(n)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(pairs))
		lines := make(map[string]int, len(pairs))
		for _, kv := range pairs {
			v, err := c.value(kv.val, path+"."+kv.key)
			if err != nil {
				return nil, err
			}
			c.noteKey(lines, kv, path)
			out[kv.key] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected YAML node at line %d", n.Line+c.lineOffset)
}

// scalarValue converts a scalar by its resolved tag. Values JSON cannot
// hold (timestamps, binary, infinities, custom tags) keep their source text.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int", "!!float":
		// float64 for integers too, as encoding/json gives the HuJSON path.
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
	}
	return n.Value
}

// pair is one key and value of a mapping.
type pair struct {
	key    string
	line   int // file line of the key
	col    int // 0-based column of the key
	val    *yaml.Node
	merged bool // came from a merge key (<<), so it cannot be a duplicate
}

// pairs lists a mapping's pairs in order, then the pairs merge keys (<<)
// bring in for keys not set explicitly, as yaml.v3 itself resolves merges.
func (c *converter) pairs(n *yaml.Node) ([]pair, error) {
	if err := c.spend(); err != nil {
		return nil, err
	}
	var out []pair
	var merges []*yaml.Node
	explicit := make(map[string]bool)
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		key, err := c.key(kn)
		if err != nil {
			return nil, err
		}
		explicit[key] = true
		out = append(out, pair{key: key, line: kn.Line + c.lineOffset, col: kn.Column - 1, val: vn})
	}
	for _, m := range merges {
		merged, err := c.mergePairs(m)
		if err != nil {
			return nil, err
		}
		for _, kv := range merged {
			if !explicit[kv.key] {
				explicit[kv.key] = true
				kv.merged = true
				out = append(out, kv)
			}
		}
	}
	return out, nil
}

// mergePairs lists the pairs a merge key's value brings in: a mapping, or a
// list of mappings where earlier ones win.
func (c *converter) mergePairs(m *yaml.Node) ([]pair, error) {
	if m.Kind == yaml.AliasNode {
		t, err := c.enter(m)
		if err != nil {
			return nil, err
		}
		defer delete(c.active, t)
		m = t
	}
	switch m.Kind {
	case yaml.MappingNode:
		return c.pairs(m)
	case yaml.SequenceNode:
		var out []pair
		seen := make(map[string]bool)
		for _, e := range m.Content {
			if e.Kind != yaml.MappingNode && e.Kind != yaml.AliasNode {
				return nil, fmt.Errorf("a merge key (<<) at line %d needs a mapping or a list of mappings", m.Line+c.lineOffset)
			}
			ps, err := c.mergePairs(e)
			if err != nil {
				return nil, err
			}
			for _, kv := range ps {
				if !seen[kv.key] {
					seen[kv.key] = true
					out = append(out, kv)
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("a merge key (<<) at line %d needs a mapping or a list of mappings", m.Line+c.lineOffset)
}

// key renders a mapping key as a string: scalars keep their source text
// ("1.0", "~"), so keys read as written; other keys are formatted with
// fmt.Sprint.
func (c *converter) key(kn *yaml.Node) (string, error) {
	if kn.Kind == yaml.AliasNode {
		t, err := c.enter(kn)
		if err != nil {
			return "", err
		}
		defer delete(c.active, t)
		kn = t
	}
	if kn.Kind == yaml.ScalarNode {
		return kn.Value, nil
	}
	v, err := c.value(kn, "key")
	if err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}

// noteKey records a key of a mapping and reports it when it was already
// there; the last value wins, as in encoding/json.
func (c *converter) noteKey(lines map[string]int, kv pair, path string) {
	if kv.merged {
		return
	}
	if prev, dup := lines[kv.key]; dup {
		c.p.duplicateKey(kv.key, path, prev, kv.line)
	}
	lines[kv.key] = kv.line
}

// duplicateKey reports a key that appears twice in one mapping.
func (p *parser) duplicateKey(key, path string, first, again int) {
	where := "the frontmatter"
	if path != "" {
		where = path
	}
	p.warn("key %q appears more than once in %s (lines %d and %d); the last one is used — remove the duplicate", key, where, first, again)
}

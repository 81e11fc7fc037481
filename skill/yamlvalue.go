package skill

import (
	"fmt"
	"math"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Bounds on what a conversion may produce. Without aliases a document
// cannot have more values than bytes, nor much more text than bytes; with
// aliases it can have exponentially more values ("billion laughs"), or
// repeat a long string or key many times within few values.
const (
	// minValueBudget is the number of values a conversion may produce
	// beyond one per byte of input.
	minValueBudget = 10000
	// maxExpansion is how many bytes of keys and scalar values (counted
	// each time an alias repeats them) a conversion may produce per byte of
	// input. Without aliases it is under 1.5 (an escape such as "\L" turns
	// two bytes into three), about twice that when lists or mappings are
	// keys (their elements and their rendering both count); 4 leaves room
	// to reuse anchors and caps a 256 KiB file at about 1 MiB of text.
	maxExpansion = 4
	// minExpansionBytes is the text allowance beyond that, so that a short
	// file may reuse an anchor freely.
	minExpansionBytes = 64 << 10
	// aliasValueCost is what one value produced through an alias (or a
	// merge key) is charged, in bytes, besides its text: about what a Go
	// value in a map or slice keeps live. Without it, aliases of many
	// short values stay inside both bounds above and still make a 250 KiB
	// file hold about 8 MB.
	aliasValueCost = 32
)

// converter turns yaml.v3 nodes into JSON-compatible values: map[string]any,
// []any, string, float64, bool and nil, the same shapes the HuJSON metadata
// path produces, so later stages never see YAML-specific types.
type converter struct {
	p          *parser
	lineOffset int // added to node lines to get file lines
	limit      int // values
	spent      int
	textLimit  int // bytes of keys and scalar values
	textSpent  int
	aliasLimit int // what values produced through aliases may cost, see aliasValueCost
	aliasSpent int
	inAlias    int                 // depth of alias and merge-key dereferences being converted
	active     map[*yaml.Node]bool // alias targets being converted, to stop cycles
}

func (p *parser) newConverter(inputLen, lineOffset int) *converter {
	return &converter{
		p:          p,
		lineOffset: lineOffset,
		limit:      inputLen + minValueBudget,
		textLimit:  maxExpansion*inputLen + minExpansionBytes,
		aliasLimit: inputLen + minExpansionBytes,
		active:     make(map[*yaml.Node]bool),
	}
}

func (c *converter) spend() error {
	c.spent++
	if c.spent > c.limit {
		return fmt.Errorf("YAML aliases expand to more than %d values", c.limit)
	}
	return c.spendAlias(aliasValueCost)
}

// spendAlias charges n bytes to what aliases produce, when inside one.
func (c *converter) spendAlias(n int) error {
	if c.inAlias == 0 {
		return nil
	}
	c.aliasSpent += n
	if c.aliasSpent > c.aliasLimit {
		return fmt.Errorf("YAML aliases expand to more than %d bytes of values", c.aliasLimit)
	}
	return nil
}

// spendText counts n bytes of a key or scalar value as it is produced. The
// value count alone lets aliases repeat a long string thousands of times,
// and whatever later encodes the result (JSON output, messages) pays for
// every copy.
func (c *converter) spendText(n int) error {
	c.textSpent += n
	if c.textSpent > c.textLimit {
		return fmt.Errorf("YAML aliases expand to more than %d bytes of keys and values", c.textLimit)
	}
	return c.spendAlias(n)
}

// valuePath names a value in messages ("metadata.openclaw[2]"). It is
// rendered only when a message needs it: rendering it for every value would
// copy each ancestor key once per descendant, which a long key repeated
// through aliases multiplies.
type valuePath struct {
	parent *valuePath
	key    string
	index  int // a list index, or -1 for a key
}

// rootPath is the path of a top-level value: its key.
func rootPath(key string) *valuePath { return &valuePath{key: key, index: -1} }

// String renders the path as messages show it; nil is "".
func (vp *valuePath) String() string {
	switch {
	case vp == nil:
		return ""
	case vp.parent == nil:
		return vp.key
	case vp.index >= 0:
		return vp.parent.String() + "[" + strconv.Itoa(vp.index) + "]"
	}
	return vp.parent.String() + "." + vp.key
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

// value converts n. at names it in messages.
func (c *converter) value(n *yaml.Node, at *valuePath) (any, error) {
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
		c.inAlias++
		defer func() { c.inAlias-- }()
		return c.value(t, at)
	case yaml.ScalarNode:
		if err := c.spendText(len(n.Value)); err != nil {
			return nil, err
		}
		return scalarValue(n), nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		elem := valuePath{parent: at} // reused: paths are not kept
		for i, e := range n.Content {
			elem.index = i
			v, err := c.value(e, &elem)
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
		elem := valuePath{parent: at, index: -1}
		for _, kv := range pairs {
			elem.key = kv.key
			if kv.merged {
				c.inAlias++ // a merge key repeats its alias's values
			}
			v, err := c.value(kv.val, &elem)
			if kv.merged {
				c.inAlias--
			}
			if err != nil {
				return nil, err
			}
			c.noteKey(lines, kv, at)
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
		if err := c.spendText(len(key)); err != nil {
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
	v, err := c.value(kn, rootPath("key"))
	if err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}

// noteKey records a key of a mapping and reports it when it was already
// there; the last value wins, as in encoding/json.
func (c *converter) noteKey(lines map[string]int, kv pair, at *valuePath) {
	if kv.merged {
		return
	}
	if prev, dup := lines[kv.key]; dup {
		c.p.duplicateKey(kv.key, at.String(), prev, kv.line)
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

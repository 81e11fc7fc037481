package skill

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
	"gopkg.in/yaml.v3"
)

// keyVersion is the frontmatter key of a skill's version (not in the Agent
// Skills specification, but the most frequent key it does not define).
const keyVersion = "version"

// versionValue is what a version key holds: a scalar's text as written
// (YAML's 1.10 stays "1.10", not the number 1.1), or, for anything else,
// what it is (kind, for a message).
type versionValue struct {
	text string
	kind string // "" for a scalar; else "a list", "a mapping"
}

// versionOf reads a version key's YAML value.
func versionOf(n *yaml.Node) versionValue {
	n = deref(n)
	switch {
	case n == nil:
		return versionValue{}
	case n.Kind == yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return versionValue{}
		}
		return versionValue{text: strings.TrimSpace(n.Value)}
	case n.Kind == yaml.SequenceNode:
		return versionValue{kind: "a list"}
	}
	return versionValue{kind: "a mapping"}
}

// deref follows aliases (at most a few: a YAML document cannot alias
// itself into a loop of aliases alone).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// version returns the skill's version: the frontmatter's top-level
// version, else the version of the metadata namespace in use (obj, named
// ns), each as the scalar's text; "" when there is none.
func (p *parser) version(fields map[string]any, ns string, obj map[string]any) string {
	if v, present := fields[keyVersion]; present {
		vv, _ := v.(versionValue)
		switch {
		case vv.kind != "":
			p.warn("version is %s, not a version like 1.2.0; it is ignored — write the version as text", vv.kind)
		case vv.text != "":
			return vv.text
		}
	}
	if obj == nil {
		return ""
	}
	switch x := obj[keyVersion].(type) {
	case nil:
	case string:
		return strings.TrimSpace(x)
	case float64, bool:
		if t := p.metadataScalarText(ns); t != "" {
			return t
		}
		if f, ok := x.(float64); ok {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return strconv.FormatBool(x.(bool))
	default:
		p.warn("metadata.%s.version is %s, not a version like 1.2.0; it is ignored — write the version as text", ns, aKind(x))
	}
	return ""
}

// metadataScalarText returns metadata.<ns>.version as written in the
// file, for a value the parsers turned into a number or a boolean: from
// the metadata's YAML nodes, or from its JSON text. "" when it cannot be
// found again (the value then is formatted back).
func (p *parser) metadataScalarText(ns string) string {
	switch {
	case p.mdNode != nil:
		md := deref(p.mdNode)
		if md == nil || md.Kind != yaml.MappingNode {
			return ""
		}
		text := ""
		for i := 0; i+1 < len(md.Content); i += 2 {
			if md.Content[i].Value != ns {
				continue
			}
			obj := deref(md.Content[i+1])
			if obj == nil || obj.Kind != yaml.MappingNode {
				continue
			}
			for j := 0; j+1 < len(obj.Content); j += 2 {
				if obj.Content[j].Value == keyVersion {
					if v := deref(obj.Content[j+1]); v != nil && v.Kind == yaml.ScalarNode {
						text = strings.TrimSpace(v.Value) // the last one wins, as in the mapping
					}
				}
			}
		}
		return text
	case p.mdText != "":
		b, err := hujson.Standardize([]byte(p.mdText))
		if err != nil {
			return ""
		}
		var md map[string]json.RawMessage
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &md) != nil || json.Unmarshal(md[ns], &obj) != nil {
			return ""
		}
		return strings.TrimSpace(string(obj[keyVersion]))
	}
	return ""
}

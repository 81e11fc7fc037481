package skill

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Metadata namespaces, in priority order.
const (
	NamespaceGSV      = "gsv"
	NamespaceOpenClaw = "openclaw"
	NamespaceClawdbot = "clawdbot"
)

// namespaceOrder is the priority order of the metadata namespaces.
var namespaceOrder = [...]string{NamespaceGSV, NamespaceOpenClaw, NamespaceClawdbot}

// metadata returns the frontmatter metadata object, or nil.
func (p *parser) metadata(fields map[string]any) map[string]any {
	v, present := fields[keyMetadata]
	if !present || v == nil {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		return x
	case string:
		md, err := parseMetadataJSON(x)
		if err != nil {
			p.warnMetadataJSON(err)
			return nil
		}
		p.mdText, p.mdNode = x, nil
		return md
	case flatMetadata:
		return p.flatMetadataValue(x)
	}
	p.warn("metadata is %s, not a mapping or a string holding a JSON object; it is ignored — write metadata as a mapping", aKind(v))
	return nil
}

// warnMetadataJSON reports metadata text that parseMetadataJSON refused.
func (p *parser) warnMetadataJSON(err error) {
	p.warn("%v; it is ignored — write metadata as a JSON object (comments and trailing commas are allowed)", err)
}

// parseMetadataJSON parses a metadata string as HuJSON (JSON with comments
// and trailing commas) into JSON-compatible values; numbers become float64.
// The top level must be an object.
func parseMetadataJSON(s string) (map[string]any, error) {
	b, err := hujson.Standardize([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("metadata is not valid JSON (%s)", hujsonErrorText(err))
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("metadata is not valid JSON (%s)", strings.ToValidUTF8(err.Error(), "\uFFFD"))
	}
	md, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("metadata holds a JSON %s, not an object", jsonKind(v))
	}
	return md, nil
}

// hujsonErrorText renders a hujson error without its prefix, saying that
// its position is within the metadata value, not the file.
func hujsonErrorText(err error) string {
	// hujson quotes bad input bytes as they are.
	msg := strings.ToValidUTF8(strings.TrimPrefix(err.Error(), "hujson: "), "\uFFFD")
	if pos, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(pos, "line ") {
		return pos + " of the value: " + rest
	}
	return msg
}

// jsonKind names a decoded JSON value's type in JSON's words.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return kind(v)
}

// flatMetadataValue reads metadata the line reader found: as HuJSON first
// (the common form, a JSON flow mapping), then as YAML on its own lines (a
// block mapping whose YAML is fine even though the frontmatter's is not).
func (p *parser) flatMetadataValue(fm flatMetadata) map[string]any {
	if fm.raw == "" {
		return nil
	}
	md, jsonErr := parseMetadataJSON(fm.raw)
	if jsonErr == nil {
		p.mdText, p.mdNode = fm.raw, nil
		return md
	}
	if v, ok := p.snippetValue(keyMetadata, fm.snippet, fm.line); ok {
		switch x := v.(type) {
		case map[string]any:
			if root, err := parseYAML(fm.snippet); err == nil && root != nil && len(root.Content) == 2 {
				p.mdText, p.mdNode = "", root.Content[1]
			}
			return x
		case string:
			if md, err := parseMetadataJSON(x); err == nil {
				p.mdText, p.mdNode = x, nil
				return md
			} else {
				jsonErr = err
			}
		}
	}
	p.warnMetadataJSON(jsonErr)
	return nil
}

// namespace picks the first of gsv, openclaw and clawdbot whose value is an
// object and returns its name, emoji, requirements and the object itself. For openclaw and
// clawdbot a namespace-level `os` is folded into requires.os when that is
// absent or null, because that is where OpenClaw skill files put it; md is
// not modified.
func (p *parser) namespace(md map[string]any) (ns, emoji string, requires any, obj map[string]any) {
	for _, name := range namespaceOrder {
		v, present := md[name]
		if !present {
			continue
		}
		o, ok := v.(map[string]any)
		if !ok {
			p.warn("metadata.%s is %s, not an object; it is ignored — write it as an object", name, aKind(v))
			continue
		}
		ns, obj = name, o
		break
	}

	if obj != nil {
		switch e := obj["emoji"].(type) {
		case string:
			emoji = e
		case nil:
		default:
			p.warn("metadata.%s.emoji is %s, not a string; it is ignored — write the emoji as text", ns, aKind(e))
		}

		requires = obj["requires"]
		if osVal := obj["os"]; osVal != nil {
			if ns == NamespaceGSV {
				p.warn("os at the namespace level (metadata.gsv.os) is not evaluated in the gsv namespace; move it into metadata.gsv.requires.os")
			} else {
				switch r := requires.(type) {
				case nil:
					requires = map[string]any{"os": osVal}
				case map[string]any:
					if r["os"] == nil {
						folded := maps.Clone(r)
						folded["os"] = osVal
						requires = folded
					}
				}
			}
		}
	}

	for _, k := range slices.Sorted(maps.Keys(md)) {
		if !slices.Contains(namespaceOrder[:], k) {
			p.info("unknown metadata namespace %q is ignored; skillgate reads gsv, openclaw and clawdbot", k)
		}
	}
	return ns, emoji, requires, obj
}

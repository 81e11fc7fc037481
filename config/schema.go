package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// SchemaID is the $id of the JSON Schema.
const SchemaID = "https://skillgate.dev/schema/gateway-config.json"

// Schema returns the JSON Schema (draft 2020-12) of everything skillgate
// owns in the config file, for editors: skillgate's objects allow only
// their keys; the objects it shares with OpenClaw allow any other key, as
// the gateway does (its check of near-miss typos is not expressible in a
// schema).
func Schema() []byte {
	root := schemaOf("")
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = SchemaID
	root["title"] = "skillgate gateway config"
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(root) // maps of JSON values: cannot fail
	return b.Bytes()
}

// schemaOf is the schema of the object at pattern.
func schemaOf(pattern string) map[string]any {
	o := objectAt(pattern)
	props := map[string]any{}
	for _, k := range children[pattern] {
		child := join(pattern, k)
		switch s, o := settingAt(child), objectAt(child); {
		case s != nil && o != nil:
			props[k] = map[string]any{"oneOf": []any{schemaOf(child), settingSchema(s)}}
		case s != nil:
			props[k] = settingSchema(s)
		default:
			props[k] = schemaOf(child)
		}
	}
	out := map[string]any{"type": "object", "description": o.Doc}
	if len(props) > 0 {
		out["properties"] = props
	}
	switch {
	case o.wild != "":
		// Every other key is an id; OpenClaw's own keys here are not.
		for _, k := range openClawKeys[pattern] {
			props[k] = map[string]any{"description": "OpenClaw's; kept for requires.config"}
		}
		out["properties"] = props
		out["additionalProperties"] = schemaOf(join(pattern, o.wild))
	case o.Owned:
		out["additionalProperties"] = false
	}
	return out
}

// settingSchema is the schema of one setting's value.
func settingSchema(s *Setting) map[string]any {
	out := map[string]any{"description": s.Doc}
	switch s.Type {
	case String:
		out["type"] = "string"
		if len(s.Enum) > 0 {
			out["enum"] = s.Enum
		}
	case Bool:
		out["type"] = "boolean"
	case Int:
		out["type"] = "integer"
		out["minimum"] = s.Min
		if s.Max != 0 {
			out["maximum"] = s.Max
		}
	case Duration:
		out["type"] = "string"
		out["pattern"] = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	case Strings:
		out["type"] = "array"
		out["items"] = map[string]any{"type": "string", "minLength": 1}
	case StringOrList:
		// minLength applies to the string, items to the array.
		out["type"] = []string{"string", "array"}
		out["minLength"] = 1
		out["items"] = map[string]any{"type": "string", "minLength": 1}
	case TokenMap:
		out["type"] = "object"
		out["additionalProperties"] = map[string]any{"type": "string", "minLength": 1}
	case Object:
		out["type"] = "object"
	case Objects:
		out["type"] = "array"
		out["items"] = schemaOf(s.Path + "[]")
	}
	var def any
	if s.Default != "" && json.Unmarshal([]byte(s.Default), &def) == nil {
		out["default"] = def
	}
	return out
}

// Markdown returns DESIGN.md's settings table: one row per setting, in
// the table's order.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| key | type | default | a change applies | what it does |\n|---|---|---|---|---|\n")
	for i := range Settings {
		s := &Settings[i]
		def := "—"
		if s.Default != "" {
			def = s.Default
			if json.Valid([]byte(def)) {
				def = "`" + def + "`"
			}
		}
		apply := "at reload"
		if s.Apply == Restart {
			apply = "at restart"
		}
		if s.Flag != "" {
			apply += "; `--" + s.Flag + "` wins"
		}
		doc := s.Doc
		if s.OpenClaw {
			doc += " (OpenClaw's key)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", s.Path, shortType(s), def, apply, strings.ReplaceAll(doc, "|", "\\|"))
	}
	return b.String()
}

// shortType names a setting's type in the table.
func shortType(s *Setting) string {
	switch s.Type {
	case String:
		if len(s.Enum) > 0 {
			return strings.Join(quoted(s.Enum), " \\| ")
		}
		return "string"
	case Bool:
		return "boolean"
	case Int:
		if s.Max != 0 {
			return fmt.Sprintf("integer %d…%d", s.Min, s.Max)
		}
		return fmt.Sprintf("integer ≥ %d", s.Min)
	case Duration:
		return "duration string"
	case Strings:
		return "array of strings"
	case StringOrList:
		return "string or array of strings"
	case TokenMap:
		return "object of id → token"
	case Object:
		return "object"
	case Objects:
		return "array of objects"
	}
	return "any"
}

func quoted(vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "`\"" + v + "\"`"
	}
	return out
}

// Package ident owns the id rule of agents, nodes and skill directories:
// what a name must be before it becomes part of a storage key, a registry
// entry or a log line. It imports nothing of the project, so that skill
// (storage keys) and protocol (node ids) share the rule without importing
// each other; it must stay a leaf.
package ident

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest id accepted, in bytes.
const MaxLen = 128

// Validate checks an id (node id, agent id, skill directory name) before
// it is used in a key, a log line or a registry: non-empty, at most MaxLen
// bytes, valid UTF-8, no slash, backslash or "..", no control characters
// (C0, DEL and C1) and no invisible characters (see IsInvisible).
// Invisible characters are refused because they make two ids look alike,
// or reorder what a terminal shows (bidi overrides); ordinary non-ASCII
// letters and symbols are allowed.
func Validate(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("is empty")
	case len(id) > MaxLen:
		return fmt.Errorf("is %d bytes, more than %d", len(id), MaxLen)
	case !utf8.ValidString(id):
		return fmt.Errorf("%q is not valid UTF-8", id)
	case strings.ContainsAny(id, `/\`):
		return fmt.Errorf("%q contains a slash or backslash", id)
	case strings.Contains(id, ".."):
		return fmt.Errorf("%q contains \"..\"", id)
	}
	for _, r := range id {
		switch {
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return fmt.Errorf("%q contains a control character", id)
		case IsInvisible(r):
			return fmt.Errorf("%q contains the invisible character %U", id, r)
		}
	}
	return nil
}

// IsInvisible reports whether r is a Unicode format character (category
// Cf: zero-width spaces and joiners, bidi embeddings, overrides and
// isolates, U+FEFF, tag characters, the soft hyphen…) or the line or
// paragraph separator U+2028, U+2029: characters that show nothing, or
// change how the text around them is shown.
func IsInvisible(r rune) bool {
	return r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r)
}

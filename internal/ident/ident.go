// Package ident owns the id rule of agents, nodes and skill directories:
// what a name must be before it becomes part of a storage key, a registry
// entry or a log line. Of the project it imports only internal/textsafe
// (whose rule of invisible characters it applies), so that skill (storage
// keys) and protocol (node ids) share the rule without importing each
// other; it must stay a leaf.
package ident

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/textsafe"
)

// MaxLen is the longest id accepted, in bytes.
const MaxLen = 128

// Validate checks an id (node id, agent id, skill directory name) before
// it is used in a key, a log line or a registry: non-empty, at most MaxLen
// bytes, valid UTF-8, no slash, backslash or "..", no control characters
// (C0, DEL and C1) and no invisible characters (textsafe.IsInvisible).
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
		case textsafe.IsInvisible(r):
			return fmt.Errorf("%q contains the invisible character %U", id, r)
		}
	}
	return nil
}

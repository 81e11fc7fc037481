// Package protocol owns the wire of the node↔gateway WebSocket protocol:
// its frames, the host-facts model and validation, and the names and codes
// the wire carries (methods, events, error codes, close reasons). Frames
// are decoded once, here. It does no I/O, and it never imports skill,
// eligibility, promptbuild, store, catalog, gateway or node: everything else
// reads the wire through it, not the other way round. The id rule it
// applies to node ids lives in internal/ident.
package protocol

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/ident"
)

// Host roles a node may report.
const (
	RoleExecution   = "execution"
	RoleSpecialized = "specialized"
)

// Roles lists the valid host roles.
var Roles = []string{RoleExecution, RoleSpecialized}

// Capabilities lists the valid capability ids.
var Capabilities = []string{
	"filesystem.list",
	"filesystem.read",
	"filesystem.write",
	"filesystem.edit",
	"text.search",
	"shell.exec",
}

// BaselineCapabilities are the capabilities every execution host must have.
var BaselineCapabilities = []string{"filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"}

// Limits on host facts, so that one node cannot make the gateway hold
// unbounded state.
const (
	MaxIDLen   = ident.MaxLen
	MaxNames   = 4096 // env names or bin names in one report
	MaxNameLen = 256
	MaxOSLen   = 32 // runtime.GOOS values are at most 9 bytes
)

// IsRole reports whether s is a valid host role.
func IsRole(s string) bool { return slices.Contains(Roles, s) }

// IsCapability reports whether s is a valid capability id.
func IsCapability(s string) bool { return slices.Contains(Capabilities, s) }

// HostFacts is what a node reports about its host. It is also the element
// type of the `skillgate eval --hosts` file.
type HostFacts struct {
	ID            string          `json:"id"`
	OS            string          `json:"os"`
	Roles         []string        `json:"roles"`
	Capabilities  []string        `json:"capabilities"`
	Env           []string        `json:"env"`
	HostBinStatus map[string]bool `json:"hostBinStatus"`
}

// NormalizeOS lowercases an OS name and maps the aliases macos/osx to darwin
// and win32 to windows.
func NormalizeOS(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "macos", "osx":
		return "darwin"
	case "win32":
		return "windows"
	}
	return s
}

// ValidateID checks an id (node id, agent id, skill directory name)
// before it is used in a key, a log line or a registry: the rule of
// ident.Validate.
func ValidateID(id string) error { return ident.Validate(id) }

// ValidOS reports whether s, an OS name after NormalizeOS, is a short
// lowercase token: 1 to MaxOSLen bytes of [a-z0-9._-], the first one a
// letter or digit. Every runtime.GOOS value is one; the rule keeps what a
// node reports printable and usable as an index key.
func ValidOS(s string) bool {
	if s == "" || len(s) > MaxOSLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Validate checks the identity part of the facts (id, os, roles,
// capabilities) and the size of the reported names. Errors name the field.
func (h *HostFacts) Validate() error {
	if err := ValidateID(h.ID); err != nil {
		return fmt.Errorf("id: %w", err)
	}
	if err := validateOS(h.OS); err != nil {
		return err
	}
	if len(h.Roles) == 0 {
		return fmt.Errorf("roles: is empty (expected one or more of %s)", strings.Join(Roles, ", "))
	}
	for i, r := range h.Roles {
		if !IsRole(r) {
			return fmt.Errorf("roles[%d]: unknown role %q (expected one of %s)", i, r, strings.Join(Roles, ", "))
		}
	}
	if len(h.Capabilities) > len(Capabilities)*4 {
		return fmt.Errorf("capabilities: %d entries, more than %d", len(h.Capabilities), len(Capabilities)*4)
	}
	for i, c := range h.Capabilities {
		if !IsCapability(c) {
			return fmt.Errorf("capabilities[%d]: unknown capability %q (expected one of %s)", i, c, strings.Join(Capabilities, ", "))
		}
	}
	if slices.Contains(h.Roles, RoleExecution) {
		var missing []string
		for _, c := range BaselineCapabilities {
			if !slices.Contains(h.Capabilities, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("capabilities: an execution host must have %s; missing %s",
				strings.Join(BaselineCapabilities, ", "), strings.Join(missing, ", "))
		}
	}
	if err := validateNames("env", h.Env); err != nil {
		return err
	}
	if len(h.HostBinStatus) > MaxNames {
		return fmt.Errorf("hostBinStatus: %d entries, more than %d", len(h.HostBinStatus), MaxNames)
	}
	for name := range h.HostBinStatus {
		if name == "" || len(name) > MaxNameLen {
			return fmt.Errorf("hostBinStatus: invalid binary name %q", name)
		}
	}
	return nil
}

// validateOS applies ValidOS to the normalized os, so that "macOS" or
// "Win32" are accepted as darwin and windows.
func validateOS(os string) error {
	const expected = "(expected runtime.GOOS, e.g. linux or darwin)"
	switch n := NormalizeOS(os); {
	case n == "":
		return fmt.Errorf("os: is empty %s", expected)
	case len(n) > MaxOSLen:
		return fmt.Errorf("os: is %d bytes, more than %d %s", len(n), MaxOSLen, expected)
	case !ValidOS(n):
		return fmt.Errorf("os: %q is not a lowercase name of letters, digits, '.', '_' or '-' %s", os, expected)
	}
	return nil
}

func validateNames(field string, names []string) error {
	if len(names) > MaxNames {
		return fmt.Errorf("%s: %d entries, more than %d", field, len(names), MaxNames)
	}
	for i, n := range names {
		if n == "" || len(n) > MaxNameLen {
			return fmt.Errorf("%s[%d]: invalid name %q", field, i, n)
		}
	}
	return nil
}

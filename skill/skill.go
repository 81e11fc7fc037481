// Package skill owns the SKILL.md model and parser (frontmatter, metadata
// namespaces and requirements, diagnostics) and the storage key layout
// skills live at: a SKILL.md's bytes become a Skill. It knows nothing of
// hosts, stores or the wire: it never imports protocol, eligibility,
// promptbuild, store, catalog or gateway (the id rule it shares with node ids is
// in internal/ident).
package skill

// Level is the severity of a Diagnostic.
type Level string

// Diagnostic levels. An error-level finding makes `skillgate validate` exit 1.
const (
	LevelError Level = "error"
	LevelWarn  Level = "warn"
	LevelInfo  Level = "info"
)

// Diagnostic is one finding about a stored file or a configuration value,
// with where it is and what a person can do about it.
type Diagnostic struct {
	Location string `json:"location"`
	Level    Level  `json:"level"`
	Message  string `json:"message"`
}

// Skill is one parsed SKILL.md.
type Skill struct {
	Ref // where it was stored

	Name        string // frontmatter name, else Dir
	Description string // frontmatter description, else the first body paragraph (≤200 code points)
	Homepage    string
	Always      bool   // frontmatter `always`
	Emoji       string // from the metadata namespace, if any
	// Version is the frontmatter's top-level version, else the metadata
	// namespace's (metadata.<ns>.version), as the scalar's text was
	// written ("1.10", "v2"); "" when there is none. It is not checked
	// here: a skills.entries version constraint reads it (eligibility).
	Version string

	// Metadata is the parsed metadata object (JSON-compatible values:
	// map[string]any, []any, string, float64, bool, nil), or nil.
	Metadata map[string]any
	// Namespace is the metadata namespace used for requirements: "gsv",
	// "openclaw", "clawdbot", or "" when none is an object.
	Namespace string
	// Requires is the namespace's raw `requires` value (JSON-compatible),
	// nil when absent. For the openclaw and clawdbot namespaces a
	// namespace-level `os` is folded in as requires.os when requires has
	// none. It is validated by the eligibility package, not here, because
	// the gateway config may override it field by field.
	Requires any

	Body        string       // the markdown after the frontmatter (LF line ends)
	Diagnostics []Diagnostic // parse findings, each with Location == Key
}

// Package promptbuild renders the <available_skills> block an agent pastes
// into its system prompt.
package promptbuild

import (
	"strings"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/skill"
)

// Entry is one skill in the block.
type Entry struct {
	Name        string
	Description string
	Location    string // the storage key
	ReadPath    string // the virtual path for the agent's read tool
	Always      bool
}

// Render returns the block for entries, in the order given. It returns ""
// when entries is empty, so that an agent can paste the answer
// unconditionally. Every text and attribute value is XML-escaped and
// stripped of control characters, so no description can close the block.
func Render(entries []Entry) string {
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(64 + len(entries)*256)
	b.WriteString("<available_skills>")
	for _, e := range entries {
		b.WriteString("\n  <skill name=\"")
		escape(&b, e.Name)
		b.WriteString("\"")
		if e.Always {
			b.WriteString(` always="true"`)
		}
		b.WriteString(">\n    <description>")
		escape(&b, e.Description)
		b.WriteString("</description>\n    <location>")
		escape(&b, e.Location)
		b.WriteString("</location>\n    <read_path>")
		escape(&b, e.ReadPath)
		b.WriteString("</read_path>\n  </skill>")
	}
	b.WriteString("\n</available_skills>")
	return b.String()
}

// FromResults renders the eligible results, in order.
func FromResults(results []eligibility.Result) string {
	var entries []Entry
	for i := range results {
		r := &results[i]
		if !r.Eligible {
			continue
		}
		entries = append(entries, Entry{
			Name:        r.Skill.Name,
			Description: r.Skill.Description,
			Location:    r.Skill.Key,
			ReadPath:    skill.ReadPath(r.Skill.Key),
			Always:      r.Always,
		})
	}
	return Render(entries)
}

// escape writes s with the five named XML entities and without control
// characters (C0 other than \n and \t, and DEL).
func escape(b *strings.Builder, s string) {
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r == '\n', r == '\t':
			b.WriteRune(r)
		case r < 0x20, r == 0x7f:
			// dropped: not allowed in XML 1.0 and a prompt-injection aid
		default:
			b.WriteRune(r)
		}
	}
}

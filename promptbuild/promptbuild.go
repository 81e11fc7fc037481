// Package promptbuild owns the <available_skills> block an agent pastes
// into its system prompt: what a skill's <skill> entry holds (SkillEntry)
// and how entries become bytes (Render, Fragment, Join), escaping
// included. It takes plain entries, already chosen: it knows no verdicts,
// so it never imports eligibility (nor internal/report, r2store or
// gateway, which call it).
package promptbuild

import (
	"strings"
	"unicode/utf8"

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

// SkillEntry is the one definition of a skill's entry in the block: its
// name, description, storage key and the read path derived from it.
// always is the effective value (a config override applied), which only
// the caller knows.
func SkillEntry(s *skill.Skill, always bool) Entry {
	return Entry{
		Name:        s.Name,
		Description: s.Description,
		Location:    s.Key,
		ReadPath:    skill.ReadPath(s.Key),
		Always:      always,
	}
}

// Render returns the block for entries, in the order given. It returns ""
// when entries is empty, so that an agent can paste the answer
// unconditionally. Every text and attribute value is XML-escaped and
// stripped of control characters, so no description can close the block.
func Render(entries []Entry) string {
	frags := make([]string, len(entries))
	for i := range entries {
		frags[i] = Fragment(&entries[i])
	}
	return Join(frags)
}

// Fragment renders one entry's <skill> element, with the line break and
// indentation that precede it in the block. A caller that renders the same
// skills often (the gateway) keeps fragments and joins them.
func Fragment(e *Entry) string {
	var b strings.Builder
	b.Grow(128 + len(e.Name) + len(e.Description) + len(e.Location) + len(e.ReadPath))
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
	return b.String()
}

const (
	blockOpen  = "<available_skills>"
	blockClose = "\n</available_skills>"
)

// Join assembles a block from fragments made by Fragment; "" for none.
func Join(fragments []string) string {
	if len(fragments) == 0 {
		return ""
	}
	n := len(blockOpen) + len(blockClose)
	for _, f := range fragments {
		n += len(f)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(blockOpen)
	for _, f := range fragments {
		b.WriteString(f)
	}
	b.WriteString(blockClose)
	return b.String()
}

// escape writes s with the five named XML entities and without control
// characters (C0 other than \n and \t, and DEL). Invalid UTF-8 becomes
// U+FFFD. Runs of plain text are copied at once: this is the hot part of
// rendering.
func escape(b *strings.Builder, s string) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var rep string
		switch {
		case c == '&':
			rep = "&amp;"
		case c == '<':
			rep = "&lt;"
		case c == '>':
			rep = "&gt;"
		case c == '"':
			rep = "&quot;"
		case c == '\'':
			rep = "&apos;"
		case c == '\n', c == '\t':
			continue
		case c < 0x20, c == 0x7f:
			// dropped: not allowed in XML 1.0 and a prompt-injection aid
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(rep)
		start = i + 1
	}
	b.WriteString(s[start:])
}

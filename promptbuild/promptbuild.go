// Package promptbuild owns the <available_skills> block an agent pastes
// into its system prompt: what a skill's <skill> entry holds (SkillEntry)
// and how entries become bytes (Render, Fragment, Join), escaping
// included. It takes plain entries, already chosen: it knows no verdicts,
// so it never imports eligibility (nor report, store, catalog or
// gateway, which call it).
//
// A block can be held to a size budget (Budgeted): entries are ordered by
// Compare, each is rendered once in its three variants (NewVariants: full,
// description cut to 160 characters, no description), and the budget is
// decided by arithmetic on the variants' byte lengths before the chosen
// strings are joined once. Descriptions go first, then entries from the end
// of the order; entries marked always are never left out. A <note> at the
// end of the block says how many entries were left out or shortened.
//
// The package is pure: no I/O, no configuration, no clock.
package promptbuild

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/textsafe"
	"github.com/skillgate/skillgate/skill"
)

// Entry is one skill in the block.
type Entry struct {
	Name        string
	Description string
	Location    string // the storage key
	ReadPath    string // the virtual path for the agent's read tool
	Always      bool
	Priority    int    // skills.entries.<key>.priority: higher first; default 0
	Local       bool   // agent-local skill (before global ones of the same priority)
	Hosts       *Hosts // optional host hint; nil: none
}

// Hosts is the optional host hint of an entry: <hosts count="N">a, b, c</hosts>.
type Hosts struct {
	Count int      // hosts the skill can run on
	Names []string // at most 5 are written, then "…"; nil (or empty): count only, written <hosts count="N"/>
}

// maxHostNames is how many host names a <hosts> hint writes before "…".
const maxHostNames = 5

// SkillEntry is the one definition of a skill's entry in the block: its
// name, description, storage key, the read path derived from it and
// whether it is agent-local. always is the effective value (a config
// override applied), which only the caller knows, as are Priority and
// Hosts, which the caller sets.
func SkillEntry(s *skill.Skill, always bool) Entry {
	return Entry{
		Name:        s.Name,
		Description: s.Description,
		Location:    s.Key,
		ReadPath:    skill.ReadPath(s.Key),
		Always:      always,
		Local:       s.Scope == skill.ScopeAgent,
	}
}

// Render returns the block for entries, in the order given. It returns ""
// when entries is empty, so that an agent can paste the answer
// unconditionally. Every text and attribute value is XML-escaped and
// stripped of control and invisible characters (textsafe.ForPrompt), so
// no description can close the block or say what a reader cannot see.
func Render(entries []Entry) string {
	frags := make([]string, len(entries))
	for i := range entries {
		frags[i] = Fragment(&entries[i])
	}
	return Join(frags)
}

// Fragment renders one entry's <skill> element, with the line break and
// indentation that precede it in the block. A caller that renders the same
// skills often (the gateway) keeps fragments and joins them. An entry with
// Hosts gets a <hosts> child after <read_path>.
func Fragment(e *Entry) string {
	return fragment(e, e.Description, true)
}

// fragment renders e with desc as its description (escaped here), or
// without a <description> element when withDesc is false.
func fragment(e *Entry, desc string, withDesc bool) string {
	var b strings.Builder
	n := 128 + len(e.Name) + len(desc) + len(e.Location) + len(e.ReadPath)
	if e.Hosts != nil {
		n += 32
		for i, h := range e.Hosts.Names {
			if i == maxHostNames {
				break
			}
			n += len(h) + 2
		}
	}
	b.Grow(n)
	b.WriteString("\n  <skill name=\"")
	escape(&b, e.Name)
	b.WriteString("\"")
	if e.Always {
		b.WriteString(` always="true"`)
	}
	b.WriteString(">")
	if withDesc {
		b.WriteString("\n    <description>")
		escape(&b, desc)
		b.WriteString("</description>")
	}
	b.WriteString("\n    <location>")
	escape(&b, e.Location)
	b.WriteString("</location>\n    <read_path>")
	escape(&b, e.ReadPath)
	b.WriteString("</read_path>")
	if h := e.Hosts; h != nil {
		b.WriteString("\n    <hosts count=\"")
		b.WriteString(strconv.Itoa(h.Count))
		if len(h.Names) == 0 {
			b.WriteString("\"/>")
		} else {
			b.WriteString("\">")
			for i, name := range h.Names {
				if i > 0 {
					b.WriteString(", ")
				}
				if i == maxHostNames {
					b.WriteString("…")
					break
				}
				escape(&b, name)
			}
			b.WriteString("</hosts>")
		}
	}
	b.WriteString("\n  </skill>")
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

// escape writes s with the five named XML entities, without the
// characters textsafe.DroppedFromPrompt names (control characters but \n
// and \t, and invisible ones: format, bidi, tag characters…), whatever
// governance's mode. Invalid UTF-8 becomes U+FFFD. Runs of plain text are
// copied at once: this is the hot part of rendering.
func escape(b *strings.Builder, s string) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var rep string
		size := 1
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
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			if !textsafe.DroppedFromPrompt(r) {
				i += n - 1
				continue
			}
			size = n // dropped: a model would read what a person cannot see
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(rep)
		i += size - 1
		start = i + 1
	}
	b.WriteString(s[start:])
}

package testkit

import "strings"

// SkillMD returns a SKILL.md with a name, a description and, when
// requires is not empty, metadata {"gsv": {"requires": requires}}
// (requires is a JSON object), then body under a heading of the name.
func SkillMD(name, description, requires, body string) string {
	var b strings.Builder
	b.WriteString("---\nname: " + name + "\ndescription: " + description + "\n")
	if requires != "" {
		b.WriteString(`metadata: '{"gsv": {"requires": ` + requires + `}}'` + "\n")
	}
	b.WriteString("---\n\n# " + name + "\n\n" + body + "\n")
	return b.String()
}

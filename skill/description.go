package skill

import "strings"

// bodyDescription returns the first paragraph of body that is not a
// heading: paragraphs are separated by lines that are blank after trimming,
// and a paragraph whose trimmed text starts with "#" is a heading. The
// paragraph's lines are trimmed and joined with one space, cut to
// maxBodyDescription code points and trimmed again. It returns "" when the
// body has no such paragraph.
func bodyDescription(body string) string {
	var para []string
	flush := func() string {
		if len(para) == 0 {
			return ""
		}
		text := strings.Join(para, " ")
		para = para[:0]
		if strings.HasPrefix(text, "#") {
			return ""
		}
		return strings.TrimSpace(cutRunes(text, maxBodyDescription))
	}
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimSpace(line)
		if line != "" {
			para = append(para, line)
			continue
		}
		if d := flush(); d != "" {
			return d
		}
	}
	return flush()
}

package skill

import "strings"

// bodyDescription returns the first paragraph of body that is not a
// heading: paragraphs are separated by lines that are blank after trimming,
// and a paragraph whose trimmed text starts with "#" is a heading. The
// paragraph's lines are trimmed and joined with one space, cut to
// maxBodyDescription code points and trimmed again. It returns "" when the
// body has no such paragraph.
func bodyDescription(body string) string {
	d, _ := bodyParagraph(body)
	return d
}

// bodyParagraph is bodyDescription, also returning the 0-based line of body
// the paragraph starts on.
func bodyParagraph(body string) (desc string, line int) {
	var para []string
	start := 0
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
	i := 0
	for l := range strings.SplitSeq(body, "\n") {
		i++
		l = strings.TrimSpace(l)
		if l != "" {
			if len(para) == 0 {
				start = i - 1
			}
			para = append(para, l)
			continue
		}
		if d := flush(); d != "" {
			return d, start
		}
	}
	return flush(), start
}

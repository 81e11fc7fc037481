package cli

import "github.com/skillgate/skillgate/internal/textsafe"

// Printable returns s with every character a terminal would act on or not
// show replaced by a visible escape, by the one rule of internal/textsafe:
// C0 controls and DEL as \xHH (\t, \n and \r as such), C1 controls and
// invisible characters (textsafe.IsInvisible) as \uHHHH or \UHHHHHHHH, and
// bytes that are not UTF-8 as \xHH. Other text, backslashes included, is
// left as is. Human-readable output passes every value that comes from a
// node, a SKILL.md, a config file or the gateway through it, so that such
// a value cannot clear the screen, fake a line or reorder what is shown.
func Printable(s string) string { return textsafe.Printable(s) }

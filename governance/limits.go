package governance

import "fmt"

// Caps on what is read of one skill directory besides its SKILL.md. The
// gateway's loader and skillgate validate both apply them through Budget,
// so a skill is scanned the same way wherever it is.
const (
	MaxFileBytes  = 256 << 10 // one file
	MaxFiles      = 64        // files read
	MaxSkillBytes = 1 << 20   // all files read, together
)

// Budget admits the files of one skill directory within the caps. Offer
// the files in path order, so that which files are read does not depend
// on the store.
type Budget struct {
	files, bytes int
	over         int    // files refused for the count cap
	firstOver    string // the first of them
}

// Admit reports whether a file of this size may be read; an admitted file
// counts against the caps. A refused file comes back as the File to pass
// to Scan in its place, except one refused for the count cap (nil): Unread
// sums those up in one.
func (b *Budget) Admit(path string, size int64) (ok bool, refused *File) {
	switch {
	case b.files >= MaxFiles:
		if b.over == 0 {
			b.firstOver = path
		}
		b.over++
		return false, nil
	case size > MaxFileBytes:
		return false, &File{Path: path, Err: fmt.Sprintf("%d bytes, over the 256 KiB file limit", size)}
	case b.bytes+int(size) > MaxSkillBytes:
		return false, &File{Path: path, Err: "over the 1 MiB limit of a skill directory"}
	}
	b.files++
	b.bytes += int(size)
	return true, nil
}

// Unread returns the one File that stands for the files refused for the
// count cap, or nil when there were none.
func (b *Budget) Unread() []File {
	if b.over == 0 {
		return nil
	}
	return []File{{Path: b.firstOver,
		Err: fmt.Sprintf("over the %d-file limit of a skill directory: this and %d more files are not read", MaxFiles, b.over-1)}}
}

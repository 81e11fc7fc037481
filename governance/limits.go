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
	firstOver    File   // the first of them
	skipped      []File // the others
}

// Admit reports whether a file of this size may be read; an admitted file
// counts against the caps. A refused file comes back as the File to pass
// to Scan in its place, except one refused for the count cap (nil): Unread
// sums those up in one.
func (b *Budget) Admit(path string, size int64) (ok bool, refused *File) {
	return b.AdmitFile(File{Path: path, Size: size})
}

// AdmitFile is Admit for a file listed with its Size and ETag, which a
// refused file keeps (the digest covers them): the one Unread returns
// too, and the other files refused for the count cap, which Skipped
// returns.
func (b *Budget) AdmitFile(f File) (ok bool, refused *File) {
	switch {
	case b.files >= MaxFiles:
		if b.over == 0 {
			b.firstOver = f
		} else {
			b.skipped = append(b.skipped, File{Path: f.Path, Size: f.Size, ETag: f.ETag})
		}
		b.over++
		return false, nil
	case f.Size > MaxFileBytes:
		return false, &File{Path: f.Path, Err: fmt.Sprintf("%d bytes, over the 256 KiB file limit", f.Size), Size: f.Size, ETag: f.ETag}
	case b.bytes+int(f.Size) > MaxSkillBytes:
		return false, &File{Path: f.Path, Err: "over the 1 MiB limit of a skill directory", Size: f.Size, ETag: f.ETag}
	}
	b.files++
	b.bytes += int(f.Size)
	return true, nil
}

// Unread returns the one File that stands for the files refused for the
// count cap, or nil when there were none.
func (b *Budget) Unread() []File {
	if b.over == 0 {
		return nil
	}
	return []File{{Path: b.firstOver.Path, Size: b.firstOver.Size, ETag: b.firstOver.ETag,
		Err: fmt.Sprintf("over the %d-file limit of a skill directory: this and %d more files are not read", MaxFiles, b.over-1)}}
}

// Skipped returns the files refused for the count cap other than the one
// Unread stands them for, in the order offered, for Input.Skipped.
func (b *Budget) Skipped() []File { return b.skipped }

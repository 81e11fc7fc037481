package governance

import "fmt"

// Caps on what is read of one skill directory besides its SKILL.md. The
// gateway's loader and skillgate validate both apply them through Budget,
// so a skill is scanned the same way wherever it is.
//
// Since issue 19 a file past them holds its skill (unscanned), so they are
// set for real skills: of the 227 in the public benign sets, 7 passed 64
// files or 1 MiB (document and API skills with many references, office
// templates); at 256 files and 2 MiB one does (a font collection of
// 5.4 MB). What the loader holds for a skill at the caps doubles: 2 MiB.
const (
	MaxFileBytes  = 256 << 10 // one file
	MaxFiles      = 256       // files read
	MaxSkillBytes = 2 << 20   // all files read, together
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
		return false, &File{Path: f.Path, Err: fmt.Sprintf("over the %d MiB limit of a skill directory", MaxSkillBytes>>20), Size: f.Size, ETag: f.ETag}
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

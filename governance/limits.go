package governance

import (
	"bytes"
	"fmt"

	"github.com/skillgate/skillgate/publisher"
)

// Caps on what is read of one skill directory besides its SKILL.md. The
// gateway's loader and skillgate validate both apply them through Budget,
// so a skill is scanned the same way wherever it is.
//
// Since issue 19 a file past them holds its skill (unscanned), so they are
// set for real skills: of the 227 in the public benign sets, 7 passed 64
// files or 1 MiB (document and API skills with many references, office
// templates); at 256 files and 2 MiB one does (canvas-design, 5.4 MB of
// fonts), which MaxMediaBytes lets through.
//
// The cap of one file is not among them: it is the store's read bound
// (store.MaxFileSize), the one declaration of it, which governance may
// not import. The caller passes it as Budget.MaxFileBytes and
// Input.MaxFileBytes, as catalog's loader and skillgate validate do.
const (
	MaxFiles      = 256     // files read
	MaxSkillBytes = 2 << 20 // all files read, together (an inert media file counts its header only)
	// MaxMediaBytes bounds inert media beyond their headers: a font,
	// image, PDF, audio or video file (by its magic bytes, nothing
	// appended to it) is not read past its first 8 KiB by the scanner, so
	// only that much counts against MaxSkillBytes and the rest counts
	// here: a bound on what the loader holds, and serves, for a skill.
	MaxMediaBytes = 8 << 20
)

// TooLargeText ends the Err of a file over maxFileBytes, the cap of one
// file (Budget.MaxFileBytes), and words every message about one: "over
// the 256 KiB file limit".
func TooLargeText(maxFileBytes int) string {
	return fmt.Sprintf("over the %d KiB file limit", maxFileBytes>>10)
}

// Budget admits the files of one skill directory within the caps, in two
// steps: AdmitFile, by a file's listed size, says whether to read it;
// Keep, once its bytes are known, whether it stays. Offer the files in
// path order to each, so that which files are read does not depend on the
// store.
type Budget struct {
	// MaxFileBytes is the cap of one file: a file listed over it is
	// refused (TooLargeText). The caller sets it to the store's read
	// bound, store.MaxFileSize, so that a file the budget admits is one
	// the store returns. 0: no cap of its own (the directory's caps still
	// bound a file).
	MaxFileBytes int

	files, bytes int    // admitted for reading: files, listed bytes
	kept, media  int    // kept: bytes counted against MaxSkillBytes, media bytes beyond their headers
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
// returns. A file is read while the listed sizes fit what a skill may
// hold (MaxSkillBytes and MaxMediaBytes); Keep then counts it by what it
// is.
func (b *Budget) AdmitFile(f File) (ok bool, refused *File) {
	switch {
	case f.Path == publisher.FileName:
		// The signature is not scanned and is outside the digest: it has
		// its own cap, and does not take a file or bytes from the skill
		// (what governance sign signed fits what the gateway reads).
		if f.Size > publisher.MaxSignatureSize {
			return false, &File{Path: f.Path, Err: fmt.Sprintf("%d bytes, over the %d KiB limit of SKILL.sig", f.Size, publisher.MaxSignatureSize>>10), Size: f.Size, ETag: f.ETag}
		}
		return true, nil
	case b.files >= MaxFiles:
		if b.over == 0 {
			b.firstOver = f
		} else {
			b.skipped = append(b.skipped, File{Path: f.Path, Size: f.Size, ETag: f.ETag})
		}
		b.over++
		return false, nil
	case b.MaxFileBytes > 0 && f.Size > int64(b.MaxFileBytes):
		return false, &File{Path: f.Path, Err: fmt.Sprintf("%d bytes, %s", f.Size, TooLargeText(b.MaxFileBytes)), Size: f.Size, ETag: f.ETag}
	case b.bytes+int(f.Size) > MaxSkillBytes+MaxMediaBytes:
		return false, overSkill(f, f.Size)
	}
	b.files++
	b.bytes += int(f.Size)
	return true, nil
}

// Keep counts a file AdmitFile admitted, its Data read, against the caps,
// and reports it refused (nil: it stays): an inert media file counts its
// first 8 KiB against MaxSkillBytes and the rest against MaxMediaBytes,
// any other file (text, an executable, an archive, a media file with an
// archive appended) its size against MaxSkillBytes. A refused file is
// not scanned (it holds its skill) and is returned without its Data,
// with f's Size and ETag as listed (its length when Size is 0). Call it
// in path order, for every file read.
func (b *Budget) Keep(f File) (refused *File) {
	if f.Path == publisher.FileName {
		return nil // counted by AdmitFile alone
	}
	n := len(f.Data)
	head := n
	if inertMedia(f.Data) {
		head = min(n, sniffHead)
	}
	if b.kept+head > MaxSkillBytes || b.media+n-head > MaxMediaBytes {
		size := f.Size
		if size == 0 {
			size = int64(n)
		}
		return overSkill(f, size)
	}
	b.kept += head
	b.media += n - head
	return nil
}

// overSkill is f refused for the bytes of its skill.
func overSkill(f File, size int64) *File {
	return &File{Path: f.Path, Err: fmt.Sprintf("over the %d MiB limit of a skill directory", MaxSkillBytes>>20), Size: size, ETag: f.ETag}
}

// inertMedia reports a file whose bytes are a font, image, PDF, audio or
// video file (sniffFile's media) with no zip appended: the scanner reads
// nothing of it past its head.
func inertMedia(data []byte) bool {
	if sniffFile(data).class != classMedia {
		return false
	}
	tail := data[max(0, len(data)-(1<<16+22)):]
	return !bytes.Contains(tail, []byte("PK\x05\x06"))
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

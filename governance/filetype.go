package governance

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// fileClass is what a bundled file is, which decides what the scanner does
// with it.
type fileClass int

const (
	classText     fileClass = iota // scanned as text (markdown, script or data)
	classMedia                     // media-file info; not read as text
	classExec                      // executable-file error
	classArchive                   // opened: archive-file info, members scanned
	classUnopened                  // an archive format not read: archive-unscanned error
	classBinary                    // binary of no known kind: binary-file error
)

// Archive formats the scanner opens.
const (
	fmtZip = iota + 1
	fmtTar
	fmtGzip
	fmtBzip2
	fmtXz
)

// fileKind is the result of sniffFile: the class, a human name for the
// findings and, for archives, the format.
type fileKind struct {
	class fileClass
	name  string
	fmt   int
}

// sniffHead is how much of a file the text test reads (as binaryKind did).
const sniffHead = 8 << 10

// sniffFile says what data is by its content alone: a name is never
// consulted, so a ".png" that is an ELF is an executable and a ".txt" that
// is a zip is an archive. A document or media magic followed by text is
// text (scanned as such): the magic alone must not hide a script from the
// scanner. An executable magic needs no such test: calling text an
// executable only makes it an error.
func sniffFile(data []byte) fileKind {
	if k, ok := sniffExec(data); ok {
		return k
	}
	if k, ok := sniffArchive(data); ok {
		return k
	}
	if name, n := sniffMedia(data); name != "" {
		if rest := data[n:]; len(rest) == 0 || !textHead(rest) {
			return fileKind{class: classMedia, name: name}
		}
		return fileKind{class: classText}
	}
	if !textHead(data) {
		return fileKind{class: classBinary, name: "non-text file of no known kind"}
	}
	return fileKind{class: classText}
}

// textHead reports whether the first 8 KiB of b are text: no NUL, valid
// UTF-8 (a character cut at the end of the 8 KiB is allowed).
func textHead(b []byte) bool {
	head := b[:min(len(b), sniffHead)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	if utf8.Valid(head) {
		return true
	}
	// Valid but for a character the 8 KiB cut in two.
	if len(b) <= sniffHead {
		return false
	}
	i := len(head) - 1
	for i > len(head)-utf8.UTFMax && i > 0 && !utf8.RuneStart(head[i]) {
		i--
	}
	return !utf8.FullRune(head[i:]) && utf8.Valid(head[:i])
}

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

// sniffExec recognises executables and bytecode.
func sniffExec(b []byte) (fileKind, bool) {
	exec := func(name string) (fileKind, bool) { return fileKind{class: classExec, name: name}, true }
	switch {
	case hasPrefix(b, "\x7fELF"):
		return exec("ELF executable")
	case hasPrefix(b, "\xfe\xed\xfa\xce"), hasPrefix(b, "\xfe\xed\xfa\xcf"),
		hasPrefix(b, "\xce\xfa\xed\xfe"), hasPrefix(b, "\xcf\xfa\xed\xfe"):
		return exec("Mach-O executable")
	case hasPrefix(b, "\xca\xfe\xba\xbe"), hasPrefix(b, "\xca\xfe\xba\xbf"):
		// One magic for two formats: a fat Mach-O's architecture count is
		// small, a class file's minor<<16|major is at least 45 (JDK 1.1).
		if len(b) >= 8 && binary.BigEndian.Uint32(b[4:8]) >= 45 && b[3] == 0xbe {
			return exec("Java class file")
		}
		return exec("Mach-O universal binary")
	case hasPrefix(b, "MZ"):
		if off := peOffset(b); off > 0 {
			return exec("Windows PE executable")
		}
		// A bare "MZ" also starts ordinary words; only binary content
		// behind it is a DOS executable.
		if !textHead(b) {
			return exec("DOS/Windows executable (MZ)")
		}
	case hasPrefix(b, "\x00asm"):
		return exec("WebAssembly module")
	case len(b) >= 8 && hasPrefix(b, "dex\n") && b[7] == 0:
		return exec("Android DEX bytecode")
	case hasPrefix(b, "L\x00\x00\x00\x01\x14\x02\x00"):
		return exec("Windows shortcut (.lnk)")
	case isPyc(b):
		return exec("Python bytecode (.pyc)")
	case hasPrefix(b, "\x93NUMPY") && bytes.Contains(b[:min(len(b), 256)], []byte("'descr': '|O'")):
		return exec("NumPy array of Python objects (a pickle: runs code when loaded)")
	case isPickle(b):
		return exec("Python pickle (runs code when loaded)")
	case hasPrefix(b, cfbMagic):
		if name, isExec := cfbKind(b); isExec {
			return exec(name)
		}
	}
	return fileKind{}, false
}

// peOffset returns the offset of a PE header ("PE\0\0") an MZ header
// points to, or 0.
func peOffset(b []byte) int {
	if len(b) < 0x40 {
		return 0
	}
	off := int(binary.LittleEndian.Uint32(b[0x3c:0x40]))
	if off < 0x40 || off > len(b)-4 || string(b[off:off+4]) != "PE\x00\x00" {
		return 0
	}
	return off
}

// isPyc: a .pyc starts with a two-byte magic number and "\r\n". Python 3's
// magics are 3000–3999 (their second byte a control character); Python 2's
// are checked one by one (2.5, 2.6, 2.7), since their bytes could begin
// text. A header of text (no NUL in it) is not bytecode.
func isPyc(b []byte) bool {
	if len(b) < 16 || b[2] != '\r' || b[3] != '\n' || bytes.IndexByte(b[4:16], 0) < 0 {
		return false
	}
	m := binary.LittleEndian.Uint16(b)
	return m >= 3000 && m < 4000 || m == 62131 || m == 62161 || m == 62211
}

// isPickle: protocol 2–5 pickles start with PROTO (0x80) and the protocol
// and end with STOP ("."). Loading one runs what it names.
func isPickle(b []byte) bool {
	return len(b) >= 4 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5 && b[len(b)-1] == '.'
}

// cfbMagic starts an OLE compound file: legacy Office documents, Windows
// Installer packages, Outlook messages.
const cfbMagic = "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

// cfbKind names a compound file and says whether it runs code: a Windows
// Installer package (by its root storage's class id) or a document with a
// VBA project (its "_VBA_PROJECT" stream's UTF-16 name in a directory
// sector). Anything else is a legacy Office document.
func cfbKind(b []byte) (name string, isExec bool) {
	if len(b) >= 0x34 {
		shift := binary.LittleEndian.Uint16(b[0x1e:0x20])
		dir := int64(binary.LittleEndian.Uint32(b[0x30:0x34]))
		if shift == 9 || shift == 12 {
			root := (dir + 1) << shift
			if root >= 0 && root+0x60 <= int64(len(b)) {
				clsid := b[root+0x50 : root+0x60]
				// {000C1084-…} .msi, {000C1086-…} .msp, {000C1082-…} .mst,
				// stored little-endian.
				if clsid[0] == 0x82 || clsid[0] == 0x84 || clsid[0] == 0x86 {
					if string(clsid[1:]) == "\x10\x0c\x00\x00\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x46" {
						return "Windows Installer package", true
					}
				}
			}
		}
	}
	if bytes.Contains(b, []byte("_\x00V\x00B\x00A\x00_\x00P\x00R\x00O\x00J\x00E\x00C\x00T\x00")) {
		return "Office document with VBA macros", true
	}
	return "", false
}

// sniffArchive recognises archives: those the scanner opens and those it
// does not.
func sniffArchive(b []byte) (fileKind, bool) {
	open := func(name string, f int) (fileKind, bool) {
		return fileKind{class: classArchive, name: name, fmt: f}, true
	}
	unopened := func(name string) (fileKind, bool) { return fileKind{class: classUnopened, name: name}, true }
	switch {
	case hasPrefix(b, "PK\x03\x04"), hasPrefix(b, "PK\x05\x06"):
		return open("zip archive", fmtZip)
	case hasPrefix(b, "\x1f\x8b\x08"):
		return open("gzip stream", fmtGzip)
	case len(b) >= 10 && hasPrefix(b, "BZh") && b[3] >= '1' && b[3] <= '9' &&
		(string(b[4:10]) == "1AY&SY" || string(b[4:10]) == "\x17\x72\x45\x38\x50\x90"):
		return open("bzip2 stream", fmtBzip2)
	case hasPrefix(b, "\xfd7zXZ\x00"):
		return open("xz stream", fmtXz)
	case isTar(b):
		return open("tar archive", fmtTar)
	case hasPrefix(b, "7z\xbc\xaf\x27\x1c"):
		return unopened("7z archive")
	case hasPrefix(b, "Rar!\x1a\x07"):
		return unopened("RAR archive")
	case hasPrefix(b, "\x28\xb5\x2f\xfd"):
		return unopened("zstd stream")
	case hasPrefix(b, "\x04\x22\x4d\x18"):
		return unopened("lz4 stream")
	case hasPrefix(b, "MSCF\x00\x00\x00\x00"):
		return unopened("Windows cabinet")
	case hasPrefix(b, "!<arch>\n"):
		return unopened("ar archive (.a, .deb)")
	case hasPrefix(b, "\xed\xab\xee\xdb"):
		return unopened("RPM package")
	case hasPrefix(b, "LZIP"):
		return unopened("lzip stream")
	case hasPrefix(b, "\x1f\x9d"), hasPrefix(b, "\x1f\xa0"):
		return unopened("compress (.Z) stream")
	}
	return fileKind{}, false
}

// isTar: a POSIX or GNU header ("ustar" at 257), or an old-style header
// whose checksum adds up (its name and size fields in their place).
func isTar(b []byte) bool {
	if len(b) < 512 {
		return false
	}
	if string(b[257:262]) == "ustar" {
		return true
	}
	if b[0] == 0 {
		return false
	}
	var sum, stored int64
	field := bytes.Trim(b[148:156], " \x00")
	if len(field) == 0 {
		return false
	}
	for _, c := range field {
		if c < '0' || c > '7' {
			return false
		}
		stored = stored*8 + int64(c-'0')
	}
	for i, c := range b[:512] {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += int64(c)
	}
	return sum == stored
}

type mediaSig struct {
	at           int
	magic, name  string
	extra        func([]byte) bool // further check on the whole file
	magicLenMore int               // bytes of the magic beyond at+len(magic)
}

// mediaMagic are the documents and media sniffMedia knows, first match
// wins.
var mediaMagic = []mediaSig{
	// Fonts.
	{0, "\x00\x01\x00\x00", "TrueType font", sfntTables, 0},
	{0, "OTTO", "OpenType font", sfntTables, 0},
	{0, "true", "TrueType font", sfntTables, 0},
	{0, "ttcf", "TrueType font collection", nil, 0},
	{0, "wOFF", "WOFF font", nil, 0},
	{0, "wOF2", "WOFF2 font", nil, 0},
	// Images.
	{0, "\x89PNG\r\n\x1a\n", "PNG image", nil, 0},
	{0, "\xff\xd8\xff", "JPEG image", nil, 0},
	{0, "GIF87a", "GIF image", nil, 0},
	{0, "GIF89a", "GIF image", nil, 0},
	{0, "BM", "BMP image", func(b []byte) bool { return len(b) >= 14 && string(b[6:10]) == "\x00\x00\x00\x00" }, 8},
	{0, "\x00\x00\x01\x00", "ICO image", nil, 0},
	{0, "\x00\x00\x02\x00", "cursor image", nil, 0},
	{0, "II*\x00", "TIFF image", nil, 0},
	{0, "MM\x00*", "TIFF image", nil, 0},
	{0, "8BPS", "Photoshop image", nil, 0},
	{0, "\xff\x0a", "JPEG XL image", nil, 0},
	{0, "\x00\x00\x00\x0cJXL \r\n\x87\n", "JPEG XL image", nil, 0},
	{8, "WEBP", "WebP image", riff, 0},
	{0, "\x00\x00\x00\x0cjP  \r\n\x87\n", "JPEG 2000 image", nil, 0},
	{0, "icns", "Apple icon image", nil, 0},
	{0, "DDS ", "DirectDraw texture", nil, 0},
	{0, "v/1\x01", "OpenEXR image", nil, 0},
	{0, "qoif", "QOI image", nil, 0},
	// Documents.
	{0, "%PDF-", "PDF document", nil, 0},
	{0, cfbMagic, "OLE compound document (legacy Office)", nil, 0},
	// Data files: tables and arrays, read by code, not run. (A NumPy
	// array of Python objects is a pickle: sniffExec.)
	{0, "SQLite format 3\x00", "SQLite database", nil, 0},
	{0, "\x89HDF\r\n\x1a\n", "HDF5 data", nil, 0},
	{0, "PAR1", "Parquet data", nil, 0},
	{0, "ARROW1\x00\x00", "Arrow data", nil, 0},
	{0, "\x93NUMPY", "NumPy array", nil, 0},
	// Audio and video.
	{8, "WAVE", "WAV audio", riff, 0},
	{8, "AVI ", "AVI video", riff, 0},
	{0, "ID3", "MP3 audio", nil, 0},
	{0, "OggS", "Ogg audio/video", nil, 0},
	{0, "fLaC", "FLAC audio", nil, 0},
	{0, "MThd", "MIDI audio", nil, 0},
	{0, "\x1a\x45\xdf\xa3", "Matroska/WebM video", nil, 0},
	{8, "AIFF", "AIFF audio", func(b []byte) bool { return hasPrefix(b, "FORM") }, 0},
	{4, "ftyp", "", nil, 4},
	// Finder's files, in archives made on a Mac.
	{0, "\x00\x05\x16\x07", "AppleDouble metadata", nil, 0},
	{0, "\x00\x05\x16\x00", "AppleSingle metadata", nil, 0},
	{0, "\x00\x00\x00\x01Bud1", "Finder .DS_Store", nil, 0},
}

// sniffMedia names documents and media and says how long their magic is:
// the bytes after it must not be text (sniffFile).
func sniffMedia(b []byte) (name string, magic int) {
	for _, e := range mediaMagic {
		end := e.at + len(e.magic)
		if len(b) < end || string(b[e.at:end]) != e.magic || e.extra != nil && !e.extra(b) {
			continue
		}
		name = e.name
		if e.magic == "ftyp" {
			if len(b) < 12 {
				continue
			}
			name = ftypName(string(b[8:12]))
		}
		return name, end + e.magicLenMore
	}
	// MPEG layer III frames and AAC ADTS frames: a sync word and a valid
	// bitrate. Layer I and II are left out: "\xff\xfe" is UTF-16's byte
	// order mark, whose text must not pass for audio.
	if len(b) >= 4 && b[0] == 0xff && b[2]>>4 != 0xf {
		switch b[1] {
		case 0xfb, 0xfa, 0xf3, 0xf2, 0xe3, 0xe2, 0xf1, 0xf0, 0xf9, 0xf8:
			return "MPEG audio", 2
		}
	}
	return "", 0
}

func riff(b []byte) bool { return hasPrefix(b, "RIFF") }

// sfntTables: a TrueType/OpenType table directory with a plausible count,
// as four bytes of "\x00\x01\x00\x00" alone are not much of a magic.
func sfntTables(b []byte) bool {
	if len(b) < 12 {
		return false
	}
	n := binary.BigEndian.Uint16(b[4:6])
	return n >= 1 && n <= 128 && len(b) >= 12+16*int(n)
}

// ftypName names an ISO base media file (MP4, QuickTime, HEIF) by brand.
func ftypName(brand string) string {
	switch brand {
	case "avif", "avis":
		return "AVIF image"
	case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1":
		return "HEIF image"
	case "M4A ", "M4B ", "M4P ":
		return "MPEG-4 audio"
	case "qt  ":
		return "QuickTime video"
	case "crx ":
		return "Canon raw image"
	}
	return "MPEG-4 video"
}

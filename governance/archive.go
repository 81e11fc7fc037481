package governance

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// Bounds on what the archives of one skill may make the scanner read. A
// skill directory is at most 2 MiB (MaxSkillBytes), but 1 MiB of archives
// could expand a thousandfold and nest: these keep the work of one scan
// within a small multiple of an ordinary skill's, whatever the archives
// hold. Past any of them the scanner stops reading and reports an
// archive-unscanned error naming the bound: what was not read was not
// reviewed.
const (
	// maxArchiveEntries: entries (files, directories, links) read across
	// all the archives of a skill, nested ones included.
	maxArchiveEntries = 1000
	// maxArchiveBytes: uncompressed bytes read out of all the archives of
	// a skill, nested ones included.
	maxArchiveBytes = 1 << 20
	// maxArchiveDepth: archives inside archives: a zip in a .tar.gz is
	// opened, a third level is not. A tar inside gzip, bzip2 or xz is
	// one level (.tar.gz); a compressed single file is one.
	maxArchiveDepth = 2
	// maxArchiveRatio: uncompressed bytes per compressed byte of one zip
	// member or one gzip/bzip2/xz stream, judged once it has produced
	// minRatioBytes (a few small members compress better than this
	// without meaning harm; text rarely passes 20:1).
	maxArchiveRatio = 100
	minRatioBytes   = 64 << 10
	// maxArchiveFindings: findings of archive members in one skill; an
	// archive that produces more is not read further.
	maxArchiveFindings = 200
	// maxMemberName: a member's name as shown in findings, in bytes.
	maxMemberName = 256
	// partHead: how much of an office document's part is read to sniff
	// it (not counted in maxArchiveBytes: at most partHead per entry).
	partHead = 1 << 10
)

// arcState is what the archives of one skill have used of the bounds.
type arcState struct {
	// maxMember is the cap of one member, as of one file of a skill
	// directory (Input.MaxFileBytes); 0: none but the bounds above.
	maxMember int64

	depth    int   // archives open around the file being scanned
	bytes    int64 // uncompressed bytes read
	entries  int   // entries read
	findings int   // findings of members
	spent    string
}

// overMember reports whether a member of n bytes, as declared or read, is
// over the cap of one member.
func (st *arcState) overMember(n uint64) bool {
	return st.maxMember > 0 && n > uint64(st.maxMember)
}

// memberLimit words the cap of one member: "over the 256 KiB limit of a
// file".
func (st *arcState) memberLimit() string {
	return fmt.Sprintf("over the %d KiB limit of a file", st.maxMember>>10)
}

// errBound is a bound reached while reading: the message names it.
type errBound struct{ msg string }

func (e *errBound) Error() string { return e.msg }

// arcReader counts what a decompressor or archive gives out against the
// skill's byte budget and, for compressed input, the ratio bound. It
// never hands out more than one byte past the budget, so an archive that
// expands without end costs the scanner 1 MiB of decompression.
type arcReader struct {
	r   io.Reader
	st  *arcState
	in  int64 // compressed bytes behind r; 0 when r is not compressed
	out int64
	err error // the bound reached, once it is
}

func (a *arcReader) Read(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if left := maxArchiveBytes - a.st.bytes + 1; int64(len(p)) > left {
		p = p[:max(left, 1)]
	}
	n, err := a.r.Read(p)
	a.out += int64(n)
	a.st.bytes += int64(n)
	switch {
	case a.st.bytes > maxArchiveBytes:
		a.st.spent = fmt.Sprintf("the %d KiB of uncompressed archive content a skill may hold is spent", maxArchiveBytes>>10)
		a.err = &errBound{"uncompressed content over the skill's " + fmt.Sprint(maxArchiveBytes>>10) + " KiB for archives: the rest not read"}
	case a.in > 0 && a.out > minRatioBytes && a.out > maxArchiveRatio*a.in:
		a.err = &errBound{fmt.Sprintf("compression ratio over %d:1 (%d bytes from %d; a zip bomb?): not read further", maxArchiveRatio, a.out, a.in)}
	}
	if a.err != nil {
		return n, a.err
	}
	return n, err
}

// note records a whole-file finding about path, which need not be the
// file being scanned (an archive and its members are reported by name).
func (s *scanner) note(file, rule, sev, msg string) {
	s.findings = append(s.findings, Finding{Rule: rule, Severity: sev, File: file, Excerpt: excerpt(msg, 0)})
}

// bundled handles a file of the skill directory, or a member of an
// archive, by what its bytes are (sniffFile). It reports false for text,
// which scanFile goes on to scan.
func (s *scanner) bundled(f File) bool {
	k := sniffFile(f.Data)
	switch k.class {
	case classText:
		return false
	case classMedia:
		s.note(f.Path, RuleMediaFile, SeverityInfo, k.name+" (not read as text)")
		s.appendedZip(f)
	case classExec:
		s.note(f.Path, RuleExecutableFile, SeverityError, k.name)
	case classArchive:
		s.archive(f.Path, f.Data, k)
	case classUnopened:
		s.note(f.Path, RuleArchiveUnscanned, SeverityError, k.name+": a format the scanner does not open (zip, tar, gzip, bzip2, xz)")
	default:
		s.note(f.Path, RuleBinaryFile, SeverityError, "non-text file (binary file)")
		s.appendedZip(f)
	}
	return true
}

// appendedZip opens a zip found at the end of a media or binary file (an
// image with a zip behind it reads as both): its members are scanned too.
func (s *scanner) appendedZip(f File) {
	tail := f.Data[max(0, len(f.Data)-(1<<16+22)):]
	if !bytes.Contains(tail, []byte("PK\x05\x06")) {
		return
	}
	if zr, err := zip.NewReader(bytes.NewReader(f.Data), int64(len(f.Data))); err == nil && len(zr.File) > 0 {
		s.archive(f.Path, f.Data, fileKind{class: classArchive, name: "zip archive appended to the file", fmt: fmtZip})
	}
}

// archive opens the archive at file (depth and budget allowing), lists it
// with an archive-file info finding and scans its members as files.
func (s *scanner) archive(file string, data []byte, k fileKind) {
	switch {
	case s.arc.spent != "":
		s.note(file, RuleArchiveUnscanned, SeverityError, k.name+" not opened: "+s.arc.spent)
		return
	case s.arc.depth >= maxArchiveDepth:
		s.note(file, RuleArchiveUnscanned, SeverityError,
			fmt.Sprintf("%s inside %d archives: not opened (at most %d levels)", k.name, s.arc.depth, maxArchiveDepth))
		return
	}
	s.arc.depth++
	defer func() { s.arc.depth-- }()
	entries, bytes0 := s.arc.entries, s.arc.bytes
	name := k.name
	switch k.fmt {
	case fmtZip:
		var listed bool
		if name, listed = s.zipArchive(file, data); !listed {
			return
		}
	case fmtTar:
		ar := &arcReader{r: bytes.NewReader(data), st: &s.arc}
		s.tarFrom(file, ar, ar)
	default:
		name = s.stream(file, data, k)
	}
	s.note(file, RuleArchiveFile, SeverityInfo, fmt.Sprintf("%s: %d entries, %d bytes uncompressed, scanned as %s!/…",
		name, s.arc.entries-entries, s.arc.bytes-bytes0, path.Base(file)))
}

// memberPath is how a member is named in findings: ARCHIVE!/NAME, the
// name made valid UTF-8, without a leading "./", at most 256 bytes.
func memberPath(archive, name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	for strings.HasPrefix(name, "./") {
		name = name[2:]
	}
	if len(name) > maxMemberName {
		cut := maxMemberName
		for cut > 0 && name[cut]&0xc0 == 0x80 {
			cut--
		}
		name = name[:cut] + "…"
	}
	return archive + "!/" + name
}

// escapes says why a member name (or a hard link's target, both relative
// to where the archive is extracted) leaves that directory, or "".
func escapes(name string) string {
	n := strings.ReplaceAll(name, "\\", "/")
	switch {
	case strings.HasPrefix(n, "/"):
		return "absolute path"
	case len(n) >= 2 && n[1] == ':' && (n[0]|0x20 >= 'a' && n[0]|0x20 <= 'z'):
		return "drive path"
	}
	if c := path.Clean(n); c == ".." || strings.HasPrefix(c, "../") {
		return "path leaves the archive's directory"
	}
	return ""
}

// linkEscapes says why a symbolic link named name pointing at target
// leads outside the archive's directory, or "".
func linkEscapes(name, target string) string {
	t := strings.ReplaceAll(target, "\\", "/")
	if strings.HasPrefix(t, "/") || len(t) >= 2 && t[1] == ':' {
		return "symbolic link to an absolute path"
	}
	if escapes(path.Join(path.Dir(strings.ReplaceAll(name, "\\", "/")), t)) != "" {
		return "symbolic link that leaves the archive's directory"
	}
	return ""
}

// entry counts one entry against the skill's bound; false when it is over
// (reported at the archive).
func (s *scanner) entry(file string) bool {
	if s.arc.spent != "" {
		return false
	}
	s.arc.entries++
	if s.arc.entries > maxArchiveEntries {
		s.arc.spent = fmt.Sprintf("the %d archive entries a skill may hold are read", maxArchiveEntries)
		s.note(file, RuleArchiveUnscanned, SeverityError,
			fmt.Sprintf("over %d archive entries in the skill: the rest not read", maxArchiveEntries))
		return false
	}
	return true
}

// member scans the bytes of one member as a file of the skill directory
// (an archive among them opens one level deeper) and reports false when
// the members of this skill have made too many findings to go on.
func (s *scanner) member(file, p string, data []byte) bool {
	before := len(s.findings)
	s.scanFile(File{Path: p, Data: data})
	s.arc.findings += len(s.findings) - before
	if s.arc.findings > maxArchiveFindings && s.arc.spent == "" {
		s.arc.spent = fmt.Sprintf("archive members made over %d findings", maxArchiveFindings)
		s.note(file, RuleArchiveUnscanned, SeverityError,
			fmt.Sprintf("archive members made over %d findings: the rest not read", maxArchiveFindings))
	}
	return s.arc.spent == ""
}

// readMember reads one member through r, at most the cap of one member
// (arcState.maxMember). It reports a bound or damage at p and returns what
// it could read; stop is set when the archive must not be read further.
func (s *scanner) readMember(p string, r io.Reader, ar *arcReader) (data []byte, stop bool) {
	limit := s.arc.maxMember
	if limit <= 0 {
		limit = maxArchiveBytes // ar's byte bound stops it there
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	var b *errBound
	switch {
	case ar.err != nil:
		s.note(p, RuleArchiveUnscanned, SeverityError, ar.err.Error())
		return data, true
	case errors.As(err, &b):
		s.note(p, RuleArchiveUnscanned, SeverityError, b.msg)
		return data, true
	case s.arc.overMember(uint64(len(data))):
		s.note(p, RuleArchiveUnscanned, SeverityError, s.arc.memberLimit()+": not scanned")
		return nil, false
	case err != nil:
		s.note(p, RuleArchiveUnscanned, SeverityError, "damaged: "+err.Error())
	}
	return data, false
}

// tarFrom lists and scans the members of a tar archive read from r,
// whose bytes ar counts.
func (s *scanner) tarFrom(file string, r io.Reader, ar *arcReader) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			msg := "damaged tar archive: " + err.Error()
			if ar.err != nil {
				msg = ar.err.Error()
			}
			s.note(file, RuleArchiveUnscanned, SeverityError, msg)
			return
		}
		if !s.entry(file) {
			return
		}
		p := memberPath(file, h.Name)
		if why := escapes(h.Name); why != "" {
			s.note(p, RuleArchivePath, SeverityError, why+": "+h.Name)
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeGNUSparse, '7':
		case tar.TypeSymlink:
			if why := linkEscapes(h.Name, h.Linkname); why != "" {
				s.note(p, RuleArchivePath, SeverityError, why+": "+h.Linkname)
			}
			continue
		case tar.TypeLink:
			if why := escapes(h.Linkname); why != "" {
				s.note(p, RuleArchivePath, SeverityError, "hard link: "+why+": "+h.Linkname)
			}
			continue
		default:
			continue // directories, devices, FIFOs: nothing to read
		}
		if h.Size > 0 && s.arc.overMember(uint64(h.Size)) {
			// Not read; a compressed stream still decompresses it to skip
			// it, which the byte budget bounds.
			s.note(p, RuleArchiveUnscanned, SeverityError,
				fmt.Sprintf("%d bytes, %s: not scanned", h.Size, s.arc.memberLimit()))
			continue
		}
		data, stop := s.readMember(p, tr, ar)
		if len(data) > 0 && !s.member(file, p, data) || stop {
			return
		}
	}
}

// zipArchive lists and scans the members of a zip. An office document or
// a Java or Android package is not an archive of files to scan: it is
// reported as what it is (see zipDocument), and listed is false.
func (s *scanner) zipArchive(file string, data []byte) (name string, listed bool) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		s.note(file, RuleArchiveUnscanned, SeverityError, "damaged zip archive: "+err.Error())
		return "", false
	}
	if s.zipDocument(file, zr) {
		return "", false
	}
	for _, f := range zr.File {
		if !s.entry(file) {
			break
		}
		p := memberPath(file, f.Name)
		if why := escapes(f.Name); why != "" {
			s.note(p, RuleArchivePath, SeverityError, why+": "+f.Name)
		}
		mode := f.Mode()
		switch {
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			continue
		case mode&fs.ModeSymlink != 0:
			if rc, err := f.Open(); err == nil {
				target, _ := io.ReadAll(io.LimitReader(rc, 4<<10))
				rc.Close()
				if why := linkEscapes(f.Name, string(target)); why != "" {
					s.note(p, RuleArchivePath, SeverityError, why+": "+string(target))
				}
			}
			continue
		case f.Flags&0x1 != 0:
			s.note(p, RuleArchiveUnscanned, SeverityError, "encrypted: its content cannot be reviewed")
			continue
		case s.arc.overMember(f.UncompressedSize64):
			s.note(p, RuleArchiveUnscanned, SeverityError,
				fmt.Sprintf("%d bytes, %s: not scanned", f.UncompressedSize64, s.arc.memberLimit()))
			continue
		}
		rc, err := f.Open()
		if err != nil {
			msg := "damaged: " + err.Error()
			if errors.Is(err, zip.ErrAlgorithm) {
				msg = fmt.Sprintf("compressed with method %d, which the scanner does not read (stored and deflate only)", f.Method)
			}
			s.note(p, RuleArchiveUnscanned, SeverityError, msg)
			continue
		}
		if s.zipMember(file, p, f, rc, min(int64(f.CompressedSize64), int64(len(data)))) {
			break
		}
	}
	return "zip archive", true
}

// zipDocument recognises zips that are documents or programs by the
// members they hold and reports them: an OOXML or OpenDocument file is a
// media-file (its XML is markup the agent does not run, not scanned as
// text; reading it as text would make every document's schema URLs
// network findings), except that macros in it and executables among its
// parts are executable-file errors; a jar or an Android package is an
// executable-file error.
func (s *scanner) zipDocument(file string, zr *zip.Reader) bool {
	var doc, prog string
	for _, f := range zr.File {
		switch n := f.Name; {
		case n == "[Content_Types].xml":
			doc = "Office Open XML document"
		case n == "mimetype" && doc == "" && f.UncompressedSize64 < 128:
			if rc, err := f.Open(); err == nil {
				mt, _ := io.ReadAll(io.LimitReader(rc, 128))
				rc.Close()
				if strings.HasPrefix(string(mt), "application/vnd.oasis.opendocument.") {
					doc = "OpenDocument file"
				}
			}
		case n == "META-INF/MANIFEST.MF" || strings.HasSuffix(n, ".class"):
			prog = "Java archive (jar)"
		case n == "classes.dex":
			prog = "Android package (apk)"
		}
	}
	switch {
	case prog != "":
		s.note(file, RuleExecutableFile, SeverityError, prog)
		return true
	case doc == "":
		return false
	}
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "word/") {
			doc = "Word document (OOXML)"
		} else if strings.HasPrefix(f.Name, "xl/") {
			doc = "Excel workbook (OOXML)"
		} else if strings.HasPrefix(f.Name, "ppt/") {
			doc = "PowerPoint presentation (OOXML)"
		} else {
			continue
		}
		break
	}
	s.note(file, RuleMediaFile, SeverityInfo, doc+" (not read as text)")
	for _, f := range zr.File {
		if !s.entry(file) {
			return true
		}
		n, low := f.Name, strings.ToLower(f.Name)
		p := memberPath(file, n)
		switch {
		case path.Base(low) == "vbaproject.bin":
			s.note(p, RuleExecutableFile, SeverityError, "VBA macros in a "+doc)
			continue
		case strings.HasPrefix(n, "Basic/") && !strings.HasSuffix(n, "/script-lc.xml") && !strings.HasSuffix(n, "/script-lb.xml") && !strings.HasSuffix(n, "/"),
			strings.HasPrefix(n, "Scripts/") && !strings.HasSuffix(n, "/"):
			s.note(p, RuleExecutableFile, SeverityError, "macros in an "+doc)
			continue
		case markupPart[path.Ext(low)] || strings.HasSuffix(n, "/") || f.Flags&0x1 != 0:
			continue
		}
		// Other parts (images, fonts, embedded objects, printer settings):
		// an executable among them is one; only their first KiB is read,
		// whatever they declare. A part that is text is scanned as a
		// member: a package of the same layout (a .vsix holds JavaScript)
		// must not pass its code off as a document's.
		rc, err := f.Open()
		if err != nil {
			continue
		}
		head, _ := io.ReadAll(io.LimitReader(rc, partHead))
		rc.Close()
		if k, ok := sniffExec(head); ok {
			s.note(p, RuleExecutableFile, SeverityError, k.name+" inside a "+doc)
			continue
		}
		if len(head) == 0 || !textHead(head) || s.arc.overMember(f.UncompressedSize64) {
			continue
		}
		if rc, err = f.Open(); err != nil {
			continue
		}
		if s.zipMember(file, p, f, rc, int64(f.CompressedSize64)) {
			break
		}
	}
	return true
}

// markupPart are the extensions of an office document's markup parts,
// not scanned: the agent does not run them, and their namespace URLs
// would each be a network-egress warn.
var markupPart = map[string]bool{".xml": true, ".rels": true, ".rdf": true, ".vml": true}

// stream decompresses a gzip, bzip2 or xz file: a tar inside is listed
// and scanned (one level, a .tar.gz), anything else is one member named
// after the file without its suffix. It returns the name of what it read.
func (s *scanner) stream(file string, data []byte, k fileKind) string {
	var (
		r        io.Reader
		err      error
		inner          = strings.TrimSuffix(k.name, " stream")
		member         = strippedName(path.Base(file))
		declared int64 = -1
	)
	switch k.fmt {
	case fmtGzip:
		var gz *gzip.Reader
		if gz, err = gzip.NewReader(bytes.NewReader(data)); err == nil {
			r = gz
			if n := path.Base(strings.ReplaceAll(gz.Name, "\\", "/")); gz.Name != "" && n != "." && n != "/" && n != ".." {
				member = n
			}
		}
	case fmtBzip2:
		r = bzip2.NewReader(bytes.NewReader(data))
	case fmtXz:
		r, declared, err = newXZReader(data)
	}
	if err != nil {
		s.note(file, RuleArchiveUnscanned, SeverityError, "damaged "+k.name+": "+err.Error())
		return k.name
	}
	if declared > maxArchiveBytes {
		s.note(file, RuleArchiveUnscanned, SeverityError,
			fmt.Sprintf("declares %d bytes uncompressed, over the skill's %d KiB for archives: not read", declared, maxArchiveBytes>>10))
		return k.name
	}
	ar := &arcReader{r: r, st: &s.arc, in: int64(len(data))}
	br := bufio.NewReaderSize(ar, 1024)
	if head, _ := br.Peek(512); isTar(head) {
		s.tarFrom(file, br, ar)
		return "tar archive, " + inner + "-compressed"
	}
	if !s.entry(file) {
		return inner + "-compressed file"
	}
	p := memberPath(file, member)
	// What was read before a bound or damage is scanned all the same.
	if body, _ := s.readMember(p, br, ar); len(body) > 0 {
		s.member(file, p, body)
	}
	return inner + "-compressed file"
}

// strippedName is a compressed file's name without its compression
// suffix (x.sh.gz → x.sh, x.tgz → x.tar), or "content".
func strippedName(base string) string {
	low := strings.ToLower(base)
	for _, sfx := range [][2]string{{".tgz", ".tar"}, {".tbz2", ".tar"}, {".tbz", ".tar"}, {".txz", ".tar"},
		{".gz", ""}, {".gzip", ""}, {".bz2", ""}, {".bz", ""}, {".xz", ""}} {
		if strings.HasSuffix(low, sfx[0]) && len(base) > len(sfx[0]) {
			return base[:len(base)-len(sfx[0])] + sfx[1]
		}
	}
	return "content"
}

// zipMember reads one opened zip member (compressed counts its compressed
// bytes, for the ratio bound; a stored member has none), closes it and
// scans it; it reports whether the archive's reading must stop.
func (s *scanner) zipMember(file, p string, f *zip.File, rc io.ReadCloser, compressed int64) (stop bool) {
	ar := &arcReader{r: rc, st: &s.arc, in: max(1, compressed)}
	if f.Method == zip.Store {
		ar.in = 0
	}
	body, stop := s.readMember(p, ar, ar)
	rc.Close()
	return len(body) > 0 && !s.member(file, p, body) || stop
}

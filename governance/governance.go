// Package governance owns the skills-governance scanner: a skill
// directory's bytes (its SKILL.md and every other file) go in; findings, a
// content digest, a risk score, band, verdict and enforcement mode come
// out. It is pure and deterministic: no I/O, no clock, no configuration
// beyond Options. It may import skill (to read SKILL.md frontmatter
// requirements) and must never import gateway, store, catalog or
// eligibility:
// those apply its Report, it does not know about them.
package governance

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/publisher"
	"github.com/skillgate/skillgate/skill"
)

// Severities of a Finding.
const (
	SeverityInfo  = "info"
	SeverityWarn  = "warn"
	SeverityError = "error"
)

// Finding is one thing the scanner saw, where it saw it.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	File     string `json:"file"` // path relative to the skill directory
	Line     int    `json:"line"` // 1-based; 0 when about the whole file
	Excerpt  string `json:"excerpt"`
	// Suppressed is set when the operator suppressed the finding (see
	// Report.Suppress); absent otherwise.
	Suppressed *Suppressed `json:"suppressed,omitempty"`

	// quoted marks an error-class match downgraded to warn because it is in
	// documentation context (a table, a list of examples, a non-shell
	// code block); it scores in its own small category.
	quoted bool
}

// File is one file of a skill directory other than SKILL.md.
type File struct {
	Path string // relative to the skill directory, "/"-separated
	Data []byte
	// Err, when not empty, says why Data is absent: unreadable, over the
	// size cap, over the file-count cap. Such a file is a warn finding,
	// and the skill is quarantined at least (Report.Unscanned).
	Err string
	// Size and ETag are, for a file not read (Err set), its size and ETag
	// as listed (on S3 the ETag is a hash of the content): the digest
	// covers them, so that an unread file cannot change unseen. A file
	// that was read is covered by its bytes.
	Size int64
	ETag string
}

// Input is one skill directory.
type Input struct {
	SkillMD []byte
	Files   []File // every other file; any order
	// Skill and Lines are SKILL.md as package skill parsed it
	// (skill.ParseLines of SkillMD), when the caller has it, as the
	// gateway's loader does: the scanner reads the frontmatter's end, the
	// name, the description and the requirements from them and does not
	// parse SKILL.md again. With Skill nil, Scan parses SkillMD itself.
	Skill *skill.Skill
	Lines skill.TextLines
	// Skipped are the files left unread by the file-count cap other than
	// the one File of Files that stands for them all (Budget.Unread), each
	// with its listed Size and ETag. The scanner does not look at them;
	// the digest covers them, and each counts in Report.Unscanned.
	Skipped []File
	// MaxFileBytes is the cap of one file the Files were read under
	// (Budget.MaxFileBytes: the store's read bound, store.MaxFileSize).
	// A member of an archive is held to it too, as one file of the
	// directory. 0: a member has no cap of its own (the archive bounds
	// still hold it).
	MaxFileBytes int
}

// Unscanned returns the number of files of the directory the scanner does
// not read: the Files with Err set, and the Skipped ones.
func (in *Input) Unscanned() int {
	n := len(in.Skipped)
	for i := range in.Files {
		if in.Files[i].Err != "" && in.Files[i].Path != publisher.FileName {
			n++
		}
	}
	return n
}

// Flagged settings: what a flagged (warn-only) verdict does to the mode.
const (
	FlaggedAllow      = "allow"
	FlaggedQuarantine = "quarantine"
)

// Options configure a scan.
type Options struct {
	// AllowedHosts are host globs ("api.github.com", "*.github.com") whose
	// URLs are not network-egress findings. "*" matches any run of
	// characters, dots included.
	AllowedHosts []string
	// Flagged is FlaggedAllow (the default, also for "") or
	// FlaggedQuarantine.
	Flagged string
}

// Report is the scanner's result for one skill directory.
type Report struct {
	Digest   string    `json:"digest"`
	Score    int       `json:"score"`
	Band     string    `json:"band"`
	Verdict  string    `json:"verdict"`
	Mode     string    `json:"mode"`
	Findings []Finding `json:"findings"`

	// Unscanned is the number of files of the directory the scanner did
	// not read (Input.Unscanned): with any, Mode is quarantine at least,
	// since nothing is known of what they hold.
	Unscanned int `json:"-"`

	// SignedBy names the trusted publisher whose key signed the content
	// (SKILL.sig); absent when none did.
	SignedBy string `json:"signedBy,omitempty"`
	// Unsigned says gateway.governance.requireSigned holds the content,
	// which nothing else held: no trusted publisher signed it.
	Unsigned bool `json:"-"`

	// caps and flagged are what the score and mode were derived from
	// besides the findings, for Suppress and the signature to derive
	// them again.
	caps    []string
	flagged string
	// required is requireSigned, as the report was made under.
	required bool
}

// SkillFile is the path of a skill's definition file in findings.
const SkillFile = skill.FileName

// Digest returns "sha256:<hex>" over every file of the directory, read or
// not. The encoding is unambiguous: files sorted by path (SKILL.md is the
// path "SKILL.md"; a Skipped file after a File of the same path), and for
// each file: the path's length as 8 bytes big-endian, the path, one state
// byte, then
//
//   - 0, contents follow: the length of the bytes as 8 bytes big-endian,
//     the bytes;
//   - 1, not read: the reason's length as 8 bytes big-endian, the reason,
//     the listed size as 8 bytes big-endian, the ETag's length as 8 bytes
//     big-endian, the ETag;
//   - 2, skipped (Input.Skipped): the listed size and the ETag as for 1.
//
// A directory whose files were all read has the digest it had before
// unread files carried their size and ETag.
func Digest(in *Input) string {
	type ent struct {
		path  string
		state byte
		f     *File
	}
	ents := make([]ent, 0, 1+len(in.Files)+len(in.Skipped))
	ents = append(ents, ent{path: SkillFile})
	for i := range in.Files {
		f := &in.Files[i]
		if f.Path == publisher.FileName {
			continue // the signature is over the digest: it cannot be in it
		}
		st := byte(0)
		if f.Err != "" {
			st = 1
		}
		ents = append(ents, ent{f.Path, st, f})
	}
	for i := range in.Skipped {
		ents = append(ents, ent{in.Skipped[i].Path, 2, &in.Skipped[i]})
	}
	sort.SliceStable(ents, func(i, j int) bool {
		if ents[i].path != ents[j].path {
			return ents[i].path < ents[j].path
		}
		return ents[i].state == 2 && ents[j].state != 2
	})
	h := sha256.New()
	var n [8]byte
	num := func(v int) {
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	for _, e := range ents {
		num(len(e.path))
		h.Write([]byte(e.path))
		h.Write([]byte{e.state})
		switch {
		case e.f == nil:
			num(len(in.SkillMD))
			h.Write(in.SkillMD)
		case e.state == 0:
			num(len(e.f.Data))
			h.Write(e.f.Data)
		default:
			if e.state == 1 {
				num(len(e.f.Err))
				h.Write([]byte(e.f.Err))
			}
			num(int(e.f.Size))
			num(len(e.f.ETag))
			h.Write([]byte(e.f.ETag))
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Scan scans one skill directory. It never fails: every problem is a
// finding.
func Scan(in *Input, opts Options) Report {
	sk, at := in.Skill, in.Lines
	if sk == nil {
		sk, at = skill.ParseLines(skill.Ref{Key: SkillFile, Dir: "skill"}, in.SkillMD)
	}
	s := newScanner(opts, sk)
	s.arc.maxMember = int64(in.MaxFileBytes)
	s.scanSkillMD(in.SkillMD, sk, at)
	files := append([]File(nil), in.Files...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for _, f := range files {
		if f.Path == publisher.FileName {
			continue // not scanned: Policy.Scan verifies it
		}
		s.scanFile(f)
	}
	fs := s.findings
	sort.SliceStable(fs, func(i, j int) bool { return findingLess(fs[i], fs[j]) })
	if fs == nil {
		fs = []Finding{}
	}
	score := Score(fs, s.caps)
	verdict := VerdictOf(fs)
	band := BandOf(score)
	mode := ModeOf(band, verdict, opts.Flagged)
	unscanned := in.Unscanned()
	if unscanned > 0 {
		mode = Stricter(mode, ModeQuarantine)
	}
	return Report{
		Digest:    Digest(in),
		Score:     score,
		Band:      band,
		Verdict:   verdict,
		Mode:      mode,
		Findings:  fs,
		Unscanned: unscanned,
		caps:      s.caps,
		flagged:   opts.Flagged,
	}
}

// findingLess orders findings: SKILL.md's first, then the other files by
// path, each by line.
func findingLess(a, b Finding) bool {
	if (a.File == SkillFile) != (b.File == SkillFile) {
		return a.File == SkillFile
	}
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Line < b.Line
}

// hostAllowed reports whether host matches one of the globs.
func hostAllowed(host string, globs []string) bool {
	for _, g := range globs {
		if globMatch(strings.ToLower(strings.TrimSpace(g)), host) {
			return true
		}
	}
	return false
}

// globMatch matches s against pattern where "*" is any run of characters.
// Linear-time greedy matching with one backtrack point.
func globMatch(pattern, s string) bool {
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

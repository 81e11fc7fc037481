// Package governance owns the skills-governance scanner: a skill
// directory's bytes (its SKILL.md and every other file) go in; findings, a
// content digest, a risk score, band, verdict and enforcement mode come
// out. It is pure and deterministic: no I/O, no clock, no configuration
// beyond Options. It may import skill (to read SKILL.md frontmatter
// requirements) and must never import gateway, r2store or eligibility:
// those apply its Report, it does not know about them.
package governance

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/skill"
)

// Rule ids. They are stable: operators, logs and golden files name them.
const (
	RuleDownloadExec        = "download-exec"
	RuleEncodedPayload      = "encoded-payload"
	RuleObfuscation         = "obfuscation"
	RuleRawIPURL            = "raw-ip-url"
	RulePasteHost           = "paste-host"
	RulePasswordArchive     = "password-archive"
	RuleNetworkEgress       = "network-egress"
	RuleSecretsAccess       = "secrets-access"
	RulePersistence         = "persistence"
	RulePromptInjection     = "prompt-injection"
	RuleHiddenUnicode       = "hidden-unicode"
	RuleHTMLComment         = "html-comment-directive"
	RuleBinaryFile          = "binary-file"
	RuleUndeclaredBinary    = "undeclared-binary"
	RuleDangerousCapability = "dangerous-capability"
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
	// size cap, over the file-count cap. Such a file is a warn finding.
	Err string
}

// Input is one skill directory.
type Input struct {
	SkillMD []byte
	Files   []File // every other file; any order
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
}

// SkillFile is the path of a skill's definition file in findings.
const SkillFile = skill.FileName

// Digest returns "sha256:<hex>" over every file of the directory. The
// encoding is unambiguous: files sorted by path (SKILL.md is the path
// "SKILL.md"), and for each file: the path's length as 8 bytes big-endian,
// the path, one state byte (0: contents follow; 1: not read, the reason
// follows), the payload's length as 8 bytes big-endian, the payload.
func Digest(in *Input) string {
	type ent struct {
		path, err string
		data      []byte
	}
	ents := []ent{{path: SkillFile, data: in.SkillMD}}
	for _, f := range in.Files {
		ents = append(ents, ent{f.Path, f.Err, f.Data})
	}
	sort.SliceStable(ents, func(i, j int) bool { return ents[i].path < ents[j].path })
	h := sha256.New()
	var n [8]byte
	for _, e := range ents {
		binary.BigEndian.PutUint64(n[:], uint64(len(e.path)))
		h.Write(n[:])
		h.Write([]byte(e.path))
		payload := e.data
		if e.err != "" {
			h.Write([]byte{1})
			payload = []byte(e.err)
		} else {
			h.Write([]byte{0})
		}
		binary.BigEndian.PutUint64(n[:], uint64(len(payload)))
		h.Write(n[:])
		h.Write(payload)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Scan scans one skill directory. It never fails: every problem is a
// finding.
func Scan(in *Input, opts Options) Report {
	sk, at := skill.ParseLines(skill.Ref{Key: SkillFile, Dir: "skill"}, in.SkillMD)
	s := newScanner(opts, sk)
	s.scanSkillMD(in.SkillMD, sk, at)
	files := append([]File(nil), in.Files...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for _, f := range files {
		s.scanFile(f)
	}
	fs := s.findings
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if (a.File == SkillFile) != (b.File == SkillFile) {
			return a.File == SkillFile
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	if fs == nil {
		fs = []Finding{}
	}
	score := Score(fs, s.caps)
	verdict := VerdictOf(fs)
	band := BandOf(score)
	return Report{
		Digest:   Digest(in),
		Score:    score,
		Band:     band,
		Verdict:  verdict,
		Mode:     ModeOf(band, verdict, opts.Flagged),
		Findings: fs,
	}
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

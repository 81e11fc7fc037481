package governance

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"github.com/skillgate/skillgate/publisher"
)

// Signed publishers (gateway.governance.publishers): a skill directory may
// carry SKILL.sig, an SSH signature (ssh-keygen -Y sign -n skillgate) over
// its digest string, which leaves SKILL.sig out. The built-in scan never
// reads it; Policy.Scan verifies it after the scan: a valid signature by a
// listed key lowers the score by 10 and reports signedBy; one that does
// not verify is an error finding bad-signature; with requireSigned,
// content no listed publisher signed is quarantined. Without publishers
// and requireSigned, SKILL.sig is not looked at: a skill is not held for a
// signature the operator never asked about.

// MitigationSigned is what a trusted publisher's signature takes off the
// score (seed 003's mitigation).
const MitigationSigned = -10

// signature returns the directory's SKILL.sig, if it has one.
func signature(in *Input) (*File, bool) {
	for i := range in.Files {
		if in.Files[i].Path == publisher.FileName {
			return &in.Files[i], true
		}
	}
	return nil, false
}

// ScanKey identifies what a report under one policy depends on in the
// directory: its digest, and its signature's bytes (the digest leaves
// SKILL.sig out, so that a signature added, changed or removed is seen).
func ScanKey(in *Input) string {
	d := Digest(in)
	sig, ok := signature(in)
	if !ok {
		return d
	}
	h := sha256.New()
	h.Write([]byte(sig.Err))
	h.Write([]byte{0})
	h.Write(sig.Data)
	return d + ":" + hex.EncodeToString(h.Sum(nil))
}

// signed applies the directory's signature to the report.
func (r *Report) signed(in *Input, trust *publisher.Trust, required bool) {
	if trust.Len() == 0 && !required {
		return
	}
	r.required = required
	if sig, ok := signature(in); ok {
		var err error
		if sig.Err != "" {
			err = errNotRead(sig.Err)
		} else {
			r.SignedBy, err = publisher.Verify(trust, r.Digest, sig.Data)
		}
		if err != nil {
			r.Findings = append(r.Findings, Finding{Rule: RuleBadSignature, Severity: SeverityError,
				File: publisher.FileName, Excerpt: truncate(err.Error(), 300)})
			sort.SliceStable(r.Findings, func(i, j int) bool { return findingLess(r.Findings[i], r.Findings[j]) })
		}
	}
	r.derive()
}

type errNotRead string

func (e errNotRead) Error() string { return "SKILL.sig not read: " + string(e) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

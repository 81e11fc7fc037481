package governance

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/publisher"
	"golang.org/x/crypto/ssh"
)

func TestSignature(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "acme")
	if err != nil {
		t.Fatal(err)
	}
	sshPub, _ := ssh.NewPublicKey(pub)
	trust, err := publisher.Parse([]publisher.Publisher{{Name: "acme", Keys: []string{strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub)))}}}, "p")
	if err != nil {
		t.Fatal(err)
	}
	// A skill that declares shell execution: score 30 - 5 (no error); an
	// error finding adds 25 and takes the 5 back.
	md := []byte("---\nname: s\ndescription: d\nmetadata:\n  capabilities: [shell.exec]\n---\n# S\n\nSummarize.\n")
	in := &Input{SkillMD: md}
	sign := func(digest string) []byte {
		sig, err := publisher.Sign(pem.EncodeToMemory(block), digest)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	plain := Policy{Mode: Enforce}.Scan(in)
	good := sign(Digest(in))
	tests := []struct {
		name     string
		files    []File
		trust    *publisher.Trust
		required bool
		score    int
		mode     string
		signedBy string
		unsigned bool
		finding  string
	}{
		{name: "no publishers: SKILL.sig not looked at", files: []File{{Path: "SKILL.sig", Data: []byte("junk")}}, score: plain.Score, mode: plain.Mode},
		{name: "signed by a trusted key", files: []File{{Path: "SKILL.sig", Data: good}}, trust: trust, score: plain.Score - 10, mode: "allow", signedBy: "acme"},
		{name: "no signature", trust: trust, score: plain.Score, mode: "allow"},
		{name: "no signature, required", trust: trust, required: true, score: plain.Score, mode: "quarantine", unsigned: true},
		{name: "signature of other content", files: []File{{Path: "SKILL.sig", Data: sign("sha256:" + strings.Repeat("0", 64))}}, trust: trust, score: plain.Score + 30, mode: "block", finding: "bad-signature"},
		{name: "garbage", files: []File{{Path: "SKILL.sig", Data: []byte("junk")}}, trust: trust, required: true, score: plain.Score + 30, mode: "block", finding: "bad-signature"},
		{name: "not read", files: []File{{Path: "SKILL.sig", Err: "over the 2 MiB limit of a skill directory"}}, trust: trust, score: plain.Score + 30, mode: "block", finding: "bad-signature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{SkillMD: md, Files: tc.files}
			if d := Digest(in); d != plain.Digest {
				t.Fatalf("digest %s, want %s: SKILL.sig is left out", d, plain.Digest)
			}
			r := Policy{Mode: Enforce, Trust: tc.trust, RequireSigned: tc.required}.Scan(in)
			if r.Score != tc.score || r.Mode != tc.mode || r.SignedBy != tc.signedBy || r.Unsigned != tc.unsigned {
				t.Errorf("score %d mode %s signedBy %q unsigned %v; want %d %s %q %v (%+v)", r.Score, r.Mode, r.SignedBy, r.Unsigned, tc.score, tc.mode, tc.signedBy, tc.unsigned, r.Findings)
			}
			var rules []string
			for _, f := range r.Findings {
				rules = append(rules, f.Rule)
				if f.File == "SKILL.sig" && f.Rule != RuleBadSignature {
					t.Errorf("SKILL.sig was scanned: %+v", f)
				}
			}
			if has := strings.Contains(strings.Join(rules, ","), RuleBadSignature); has != (tc.finding != "") {
				t.Errorf("findings %v, want bad-signature %v", rules, tc.finding != "")
			}
			if r.Unscanned != 0 {
				t.Errorf("unscanned %d: SKILL.sig does not count", r.Unscanned)
			}
		})
	}
	if ScanKey(&Input{SkillMD: md, Files: []File{{Path: "SKILL.sig", Data: good}}}) == ScanKey(&Input{SkillMD: md}) {
		t.Error("ScanKey does not see the signature")
	}
}

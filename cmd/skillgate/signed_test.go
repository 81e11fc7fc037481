package main

// Signed publishers as an operator runs them: skills signed with
// `skillgate governance sign` and with OpenSSH's own `ssh-keygen -Y sign`,
// a real `skillgate serve` trusting the publisher with requireSigned, and
// the outcome judged through /skills.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/report"
)

// storeDigests is the governance digest eval reports for each skill
// directory of store.
func storeDigests(t *testing.T, bins, store string) map[string]string {
	t.Helper()
	hostsFile := filepath.Join(t.TempDir(), "hosts.json")
	os.WriteFile(hostsFile, []byte("[]"), 0o644)
	out := sg(t, bins, 0, "eval", "--store", store, "--hosts", hostsFile, "--agent", "main", "--json")
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	d := map[string]string{}
	for _, s := range rep.Skills {
		if s.Governance != nil {
			d[s.Dir] = s.Governance.Digest
		}
	}
	return d
}

func TestSignedPublishersServe(t *testing.T) {
	bins := testBins(t)
	k := newSignKey(t, "", "-t", "ed25519")
	store := t.TempDir()
	for _, name := range []string{"by-skillgate", "by-openssh", "unsigned", "changed"} {
		dir := filepath.Join(store, "skills", name)
		os.MkdirAll(dir, 0o755)
		md := "---\nname: " + name + "\ndescription: A skill of acme's, " + name + ".\n---\n# " + name + "\n\nSummarize the text the user gives.\n"
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"by-skillgate", "changed"} {
		out := sg(t, bins, 0, "governance", "sign", filepath.Join(store, "skills", name), "--key", k.priv)
		if !strings.Contains(out, "SKILL.sig: sha256:") {
			t.Fatalf("sign printed %q", out)
		}
	}
	// OpenSSH signs the digest string itself.
	digests := storeDigests(t, bins, store)
	msg := filepath.Join(t.TempDir(), "digest")
	os.WriteFile(msg, []byte(digests["by-openssh"]), 0o644)
	if out, code := sshKeygen(t, nil, nil, "-Y", "sign", "-n", "skillgate", "-f", k.priv, msg); code != 0 {
		t.Fatalf("ssh-keygen -Y sign: %d %s", code, out)
	}
	sig, err := os.ReadFile(msg + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(store, "skills", "by-openssh", "SKILL.sig"), sig, 0o644)
	// Content changed after signing: the signature is over other content.
	os.WriteFile(filepath.Join(store, "skills", "changed", "notes.md"), []byte("added later\n"), 0o644)

	cfg := filepath.Join(t.TempDir(), "gateway.hujson")
	conf := fmt.Sprintf(`{"gateway": {"governance": {"publishers": [{"name": "acme", "keys": [%q]}], "requireSigned": true}}}`, k.pub)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	base, gw := serveReview(t, bins, store, cfg)
	waitHTTP(t, func() (string, bool) { return inPrompt(base, "by-openssh") }, gw)
	want := map[string]struct {
		eligible bool
		signedBy string
		reason   string
	}{
		"by-skillgate": {true, "acme", ""},
		"by-openssh":   {true, "acme", ""},
		"unsigned":     {false, "", "quarantined by governance: not signed by a trusted publisher"},
		"changed":      {false, "", "blocked by governance: bad-signature at SKILL.sig:0"},
	}
	for _, s := range mainSkills(t, base) {
		w := want[s.Name]
		if s.Eligible != w.eligible || s.Governance == nil || s.Governance.SignedBy != w.signedBy || strings.Join(s.Reasons, "") != w.reason {
			t.Errorf("%s: eligible %v reasons %q governance %+v; want %v %q signed by %q", s.Name, s.Eligible, s.Reasons, s.Governance, w.eligible, w.reason, w.signedBy)
		}
		if s.Name == "by-openssh" && s.Governance.Digest != digests["by-openssh"] {
			t.Errorf("the digest changed with SKILL.sig: %s, was %s", s.Governance.Digest, digests["by-openssh"])
		}
	}

	// An approval lifts the not-signed hold of exactly that content.
	sg(t, bins, 0, "governance", "approve", "unsigned", "--config", cfg, "--store", store)
	waitHTTP(t, func() (string, bool) { return inPrompt(base, "unsigned") }, gw)
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/publisher"
	"github.com/skillgate/skillgate/report"
	"golang.org/x/crypto/ssh"
)

// signKey is a key pair made by OpenSSH's ssh-keygen for the sign tests.
type signKey struct {
	priv, pub, fp string // private key file, authorized_keys line, "ED25519 key SHA256:…"
}

// sshKeygen runs OpenSSH's ssh-keygen (openssh-client, installed by
// scripts/test-tools.sh: a test never skips for want of it).
func sshKeygen(t *testing.T, stdin []byte, env []string, args ...string) (out string, code int) {
	t.Helper()
	bin, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatalf("ssh-keygen not found (install openssh-client: scripts/test-tools.sh): %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("ssh-keygen %q: %v", args, err)
	}
	return string(b), cmd.ProcessState.ExitCode()
}

// newSignKey makes a key pair with ssh-keygen: -t/-b args, passphrase "".
func newSignKey(t *testing.T, passphrase string, typ ...string) signKey {
	t.Helper()
	priv := filepath.Join(t.TempDir(), "id")
	args := append([]string{"-q", "-N", passphrase, "-C", "acme@example", "-f", priv}, typ...)
	if out, code := sshKeygen(t, nil, nil, args...); code != 0 {
		t.Fatalf("ssh-keygen %q: exit %d: %s", args, code, out)
	}
	line, err := os.ReadFile(priv + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(line)
	if err != nil {
		t.Fatal(err)
	}
	return signKey{priv, strings.TrimSpace(string(line)), publisher.Fingerprint(pub)}
}

// verifyWithKeygen checks DIR/SKILL.sig over digest with `ssh-keygen -Y
// verify -f allowed_signers -I acme -n skillgate`.
func verifyWithKeygen(t *testing.T, sigFile, digest string, k signKey) (string, int) {
	t.Helper()
	f := strings.Fields(k.pub)
	signers := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(signers, []byte("acme "+f[0]+" "+f[1]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return sshKeygen(t, []byte(digest), nil, "-Y", "verify", "-f", signers, "-I", "acme", "-n", "skillgate", "-s", sigFile)
}

// signStore is a directory store with one skill directory, skills/demo,
// of a SKILL.md and two other files. It returns the store and the skill
// directory.
func signStore(t *testing.T) (store, dir string) {
	t.Helper()
	store = t.TempDir()
	dir = filepath.Join(store, "skills", "demo")
	for name, content := range map[string]string{
		"SKILL.md":              "---\nname: demo\ndescription: A demo skill for signing.\n---\nRun scripts/hello.sh.\n",
		"scripts/hello.sh":      "#!/bin/sh\necho hello\n",
		"references/reading.md": "# Reading\nNothing to see.\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return store, dir
}

// evalDigest is the governance digest eval (the gateway's loader and
// scanner) reports for skills/demo of the store.
func evalDigest(t *testing.T, store string) string {
	t.Helper()
	out, errOut, code := runCmd(t, "eval", "--store", store, "--hosts", hosts, "--agent", "main", "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Skills {
		if s.Dir == "demo" && s.Governance != nil {
			return s.Governance.Digest
		}
	}
	t.Fatalf("no governance report of demo in\n%s", out)
	return ""
}

// TestGovernanceSign: `skillgate governance sign DIR --key FILE` signs the
// digest the gateway computes for the directory (eval's, before SKILL.sig
// exists), leaving SKILL.sig out, with keys made by ssh-keygen of each
// accepted type; OpenSSH's ssh-keygen -Y verify and publisher.Verify
// accept the signature.
func TestGovernanceSign(t *testing.T) {
	for _, typ := range [][]string{{"-t", "ed25519"}, {"-t", "ecdsa", "-b", "256"}, {"-t", "rsa", "-b", "3072"}} {
		t.Run(typ[1], func(t *testing.T) {
			k := newSignKey(t, "", typ...)
			store, dir := signStore(t)
			digest := evalDigest(t, store)
			sigFile := filepath.Join(dir, "SKILL.sig")
			want := "wrote " + sigFile + ": " + digest + " signed by " + k.fp + "\n"
			out, errOut, code := runCmd(t, "governance", "sign", dir, "--key", k.priv)
			if code != 0 || out != want || errOut != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q\nwant 0, %q", code, errOut, out, want)
			}
			if out, code := verifyWithKeygen(t, sigFile, digest, k); code != 0 || !strings.HasPrefix(out, `Good "skillgate" signature for acme with `+k.fp) {
				t.Errorf("ssh-keygen -Y verify: exit %d: %s", code, out)
			}
			tr, err := publisher.Parse([]publisher.Publisher{{Name: "acme", Keys: []string{k.pub}}}, "gateway.governance.publishers")
			if err != nil {
				t.Fatal(err)
			}
			sig, err := os.ReadFile(sigFile)
			if err != nil {
				t.Fatal(err)
			}
			if by, err := publisher.Verify(tr, digest, sig); by != "acme" || err != nil {
				t.Errorf("publisher.Verify = %q, %v", by, err)
			}
			if fi, err := os.Stat(sigFile); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("SKILL.sig: %v, mode %v, want 0644", err, fi.Mode())
			}

			// Signed again, SKILL.sig there: the same digest (it is left
			// out), and the file replaced.
			if out, errOut, code := runCmd(t, "governance", "sign", "--key", k.priv, dir); code != 0 || out != want {
				t.Errorf("signed again (flag first): exit %d, stderr %q, stdout %q\nwant %q", code, errOut, out, want)
			}
			// A change of content is another digest; the old signature
			// does not match it.
			if err := os.WriteFile(filepath.Join(dir, "scripts", "hello.sh"), []byte("#!/bin/sh\necho changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(sigFile, sigFile+".old"); err != nil {
				t.Fatal(err)
			}
			changed := evalDigest(t, store)
			if changed == digest {
				t.Fatal("the digest did not change with the content")
			}
			if _, err := publisher.Verify(tr, changed, sig); !errors.Is(err, publisher.ErrContent) {
				t.Errorf("the old signature over the new content: %v, want ErrContent", err)
			}
			if out, code := verifyWithKeygen(t, sigFile+".old", changed, k); code == 0 {
				t.Errorf("ssh-keygen -Y verify accepts the old signature over the new content: %s", out)
			}
		})
	}
}

// TestGovernanceSignOpenSSH: the digest sign prints is the one to give
// `ssh-keygen -Y sign -n skillgate`; an encrypted key is refused with the
// exact OpenSSH command, which run as printed (the passphrase through
// SSH_ASKPASS) writes a SKILL.sig that verifies.
func TestGovernanceSignOpenSSH(t *testing.T) {
	k := newSignKey(t, "a passphrase", "-t", "ed25519")
	store, dir := signStore(t)
	digest := evalDigest(t, store)
	sigFile := filepath.Join(dir, "SKILL.sig")
	_, errOut, code := runCmd(t, "governance", "sign", dir, "--key", k.priv)
	cmdline := "printf %s " + digest + " | ssh-keygen -Y sign -n skillgate -f " + k.priv + " > " + sigFile
	want := "skillgate governance: --key " + k.priv + ": the private key is encrypted (it has a passphrase): skillgate reads only an unencrypted key; " +
		"sign with OpenSSH instead, which asks for the passphrase: " + cmdline + "\n"
	if code != 2 || errOut != want {
		t.Fatalf("exit %d, stderr %q\nwant 2, %q", code, errOut, want)
	}
	if _, err := os.Stat(sigFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("SKILL.sig written on a refusal: %v", err)
	}
	askpass := filepath.Join(t.TempDir(), "askpass")
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\necho 'a passphrase'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", cmdline)
	sh.Env = append(os.Environ(), "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=:0")
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no terminal: the passphrase comes from SSH_ASKPASS
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, out)
	}
	tr, err := publisher.Parse([]publisher.Publisher{{Name: "acme", Keys: []string{k.pub}}}, "p")
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := os.ReadFile(sigFile)
	if by, err := publisher.Verify(tr, digest, sig); by != "acme" || err != nil {
		t.Errorf("the signature of the printed command: %q, %v\n%s", by, err, sig)
	}
}

// TestGovernanceSignRefusals: each command line sign refuses, with its
// exact message and exit status 2, writing nothing.
func TestGovernanceSignRefusals(t *testing.T) {
	k := newSignKey(t, "", "-t", "ed25519")
	weak := newSignKey(t, "", "-t", "rsa", "-b", "1024")
	_, dir := signStore(t)
	tmp := t.TempDir()
	mk := func(rel, content string) string { return testkit.WriteFile(t, tmp, rel, content) }
	skillMD := "---\nname: x\ndescription: d\n---\nBody.\n"
	notSkill := filepath.Dir(mk("notskill/sub/SKILL.md", skillMD))
	notSkill = filepath.Dir(notSkill)
	big := filepath.Dir(mk("big/SKILL.md", skillMD))
	mk("big/assets/blob.bin", strings.Repeat("x", 300<<10))
	fifo := filepath.Dir(mk("fifo/SKILL.md", skillMD))
	if err := syscall.Mkfifo(filepath.Join(fifo, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Dir(mk("huge/SKILL.md", skillMD+strings.Repeat("y", 300<<10)))
	lower := filepath.Dir(mk("lower/skill.md", skillMD))
	file := mk("plain.txt", "x")
	pubFile := mk("id.pub", k.pub+"\n")
	bigKey := mk("big.key", strings.Repeat("k", 65<<10))

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"governance"}, "give a subcommand: approve, suppress, hold or sign (skillgate governance SUBCOMMAND -h for its flags)"},
		{"unknown subcommand", []string{"governance", "nosuch"}, `unknown governance subcommand "nosuch": give a subcommand: approve, suppress, hold or sign (skillgate governance SUBCOMMAND -h for its flags)`},
		{"no directory", []string{"governance", "sign", "--key", k.priv}, "governance sign takes one skill directory: governance sign DIR --key FILE"},
		{"two directories", []string{"governance", "sign", dir, dir, "--key", k.priv}, "governance sign takes one skill directory: governance sign DIR --key FILE"},
		{"no key", []string{"governance", "sign", dir}, "--key is required: the publisher's unencrypted OpenSSH private key file"},
		{"unknown flag", []string{"governance", "sign", dir, "--key", k.priv, "--force"}, "flag provided but not defined: -force"},
		{"key file missing", []string{"governance", "sign", dir, "--key", k.priv + ".missing"}, "--key: open " + k.priv + ".missing: no such file or directory"},
		{"public key", []string{"governance", "sign", dir, "--key", pubFile}, "--key " + pubFile + ": a public key, not a private one: give the private key file (the one without .pub)"},
		{"not a key", []string{"governance", "sign", dir, "--key", file}, "--key " + file + ": not an OpenSSH private key: ssh: no key found"},
		{"key file too big", []string{"governance", "sign", dir, "--key", bigKey}, "--key " + bigKey + ": over 64 KiB: not a private key file"},
		{"RSA 1024", []string{"governance", "sign", dir, "--key", weak.priv}, "--key " + weak.priv + ": an RSA key of 1024 bits: at least 2048 are required"},
		{"directory missing", []string{"governance", "sign", filepath.Join(tmp, "nope"), "--key", k.priv}, filepath.Join(tmp, "nope") + ": no such file or directory"},
		{"a file", []string{"governance", "sign", file, "--key", k.priv}, file + " is not a directory: give the skill directory, the one that holds SKILL.md"},
		{"no SKILL.md", []string{"governance", "sign", notSkill, "--key", k.priv}, notSkill + ": no SKILL.md in it: give the skill directory, the one that holds SKILL.md"},
		{"skill.md in lower case", []string{"governance", "sign", lower, "--key", k.priv}, lower + ": no SKILL.md in it: give the skill directory, the one that holds SKILL.md"},
		{"a file over the cap", []string{"governance", "sign", big, "--key", k.priv},
			filepath.Join(big, "assets", "blob.bin") + ": not signed: the gateway would not read this file (307200 bytes, over the 256 KiB file limit) and would hold the skill whatever its signature"},
		{"a named pipe", []string{"governance", "sign", fifo, "--key", k.priv},
			filepath.Join(fifo, "pipe") + ": not signed: the gateway would not read this file (not a regular file) and would hold the skill whatever its signature"},
		{"SKILL.md over the cap", []string{"governance", "sign", huge, "--key", k.priv},
			huge + "/SKILL.md is " + strconv.Itoa(len(skillMD)+300<<10) + " bytes, over the 256 KiB limit; it is not loaded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCmd(t, tt.args...)
			if strings.HasPrefix(tt.want, "flag provided") {
				// The flag package prints the flags before the message.
				errOut = errOut[strings.LastIndex(strings.TrimSuffix(errOut, "\n"), "\n")+1:]
			}
			if code != 2 || out != "" || errOut != "skillgate governance: "+tt.want+"\n" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant 2 and:\nskillgate governance: %s", code, out, errOut, tt.want)
			}
		})
	}
	for _, d := range []string{dir, big, fifo, huge} {
		if _, err := os.Stat(filepath.Join(d, "SKILL.sig")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: SKILL.sig written on a refusal: %v", d, err)
		}
	}
}

// TestGovernanceSignSymlink: a SKILL.sig that is a symbolic link is
// replaced by the signature, not followed.
func TestGovernanceSignSymlink(t *testing.T) {
	k := newSignKey(t, "", "-t", "ed25519")
	_, dir := signStore(t)
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "SKILL.sig")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCmd(t, "governance", "sign", dir, "--key", k.priv); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "SKILL.sig")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("SKILL.sig: %v %v, want a regular file", fi, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 {
		t.Errorf("the directory holds %d entries, want SKILL.md, SKILL.sig, scripts, references (no temporary file left)", len(ents))
	}
}

// TestGovernanceSignBinary runs the built skillgate binary end to end:
// sign, then OpenSSH verifies; a refusal exits 2 with its message.
func TestGovernanceSignBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bin := filepath.Join(testBins(t), "skillgate")
	k := newSignKey(t, "", "-t", "ecdsa", "-b", "256")
	store, dir := signStore(t)
	digest := evalDigest(t, store)
	cmd := exec.Command(bin, "governance", "sign", dir, "--key", k.priv)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	sigFile := filepath.Join(dir, "SKILL.sig")
	if want := "wrote " + sigFile + ": " + digest + " signed by " + k.fp + "\n"; stdout.String() != want || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q\nwant %q", stdout.String(), stderr.String(), want)
	}
	if out, code := verifyWithKeygen(t, sigFile, digest, k); code != 0 {
		t.Errorf("ssh-keygen -Y verify: exit %d: %s", code, out)
	}
	cmd = exec.Command(bin, "governance", "sign", dir)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 2 || string(out) != "skillgate governance: --key is required: the publisher's unencrypted OpenSSH private key file\n" {
		t.Errorf("without --key: %v: %q", err, out)
	}
}

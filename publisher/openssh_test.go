package publisher

// Helpers that drive the real OpenSSH ssh-keygen (Debian's openssh-client,
// installed by scripts/test-tools.sh): the tests never skip for want of it.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var keyDir string // keys made by ssh-keygen, shared by the tests

func TestMain(m *testing.M) {
	var err error
	keyDir, err = os.MkdirTemp("", "publisher-keys")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(keyDir)
	os.Exit(code)
}

// sshKeygen returns the path of OpenSSH's ssh-keygen, failing t without it.
func sshKeygen(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatalf("ssh-keygen not found (install openssh-client: scripts/test-tools.sh): %v", err)
	}
	return p
}

// runKeygen runs ssh-keygen with stdin and returns its stdout, stderr and
// exit status.
func runKeygen(t testing.TB, stdin []byte, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(sshKeygen(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("ssh-keygen %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// sshKey is a key pair ssh-keygen made.
type sshKey struct {
	Name string // as in keys: "ed25519", "ecdsa-p256", …
	Priv string // path of the private key file
	Pub  string // its authorized_keys line, comment included
}

var (
	keysMu sync.Mutex
	keys   = map[string]*sshKey{}
)

// keyArgs are the ssh-keygen -t/-b arguments of each key kind.
var keyArgs = map[string][]string{
	"ed25519":    {"-t", "ed25519"},
	"ecdsa-p256": {"-t", "ecdsa", "-b", "256"},
	"ecdsa-p384": {"-t", "ecdsa", "-b", "384"},
	"ecdsa-p521": {"-t", "ecdsa", "-b", "521"},
	"rsa3072":    {"-t", "rsa", "-b", "3072"},
	"rsa2048":    {"-t", "rsa", "-b", "2048"},
	"rsa1024":    {"-t", "rsa", "-b", "1024"},
	"other":      {"-t", "ed25519"}, // a second ed25519 key, listed by no one
}

// key returns the key pair of that kind (made once per run), or with
// passphrase a new one encrypted with it.
func key(t testing.TB, kind string, passphrase ...string) *sshKey {
	t.Helper()
	keysMu.Lock()
	defer keysMu.Unlock()
	name := kind
	pass := ""
	if len(passphrase) > 0 {
		pass = passphrase[0]
		name += "-encrypted"
	}
	if k := keys[name]; k != nil {
		return k
	}
	priv := filepath.Join(keyDir, name)
	args := append([]string{"-q", "-N", pass, "-C", name + "@example", "-f", priv}, keyArgs[kind]...)
	if _, errOut, code := runKeygen(t, nil, args...); code != 0 {
		t.Fatalf("ssh-keygen %q: exit %d: %s", args, code, errOut)
	}
	pub, err := os.ReadFile(priv + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	k := &sshKey{Name: kind, Priv: priv, Pub: strings.TrimSpace(string(pub))}
	keys[name] = k
	return k
}

// keygenSign signs msg with `ssh-keygen -Y sign -n namespace -f key`,
// reading the message on stdin, plus any extra options, and returns the
// armored signature it writes.
func keygenSign(t testing.TB, k *sshKey, namespace string, msg []byte, extra ...string) []byte {
	t.Helper()
	args := append([]string{"-Y", "sign", "-n", namespace, "-f", k.Priv}, extra...)
	out, errOut, code := runKeygen(t, msg, args...)
	if code != 0 {
		t.Fatalf("ssh-keygen %q: exit %d: %s", args, code, errOut)
	}
	return []byte(out)
}

// keygenSignFile signs with `ssh-keygen -Y sign -n skillgate -f key FILE`,
// the documented way, and returns FILE.sig.
func keygenSignFile(t testing.TB, k *sshKey, msg []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "digest")
	if err := os.WriteFile(file, msg, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-Y", "sign", "-n", Namespace, "-f", k.Priv, file}
	if _, errOut, code := runKeygen(t, nil, args...); code != 0 {
		t.Fatalf("ssh-keygen %q: exit %d: %s", args, code, errOut)
	}
	sig, err := os.ReadFile(file + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// keygenVerify runs `ssh-keygen -Y verify -f allowed_signers -I acme -n
// skillgate -s SIG < msg` with an allowed signers file listing the keys
// for the principal acme, and returns its exit status and output.
func keygenVerify(t testing.TB, sig, msg []byte, acmeKeys ...*sshKey) (code int, out string) {
	t.Helper()
	dir := t.TempDir()
	var allowed strings.Builder
	for _, k := range acmeKeys {
		f := strings.Fields(k.Pub)
		fmt.Fprintf(&allowed, "acme %s %s\n", f[0], f[1])
	}
	signers := filepath.Join(dir, "allowed_signers")
	sigFile := filepath.Join(dir, "SKILL.sig")
	if err := os.WriteFile(signers, []byte(allowed.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sigFile, sig, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runKeygen(t, msg, "-Y", "verify", "-f", signers, "-I", "acme", "-n", Namespace, "-s", sigFile)
	return code, stdout + stderr
}

package publisher

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// digestOf is a governance digest for the tests.
func digestOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

var (
	digest = digestOf("the skill")
	other  = digestOf("another skill")
)

// dsaKey is an ssh-dss public key (newer OpenSSH no longer makes them).
const dsaKey = "ssh-dss AAAAB3NzaC1kc3MAAACBAO4Az3/ZuM38wVjfUTWOsyWuEtxTR/zK2CfJt9YCpDcSzYGsaUj4cSUrxs9S+fGOcQkKGZABYjbTPSP7dKzQUlAEGRkBWrgGK4k0sDqpNnnd+NMRQzamqzDFbaKTHu31Q6BrmsnsK7lYfVubYjUoTQ6Z5CVBPVlMSpwop0dN7RCdAAAAFQCxaB7soI1XAbzYWSlWSSXnk+ugLwAAAIBH0NYGwWVyDxiciygP80RXVW7Xq+UVPmqvY0wPHUI4mD03ubRALCUIKzNlKRYYV1YP+M/w/24v0txvTtlK34XNMDgHDCXnq4KllZqdpRJtNaayFVCJp6rNmzvF5TXbKidWeSjaHVgUXUkJhUUNOMk7Wui2m33Ei5/XRIAj/ZEYCQAAAIAZWM48qsHyJU/lQ5oAl5CHW0xjoEh2sR+7nH+F9tU3akU1vrN2pa/AsIaeyDY5zYwrw16ZL8px+IkFrFZ5oxsw97SNrI+DG6zArFSdn6z6hdUNGLIk7fl+3xS3o8wA3q6MHTyYfkDjUe+riBT9Nay1dOVMC/Ta1RePe3QgzsMUkQ== dsa@example"

const prefix = "gateway.governance.publishers"

// trust parses publishers that must be accepted.
func trust(t testing.TB, list ...Publisher) *Trust {
	t.Helper()
	tr, err := Parse(list, prefix)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tr
}

func fp(t testing.TB, k *sshKey) string {
	t.Helper()
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.Pub))
	if err != nil {
		t.Fatal(err)
	}
	return ssh.FingerprintSHA256(pub)
}

// TestParse: every accepted key type; each refused list with the exact
// error, naming the key path.
func TestParse(t *testing.T) {
	ed, p256, p384, p521, rsa := key(t, "ed25519"), key(t, "ecdsa-p256"), key(t, "ecdsa-p384"), key(t, "ecdsa-p521"), key(t, "rsa2048")
	tr, err := Parse([]Publisher{
		{Name: "acme", Keys: []string{ed.Pub, p256.Pub, p384.Pub}},
		{Name: "Beta Corp", Keys: []string{p521.Pub, "  " + strings.Join(strings.Fields(rsa.Pub)[:2], " ") + "  "}}, // no comment, spaces
	}, prefix)
	if err != nil || tr.Len() != 5 {
		t.Fatalf("good list: %v, %d keys", err, tr.Len())
	}
	if tr, err := Parse(nil, prefix); err != nil || tr.Len() != 0 {
		t.Errorf("empty list: %v, %d keys", err, tr.Len())
	}

	rsa1024 := key(t, "rsa1024")
	edType, edB64 := strings.Fields(ed.Pub)[0], strings.Fields(ed.Pub)[1]
	for _, tt := range []struct {
		name string
		list []Publisher
		want string
	}{
		{"key that does not parse", []Publisher{{Name: "acme", Keys: []string{ed.Pub, "ssh-ed25519 AAAAnot-a-key acme"}}},
			`gateway.governance.publishers[0].keys[1]: not an SSH public key in authorized_keys format ("ssh-ed25519 AAAA… comment"): ssh: short read`},
		{"private key pasted", []Publisher{{Name: "acme", Keys: []string{"-----BEGIN OPENSSH PRIVATE KEY-----"}}},
			`gateway.governance.publishers[0].keys[0]: not an SSH public key in authorized_keys format ("ssh-ed25519 AAAA… comment"): illegal base64 data at input byte 4`},
		{"empty key", []Publisher{{Name: "acme", Keys: []string{""}}},
			`gateway.governance.publishers[0].keys[0]: not an SSH public key in authorized_keys format ("ssh-ed25519 AAAA… comment"): ssh: no key found`},
		{"RSA 1024", []Publisher{{Name: "acme", Keys: []string{ed.Pub}}, {Name: "old", Keys: []string{rsa1024.Pub}}},
			`gateway.governance.publishers[1].keys[0]: an RSA key of 1024 bits: at least 2048 are required`},
		{"DSA", []Publisher{{Name: "acme", Keys: []string{dsaKey}}},
			`gateway.governance.publishers[0].keys[0]: key type "ssh-dss" is not accepted: use ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, or ssh-rsa of 2048 bits or more`},
		{"options", []Publisher{{Name: "acme", Keys: []string{`cert-authority,principals="a" ` + ed.Pub}}},
			`gateway.governance.publishers[0].keys[0]: options are not accepted before a key: give "TYPE BASE64 [COMMENT]" (got options "cert-authority,principals=\"a\"")`},
		{"two keys in one", []Publisher{{Name: "acme", Keys: []string{ed.Pub + "\n" + p256.Pub}}},
			`gateway.governance.publishers[0].keys[0]: one key per entry: the value holds a line break`},
		{"empty name", []Publisher{{Name: " ", Keys: []string{ed.Pub}}},
			`gateway.governance.publishers[0].name: a publisher needs a name`},
		{"control character", []Publisher{{Name: "acme\x1b[31m", Keys: []string{ed.Pub}}},
			`gateway.governance.publishers[0].name: "acme\x1b[31m" contains a control character`},
		{"duplicate name", []Publisher{{Name: "acme", Keys: []string{ed.Pub}}, {Name: "acme", Keys: []string{p256.Pub}}},
			`gateway.governance.publishers[1].name: "acme" is listed twice (also at gateway.governance.publishers[0].name)`},
		{"no keys", []Publisher{{Name: "acme"}},
			`gateway.governance.publishers[0].keys: a publisher needs at least one key`},
		{"duplicate key", []Publisher{{Name: "acme", Keys: []string{ed.Pub}}, {Name: "beta", Keys: []string{p256.Pub, edType + " " + edB64 + " other comment"}}},
			`gateway.governance.publishers[1].keys[1]: the same key as gateway.governance.publishers[0].keys[0]`},
		{"every problem", []Publisher{{Name: "", Keys: []string{rsa1024.Pub, "x"}}, {Name: "b"}},
			"gateway.governance.publishers[0].name: a publisher needs a name\n" +
				"gateway.governance.publishers[0].keys[0]: an RSA key of 1024 bits: at least 2048 are required\n" +
				`gateway.governance.publishers[0].keys[1]: not an SSH public key in authorized_keys format ("ssh-ed25519 AAAA… comment"): ssh: no key found` + "\n" +
				"gateway.governance.publishers[1].keys: a publisher needs at least one key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Parse(tt.list, prefix)
			if err == nil || err.Error() != tt.want || tr != nil {
				t.Errorf("Parse = %v, %v\nwant %s", tr, err, tt.want)
			}
			var ke *KeyError
			if !errors.As(err, &ke) || !strings.HasPrefix(tt.want, ke.Path+": "+ke.Msg) {
				t.Errorf("the first error is not a *KeyError with the path: %#v", ke)
			}
		})
	}
}

// TestOpenSSHSigns: a SKILL.sig made by `ssh-keygen -Y sign -n skillgate
// -f key FILE` (sha512, its default) and one from stdin with -O
// hashalg=sha256 verify, for each accepted key type.
func TestOpenSSHSigns(t *testing.T) {
	for _, kind := range []string{"ed25519", "ecdsa-p256", "ecdsa-p384", "ecdsa-p521", "rsa3072"} {
		t.Run(kind, func(t *testing.T) {
			k := key(t, kind)
			tr := trust(t, Publisher{Name: "beta", Keys: []string{key(t, "other").Pub}}, Publisher{Name: "acme", Keys: []string{k.Pub}})
			for name, sig := range map[string][]byte{
				"FILE, sha512":  keygenSignFile(t, k, []byte(digest)),
				"stdin, sha256": keygenSign(t, k, Namespace, []byte(digest), "-O", "hashalg=sha256"),
			} {
				by, err := Verify(tr, digest, sig)
				if by != "acme" || err != nil {
					t.Errorf("%s: Verify = %q, %v; want acme\n%s", name, by, err, sig)
				}
				if _, err := Verify(tr, other, sig); !errors.Is(err, ErrContent) {
					t.Errorf("%s: Verify of another digest: %v, want ErrContent", name, err)
				}
			}
		})
	}
}

// TestSkillgateSigns: a signature by Sign verifies with `ssh-keygen -Y
// verify -f allowed_signers -I acme -n skillgate`, and not over other
// content; for ed25519 (deterministic) it is ssh-keygen's byte for byte.
func TestSkillgateSigns(t *testing.T) {
	for _, kind := range []string{"ed25519", "ecdsa-p256", "ecdsa-p384", "ecdsa-p521", "rsa3072"} {
		t.Run(kind, func(t *testing.T) {
			k := key(t, kind)
			sig := signFile(t, k, digest)
			code, out := keygenVerify(t, sig, []byte(digest), k)
			kt := map[string]string{"ed25519": "ED25519", "rsa3072": "RSA"}[kind]
			if kt == "" {
				kt = "ECDSA"
			}
			want := `Good "skillgate" signature for acme with ` + kt + " key " + fp(t, k) + "\n"
			if code != 0 || out != want {
				t.Errorf("ssh-keygen -Y verify: exit %d: %q\nwant 0, %q\n%s", code, out, want, sig)
			}
			if code, out := keygenVerify(t, sig, []byte(digest+"\n"), k); code == 0 {
				t.Errorf("ssh-keygen -Y verify of the digest with a newline: exit 0: %s", out)
			}
			if by, err := Verify(trust(t, Publisher{Name: "acme", Keys: []string{k.Pub}}), digest, sig); by != "acme" || err != nil {
				t.Errorf("Verify = %q, %v", by, err)
			}
			if kind == "ed25519" {
				if want := keygenSignFile(t, k, []byte(digest)); !bytes.Equal(sig, want) {
					t.Errorf("Sign wrote\n%s\nssh-keygen writes\n%s", sig, want)
				}
			}
		})
	}
}

func signFile(t testing.TB, k *sshKey, digest string) []byte {
	t.Helper()
	pem := readFile(t, k.Priv)
	sig, err := Sign(pem, digest)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return sig
}

// rearmor armors a signature blob as ssh-keygen does.
func rearmor(wire []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString(wire)
	var out bytes.Buffer
	out.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(b64) > 70 {
		out.WriteString(b64[:70] + "\n")
		b64 = b64[70:]
	}
	out.WriteString(b64 + "\n-----END SSH SIGNATURE-----\n")
	return out.Bytes()
}

// blobWith returns the wire format of a signature with one field changed.
func blobWith(t testing.TB, sig []byte, change func(b *wireBlob)) []byte {
	t.Helper()
	s, err := sshsig.Unarmor(sig)
	if err != nil {
		t.Fatal(err)
	}
	b := wireBlob{Version: 1, PublicKey: string(s.PublicKey.Marshal()), Namespace: s.Namespace,
		HashAlgorithm: string(s.HashAlgorithm), Signature: string(ssh.Marshal(s.Signature))}
	copy(b.Magic[:], "SSHSIG")
	change(&b)
	return rearmor(ssh.Marshal(b))
}

type wireBlob struct {
	Magic                                         [6]byte
	Version                                       uint32
	PublicKey, Namespace, Reserved, HashAlgorithm string
	Signature                                     string
}

// TestVerifyRejects: each signature that does not verify, with its exact
// error and class; ssh-keygen -Y verify with acme as the allowed signer
// rejects each too (but for the size cap, skillgate's own).
func TestVerifyRejects(t *testing.T) {
	ed, p256 := key(t, "ed25519"), key(t, "ecdsa-p256")
	tr := trust(t, Publisher{Name: "acme", Keys: []string{ed.Pub, p256.Pub}})
	good := keygenSignFile(t, ed, []byte(digest))
	if by, err := Verify(tr, digest, good); by != "acme" || err != nil {
		t.Fatalf("the good signature: %q, %v", by, err)
	}
	otherKey := key(t, "other")
	edFP, otherFP := fp(t, ed), fp(t, otherKey)
	half := good[:len(good)/2]
	lines := strings.Split(string(good), "\n")
	gs, err := Unarmor(good)
	if err != nil {
		t.Fatal(err)
	}
	blob := gs.Marshal()
	oversize := append(append([]byte(nil), good...), bytes.Repeat([]byte("x"), MaxSignatureSize)...)
	for _, tt := range []struct {
		name    string
		sig     []byte
		class   error
		want    string
		openssh bool // ssh-keygen rejects it too
	}{
		{"other content", keygenSignFile(t, ed, []byte(other)), ErrContent,
			"signature does not match the content: ED25519 key " + edFP + " of acme did not sign " + digest, true},
		{"digest with a newline", keygenSignFile(t, ed, []byte(digest+"\n")), ErrContent,
			"signature does not match the content: ED25519 key " + edFP + " of acme did not sign " + digest, true},
		{"unknown key", keygenSignFile(t, otherKey, []byte(digest)), ErrUnknownKey,
			"signed by a key no trusted publisher lists: ED25519 key " + otherFP, true},
		{"wrong namespace", keygenSign(t, ed, "file", []byte(digest)), ErrNamespace,
			`signature for another namespace: "file", not "skillgate"`, true},
		{"hash algorithm md5", blobWith(t, good, func(b *wireBlob) { b.HashAlgorithm = "md5" }), ErrHashAlgorithm,
			`unsupported hash algorithm "md5": only "sha256" and "sha512" are accepted`, true},
		{"version 2", blobWith(t, good, func(b *wireBlob) { b.Version = 2 }), ErrMalformed,
			`not an SSH signature: unsupported signature version 2: expected 1`, true},
		{"no preamble", blobWith(t, good, func(b *wireBlob) { copy(b.Magic[:], "SSHSIH") }), ErrMalformed,
			`not an SSH signature: no SSHSIG preamble`, true},
		{"truncated armor", half, ErrMalformed,
			`not an SSH signature: no line "-----END SSH SIGNATURE-----"`, true},
		{"truncated base64", rearmor(blob[:len(blob)/2]), ErrMalformed,
			"not an SSH signature: the signature's data does not parse (ssh: unmarshal error for field HashAlgorithm of type blob)", true},
		{"garbage", []byte("\x00\xffnot a signature at all"), ErrMalformed,
			`not an SSH signature: it does not start with the line "-----BEGIN SSH SIGNATURE-----"`, true},
		{"empty", nil, ErrMalformed,
			`not an SSH signature: it does not start with the line "-----BEGIN SSH SIGNATURE-----"`, true},
		{"bad base64", []byte("-----BEGIN SSH SIGNATURE-----\nU1NIU0lH*AAA\n-----END SSH SIGNATURE-----\n"), ErrMalformed,
			"not an SSH signature: bad base64 (illegal base64 data at input byte 8)", true},
		{"PEM header", []byte(lines[0] + "\nComment: x\n\n" + strings.Join(lines[1:], "\n")), ErrMalformed,
			"not an SSH signature: bad base64 (illegal base64 data at input byte 7)", true},
		{"CRLF line ends", bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")), ErrMalformed,
			`not an SSH signature: it does not start with the line "-----BEGIN SSH SIGNATURE-----"`, true},
		{"a blank line first", append([]byte("\n"), good...), ErrMalformed,
			`not an SSH signature: it does not start with the line "-----BEGIN SSH SIGNATURE-----"`, true},
		{"another PEM type", bytes.ReplaceAll(good, []byte("SSH SIGNATURE"), []byte("PGP SIGNATURE")), ErrMalformed,
			`not an SSH signature: it does not start with the line "-----BEGIN SSH SIGNATURE-----"`, true},
		{"oversize", oversize, ErrTooLarge,
			fmt.Sprintf("signature over the 8 KiB limit: %d bytes", len(oversize)), false},
		{"just over the cap", bytes.Repeat([]byte("x"), MaxSignatureSize+1), ErrTooLarge,
			"signature over the 8 KiB limit: 8193 bytes", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			by, err := Verify(tr, digest, tt.sig)
			if by != "" || err == nil || err.Error() != tt.want || !errors.Is(err, tt.class) {
				t.Errorf("Verify = %q, %v\nwant %s (%v)", by, err, tt.want, tt.class)
			}
			if tt.openssh {
				if code, out := keygenVerify(t, tt.sig, []byte(digest), ed, p256); code == 0 {
					t.Errorf("ssh-keygen -Y verify accepts it: %s", out)
				}
			}
		})
	}

	// What OpenSSH accepts, Verify accepts: no final newline, text after
	// the END line, base64 in other line lengths.
	for name, sig := range map[string][]byte{
		"no final newline":     bytes.TrimSuffix(good, []byte("\n")),
		"text after END":       append(append([]byte(nil), good...), "trailing words\n"...),
		"64-column base64":     pemArmor(t, good),
		"signed by Sign, p256": signFile(t, p256, digest),
	} {
		if code, out := keygenVerify(t, sig, []byte(digest), ed, p256); code != 0 {
			t.Errorf("%s: ssh-keygen -Y verify rejects it: %s", name, out)
		}
		if by, err := Verify(tr, digest, sig); by != "acme" || err != nil {
			t.Errorf("%s: Verify = %q, %v", name, by, err)
		}
	}

	// No trust, or an empty one: every signature is by an unknown key.
	for _, tr := range []*Trust{nil, {}, trust(t)} {
		if _, err := Verify(tr, digest, good); err == nil || err.Error() != "signed by a key no trusted publisher lists: ED25519 key "+edFP {
			t.Errorf("Verify with trust %v: %v", tr, err)
		}
	}
	// A digest that is not one is the caller's error, no class.
	if _, err := Verify(tr, "sha256:ABC", good); err == nil || err.Error() != `digest "sha256:ABC" is not "sha256:" and 64 lowercase hex digits` ||
		errors.Is(err, ErrContent) || errors.Is(err, ErrMalformed) {
		t.Errorf("bad digest: %v", err)
	}
}

// pemArmor re-armors a signature with encoding/pem's 64 columns.
func pemArmor(t testing.TB, sig []byte) []byte {
	t.Helper()
	s, err := sshsig.Unarmor(sig)
	if err != nil {
		t.Fatal(err)
	}
	return sshsig.Armor(s)
}

// TestSignKeys: what Sign refuses, each with its exact error.
func TestSignKeys(t *testing.T) {
	enc := key(t, "ed25519", "a passphrase")
	for _, tt := range []struct {
		name string
		pem  []byte
		want string
	}{
		{"encrypted", readFile(t, enc.Priv), "the private key is encrypted (it has a passphrase): skillgate reads only an unencrypted key"},
		{"public key", []byte(key(t, "ed25519").Pub + "\n"), "a public key, not a private one: give the private key file (the one without .pub)"},
		{"garbage", []byte("hello"), "not an OpenSSH private key: ssh: no key found"},
		{"RSA 1024", readFile(t, key(t, "rsa1024").Priv), "an RSA key of 1024 bits: at least 2048 are required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := Sign(tt.pem, digest)
			if sig != nil || err == nil || err.Error() != tt.want {
				t.Errorf("Sign = %q, %v\nwant %s", sig, err, tt.want)
			}
		})
	}
	if _, err := Sign(readFile(t, enc.Priv), digest); !errors.Is(err, ErrEncryptedKey) {
		t.Errorf("encrypted: %v is not ErrEncryptedKey", err)
	}
	if _, err := Sign(readFile(t, key(t, "ed25519").Priv), "sha256:abc"); err == nil || err.Error() != `digest "sha256:abc" is not "sha256:" and 64 lowercase hex digits` {
		t.Errorf("bad digest: %v", err)
	}
}

// FuzzVerify: arbitrary bytes as SKILL.sig never panic, verify only as
// the one good signature, and fail with exactly one class of error.
func FuzzVerify(f *testing.F) {
	fz := newFuzz(f)
	for _, seed := range fz.seeds {
		f.Add(seed)
	}
	f.Add(fz.good[:len(fz.good)/2])
	f.Add([]byte("-----BEGIN SSH SIGNATURE-----\n\n-----END SSH SIGNATURE-----\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, sig []byte) { fz.check(t, sig) })
}

// FuzzVerifyBlob is FuzzVerify on the signature's wire format, armored
// well: it reaches the parsing of the blob, the key and the signature,
// which random armor seldom does.
func FuzzVerifyBlob(f *testing.F) {
	fz := newFuzz(f)
	for _, seed := range fz.seeds {
		lines := strings.Split(strings.TrimSpace(string(seed)), "\n")
		blob, err := base64.StdEncoding.DecodeString(strings.Join(lines[1:len(lines)-1], ""))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(blob)
	}
	f.Fuzz(func(t *testing.T, blob []byte) { fz.check(t, rearmor(blob)) })
}

type fuzzCase struct {
	tr       *Trust
	good     []byte
	goodBlob []byte
	seeds    [][]byte
}

func newFuzz(f *testing.F) *fuzzCase {
	ed := key(f, "ed25519")
	good := keygenSignFile(f, ed, []byte(digest))
	gs, err := Unarmor(good)
	if err != nil {
		f.Fatal(err)
	}
	return &fuzzCase{
		tr:       trust(f, Publisher{Name: "acme", Keys: []string{ed.Pub, key(f, "ecdsa-p256").Pub}}),
		good:     good,
		goodBlob: gs.Marshal(),
		seeds: [][]byte{
			good,
			keygenSign(f, ed, "file", []byte(digest)),
			keygenSignFile(f, key(f, "other"), []byte(digest)),
			keygenSignFile(f, key(f, "ecdsa-p256"), []byte(other)),
			blobWith(f, good, func(b *wireBlob) { b.HashAlgorithm = "md5" }),
		},
	}
}

var classes = []error{ErrTooLarge, ErrMalformed, ErrHashAlgorithm, ErrUnknownKey, ErrNamespace, ErrContent}

func (fz *fuzzCase) check(t *testing.T, sig []byte) {
	by, err := Verify(fz.tr, digest, sig)
	if err == nil {
		// The ECDSA key never signed this digest, and an ed25519
		// signature is deterministic and not malleable: whatever the
		// armor, the blob is the good one.
		s, uerr := Unarmor(sig)
		if by != "acme" || uerr != nil || !bytes.Equal(s.Marshal(), fz.goodBlob) {
			t.Fatalf("verified as %q, but not the good signature: %v\n%q", by, uerr, sig)
		}
		return
	}
	n := 0
	for _, c := range classes {
		if errors.Is(err, c) {
			n++
		}
	}
	if n != 1 || by != "" {
		t.Fatalf("error %q (by %q) is in %d classes, want 1", err, by, n)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Package publisher provides signed publishers: the operator's list of
// trusted publishers and their SSH public keys (Parse), the check of a
// skill directory's SKILL.sig against it (Verify), and the signing of a
// directory's digest with an OpenSSH private key (Sign).
//
// A SKILL.sig is an SSH signature in the armored SSHSIG format that
// `ssh-keygen -Y sign -n skillgate` writes, over the message that is
// exactly the directory's governance digest "sha256:<64 hex>" (no newline)
// in the namespace "skillgate". It is checked as `ssh-keygen -Y verify`
// with the publishers as allowed signers would check it; the format is
// github.com/hiddeco/sshsig's.
//
// It is pure: bytes in, a verdict out, no I/O and no clock. It imports no
// package of the project, so that governance, config, gateway and the
// commands may all import it; it must never import any of them.
package publisher

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Fixed parts of the format.
const (
	// FileName is the signature file's name, at the root of a skill
	// directory. The digest it signs leaves it out.
	FileName = "SKILL.sig"
	// Namespace is the SSHSIG namespace of a skill signature (`ssh-keygen
	// -Y sign -n skillgate`).
	Namespace = "skillgate"
	// MaxSignatureSize is the largest SKILL.sig read, in bytes. An
	// armored signature by a 16384-bit RSA key is under 5 KiB.
	MaxSignatureSize = 8 << 10
	// MinRSABits is the smallest RSA key accepted, in bits.
	MinRSABits = 2048
)

// The classes of a signature that does not verify: every error of Verify
// about the signature wraps exactly one of them (test with errors.Is). The
// governance finding bad-signature carries the error's text.
var (
	// ErrTooLarge: the signature is over MaxSignatureSize.
	ErrTooLarge = errors.New("signature over the 8 KiB limit")
	// ErrMalformed: not an armored SSH signature (missing or broken
	// armor, base64 or wire format), or of a version other than 1.
	ErrMalformed = errors.New("not an SSH signature")
	// ErrHashAlgorithm: the message hash is neither sha256 nor sha512.
	ErrHashAlgorithm = errors.New("unsupported hash algorithm")
	// ErrUnknownKey: made by a key no trusted publisher lists.
	ErrUnknownKey = errors.New("signed by a key no trusted publisher lists")
	// ErrNamespace: made for a namespace other than Namespace.
	ErrNamespace = errors.New("signature for another namespace")
	// ErrContent: a listed key's signature, but not of this digest (the
	// directory changed since it was signed, or it signs something else).
	ErrContent = errors.New("signature does not match the content")
)

// Publisher is one trusted publisher as configured: a name, reported as
// signedBy, and its public keys, each one line in authorized_keys format
// ("ssh-ed25519 AAAA… comment", without options).
type Publisher struct {
	Name string   `json:"name"`
	Keys []string `json:"keys"`
}

// Trust is a parsed list of publishers: which publisher each accepted key
// belongs to. The zero value and nil trust no key.
type Trust struct {
	byKey map[string]string // key in wire format → publisher name
}

// Len returns the number of keys trusted.
func (t *Trust) Len() int {
	if t == nil {
		return 0
	}
	return len(t.byKey)
}

// A KeyError is one problem of a publisher list, at its key path
// ("gateway.governance.publishers[0].keys[1]").
type KeyError struct {
	Path string
	Msg  string
}

func (e *KeyError) Error() string { return e.Path + ": " + e.Msg }

// Parse checks a list of publishers and returns the keys it trusts. prefix
// is the list's key path in the configuration, e.g.
// "gateway.governance.publishers": every problem is a *KeyError at the
// path of the name or key at fault, and the error is all of them (joined
// with errors.Join, in list order). A name must not be empty, nor repeat
// another's, nor hold control characters; a publisher has at least one
// key; a key is one authorized_keys line without options, of type
// ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa of at least
// MinRSABits, listed once in the whole list.
func Parse(list []Publisher, prefix string) (*Trust, error) {
	t := &Trust{byKey: map[string]string{}}
	var errs []error
	fail := func(path, format string, args ...any) {
		errs = append(errs, &KeyError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	names := map[string]string{} // name → path of its first listing
	keys := map[string]string{}  // key in wire format → path of its first listing
	for i, p := range list {
		at := fmt.Sprintf("%s[%d]", prefix, i)
		switch {
		case strings.TrimSpace(p.Name) == "":
			fail(at+".name", "a publisher needs a name")
		case strings.IndexFunc(p.Name, unicode.IsControl) >= 0:
			fail(at+".name", "%q contains a control character", p.Name)
		case names[p.Name] != "":
			fail(at+".name", "%q is listed twice (also at %s)", p.Name, names[p.Name])
		default:
			names[p.Name] = at + ".name"
		}
		if len(p.Keys) == 0 {
			fail(at+".keys", "a publisher needs at least one key")
		}
		for j, line := range p.Keys {
			kat := fmt.Sprintf("%s.keys[%d]", at, j)
			pub, err := parseKey(line)
			if err != nil {
				fail(kat, "%v", err)
				continue
			}
			wire := string(pub.Marshal())
			if first, ok := keys[wire]; ok {
				fail(kat, "the same key as %s", first)
				continue
			}
			keys[wire] = kat
			t.byKey[wire] = p.Name
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// keyTypes is what the error of an unsupported key type lists.
const keyTypes = "ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, or ssh-rsa of 2048 bits or more"

// parseKey parses one authorized_keys line and checks its type.
func parseKey(line string) (ssh.PublicKey, error) {
	if strings.ContainsAny(line, "\r\n") {
		return nil, errors.New(`one key per entry: the value holds a line break`)
	}
	pub, _, opts, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		// x/crypto/ssh says "no key found; last parsing error for ignored
		// line: …": the reason is the last part.
		why := err.Error()
		if _, last, ok := strings.Cut(why, "ignored line: "); ok {
			why = last
		}
		return nil, fmt.Errorf(`not an SSH public key in authorized_keys format ("ssh-ed25519 AAAA… comment"): %s`, why)
	}
	if len(opts) > 0 || len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf(`options are not accepted before a key: give "TYPE BASE64 [COMMENT]" (got options %q)`, strings.Join(opts, ","))
	}
	return pub, checkKeyType(pub)
}

// checkKeyType accepts ed25519, the three NIST ECDSA curves and RSA of at
// least MinRSABits.
func checkKeyType(pub ssh.PublicKey) error {
	switch pub.Type() {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		return nil
	case ssh.KeyAlgoRSA:
		ck, ok := pub.(ssh.CryptoPublicKey)
		if !ok {
			return errors.New("an RSA key of unknown size")
		}
		rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey)
		if !ok {
			return errors.New("an RSA key of unknown size")
		}
		if bits := rk.N.BitLen(); bits < MinRSABits {
			return fmt.Errorf("an RSA key of %d bits: at least %d are required", bits, MinRSABits)
		}
		return nil
	}
	return fmt.Errorf("key type %q is not accepted: use %s", pub.Type(), keyTypes)
}

// CheckDigest reports whether digest is a governance digest: "sha256:"
// and 64 lowercase hex digits.
func CheckDigest(digest string) error {
	h, ok := strings.CutPrefix(digest, "sha256:")
	ok = ok && len(h) == 64
	for i := 0; ok && i < len(h); i++ {
		c := h[i]
		ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
	}
	if !ok {
		return fmt.Errorf("digest %q is not \"sha256:\" and 64 lowercase hex digits", digest)
	}
	return nil
}

// Fingerprint is how errors and the CLI name a key: its type as
// ssh-keygen shows it and its SHA256 fingerprint, e.g. "ED25519 key
// SHA256:GUWMzj1N…".
func Fingerprint(pub ssh.PublicKey) string {
	kind := strings.ToUpper(pub.Type())
	switch pub.Type() {
	case ssh.KeyAlgoED25519:
		kind = "ED25519"
	case ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		kind = "ECDSA"
	case ssh.KeyAlgoRSA:
		kind = "RSA"
	}
	return kind + " key " + ssh.FingerprintSHA256(pub)
}

// Verify checks a SKILL.sig against the trusted publishers and returns the
// name of the publisher whose key made it. The signature must be armored
// as `ssh-keygen -Y sign` writes it (the file starts with the line
// "-----BEGIN SSH SIGNATURE-----"; what follows the END line is ignored,
// as OpenSSH ignores it), at most MaxSignatureSize bytes, in namespace
// Namespace, with hash sha256 or sha512, by a key of trust, over the
// message that is exactly digest.
//
// An error about the signature wraps one of ErrTooLarge, ErrMalformed,
// ErrHashAlgorithm, ErrUnknownKey, ErrNamespace and ErrContent, checked in
// that order; a digest that is not "sha256:<64 hex>" is an error of the
// caller (CheckDigest's), none of them.
func Verify(trust *Trust, digest string, sig []byte) (signedBy string, err error) {
	if err := CheckDigest(digest); err != nil {
		return "", err
	}
	s, err := Unarmor(sig)
	if err != nil {
		return "", err
	}
	name, ok := "", false
	if trust != nil {
		name, ok = trust.byKey[string(s.PublicKey.Marshal())]
	}
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrUnknownKey, Fingerprint(s.PublicKey))
	}
	if s.Namespace != Namespace {
		return "", fmt.Errorf("%w: %q, not %q", ErrNamespace, s.Namespace, Namespace)
	}
	if err := sshsig.Verify(strings.NewReader(digest), s, s.PublicKey, s.HashAlgorithm, Namespace); err != nil {
		return "", fmt.Errorf("%w: %s of %s did not sign %s", ErrContent, Fingerprint(s.PublicKey), name, digest)
	}
	return name, nil
}

// Armor lines, as OpenSSH writes them.
const (
	beginLine = "-----BEGIN SSH SIGNATURE-----\n"
	endLine   = "-----END SSH SIGNATURE-----"
	lineWidth = 70
)

// Unarmor decodes an armored SSH signature as OpenSSH's sshsig_dearmor
// does: the data starts with the BEGIN line (LF-terminated); the base64
// runs up to the first "\n" and END line, white space in it ignored; what
// follows the END line is ignored. The wire format is parsed by sshsig; a
// hash algorithm other than sha256 or sha512 is ErrHashAlgorithm, any
// other problem ErrMalformed, and over MaxSignatureSize ErrTooLarge.
func Unarmor(sig []byte) (*sshsig.Signature, error) {
	if len(sig) > MaxSignatureSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(sig))
	}
	body, ok := bytes.CutPrefix(sig, []byte(beginLine))
	if !ok {
		return nil, fmt.Errorf("%w: it does not start with the line %q", ErrMalformed, strings.TrimSuffix(beginLine, "\n"))
	}
	end := bytes.Index(body, []byte("\n"+endLine))
	if end < 0 {
		return nil, fmt.Errorf("%w: no line %q", ErrMalformed, endLine)
	}
	b64 := bytes.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' {
			return -1
		}
		return r
	}, body[:end])
	wire := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode(wire, b64)
	if err != nil {
		return nil, fmt.Errorf("%w: bad base64 (%v)", ErrMalformed, err)
	}
	s, err := sshsig.ParseSignature(wire[:n])
	switch {
	case errors.Is(err, sshsig.ErrUnsupportedHashAlgorithm):
		return nil, fmt.Errorf("%w %q: only %q and %q are accepted", ErrHashAlgorithm, hashAlgorithm(wire[:n]), sshsig.HashSHA256, sshsig.HashSHA512)
	case errors.Is(err, sshsig.ErrInvalidMagicPreamble):
		return nil, fmt.Errorf("%w: no SSHSIG preamble", ErrMalformed)
	case errors.Is(err, sshsig.ErrUnsupportedSignatureVersion):
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	case err != nil:
		return nil, fmt.Errorf("%w: the signature's data does not parse (%v)", ErrMalformed, err)
	case len(s.Signature.Rest) > 0:
		// OpenSSH refuses trailing data after a signature; x/crypto/ssh
		// keeps it for security keys, which are not accepted here.
		return nil, fmt.Errorf("%w: trailing data after the signature", ErrMalformed)
	}
	return s, nil
}

// hashAlgorithm returns the hash algorithm named in a signature blob that
// sshsig refused for it (PROTOCOL.sshsig: "SSHSIG", version, publickey,
// namespace, reserved, hash_algorithm, signature).
func hashAlgorithm(wire []byte) string {
	var b struct {
		Magic                                         [6]byte
		Version                                       uint32
		PublicKey, Namespace, Reserved, HashAlgorithm string
		Signature                                     string
	}
	if ssh.Unmarshal(wire, &b) != nil {
		return "?"
	}
	return b.HashAlgorithm
}

// armor writes a signature as `ssh-keygen -Y sign` writes a .sig file:
// the BEGIN line, base64 in lines of 70 characters, the END line, each
// ending in "\n".
func armor(s *sshsig.Signature) []byte {
	b64 := base64.StdEncoding.EncodeToString(s.Marshal())
	var out bytes.Buffer
	out.WriteString(beginLine)
	for len(b64) > lineWidth {
		out.WriteString(b64[:lineWidth])
		out.WriteByte('\n')
		b64 = b64[lineWidth:]
	}
	out.WriteString(b64)
	out.WriteString("\n" + endLine + "\n")
	return out.Bytes()
}

// ErrEncryptedKey is Sign's error for a private key with a passphrase.
var ErrEncryptedKey = errors.New("the private key is encrypted (it has a passphrase): skillgate reads only an unencrypted key")

// Sign signs digest ("sha256:<64 hex>") with a private key as `ssh-keygen
// -Y sign -n skillgate` does (hash sha512; rsa-sha2-512 for an RSA key)
// and returns the armored signature, the content of SKILL.sig, written as
// ssh-keygen writes it. The key is an unencrypted private key in OpenSSH's
// format (or a PEM one OpenSSH reads) of a type Parse accepts; an
// encrypted one is ErrEncryptedKey, a public key a clear error.
func Sign(privateKeyPEM []byte, digest string) ([]byte, error) {
	signer, err := ParsePrivateKey(privateKeyPEM)
	if err != nil {
		return nil, err
	}
	return SignWith(signer, digest)
}

// ParsePrivateKey reads an unencrypted private key for Sign and checks
// its type as Parse checks a publisher's key.
func ParsePrivateKey(privateKeyPEM []byte) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey(privateKeyPEM)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, ErrEncryptedKey
	case err != nil:
		if _, _, _, _, perr := ssh.ParseAuthorizedKey(privateKeyPEM); perr == nil {
			return nil, errors.New("a public key, not a private one: give the private key file (the one without .pub)")
		}
		return nil, fmt.Errorf("not an OpenSSH private key: %v", err)
	}
	if err := checkKeyType(signer.PublicKey()); err != nil {
		return nil, err
	}
	return signer, nil
}

// SignWith is Sign with a parsed key.
func SignWith(signer ssh.Signer, digest string) ([]byte, error) {
	if err := CheckDigest(digest); err != nil {
		return nil, err
	}
	if err := checkKeyType(signer.PublicKey()); err != nil {
		return nil, err
	}
	s, err := sshsig.Sign(strings.NewReader(digest), signer, sshsig.HashSHA512, Namespace)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return armor(s), nil
}

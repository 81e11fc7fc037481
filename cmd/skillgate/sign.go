package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/publisher"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
	"golang.org/x/crypto/ssh"
)

// maxKeyFile bounds what --key reads: an OpenSSH private key of the
// largest RSA size is under 13 KiB.
const maxKeyFile = 64 << 10

// cmdGovernanceSign is `skillgate governance sign DIR --key FILE`: it
// writes DIR/SKILL.sig, the SSH signature (namespace skillgate) of the
// governance digest of the skill directory DIR without its SKILL.sig, as
// the gateway computes it, and prints the path and the digest signed.
func cmdGovernanceSign(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate governance sign", stderr)
	keyFile := fs.String("key", "", "the publisher's private key: an unencrypted OpenSSH private key file (required)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("governance sign takes one skill directory: governance sign DIR --key FILE")
	}
	if *keyFile == "" {
		return cli.Usagef("--key is required: the publisher's unencrypted OpenSSH private key file")
	}
	dir := pos[0]
	digest, err := skillDirDigest(ctx, dir)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, publisher.FileName)
	signer, err := readSigningKey(*keyFile, digest, out)
	if err != nil {
		return err
	}
	sig, err := publisher.SignWith(signer, digest)
	if err != nil {
		return fmt.Errorf("--key %s: %v", *keyFile, err)
	}
	if err := writeFileAtomic(out, sig); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s signed by %s\n", cli.Printable(out), digest, publisher.Fingerprint(signer.PublicKey()))
	return nil
}

// readSigningKey reads --key. An encrypted key is refused with the
// command that signs digest into out with OpenSSH itself.
func readSigningKey(path, digest, out string) (ssh.Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("--key: %v", err)
	}
	defer f.Close()
	pem, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, cli.Usagef("--key: %v", err)
	}
	if len(pem) > maxKeyFile {
		return nil, cli.Usagef("--key %s: over %d KiB: not a private key file", path, maxKeyFile>>10)
	}
	signer, err := publisher.ParsePrivateKey(pem)
	if errors.Is(err, publisher.ErrEncryptedKey) {
		return nil, cli.Usagef("--key %s: %v; sign with OpenSSH instead, which asks for the passphrase: printf %%s %s | ssh-keygen -Y sign -n %s -f %s > %s",
			path, err, digest, publisher.Namespace, shellQuote(path), shellQuote(out))
	}
	if err != nil {
		return nil, cli.Usagef("--key %s: %v", path, err)
	}
	return signer, nil
}

// signDirPrefix is the store key prefix under which skillDirDigest reads a
// local directory, as the gateway reads skills/{dir}/ of its store. The
// digest does not depend on it: it covers paths relative to the
// directory.
const signDirPrefix = skill.GlobalPrefix + "skill/"

// skillDirStore is a local skill directory as a store holding that one
// skill at signDirPrefix: the directory store lists and reads it, so that
// files are found, followed and refused exactly as in a gateway's store.
type skillDirStore struct{ d *store.Dir }

func (s skillDirStore) List(ctx context.Context, prefix string) ([]store.Object, error) {
	objs, err := s.d.List(ctx, "")
	if err != nil {
		return nil, err
	}
	out := objs[:0]
	for _, o := range objs {
		o.Key = signDirPrefix + o.Key
		if strings.HasPrefix(o.Key, prefix) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s skillDirStore) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	rel, ok := strings.CutPrefix(key, signDirPrefix)
	if !ok {
		return nil, "", fmt.Errorf("get %s: %w", key, store.ErrNotFound)
	}
	return s.d.Get(ctx, rel, etag)
}

// skillDirDigest returns the governance digest of the skill directory dir
// without its SKILL.sig, exactly as the gateway computes it for the
// directory in its store: the files the gateway's loader reads, through
// governance.Digest. A directory with a file the gateway would not read
// (over the caps, unreadable, not a regular file) is refused: the gateway
// holds such a skill whatever it carries, and the digest of an unread file
// covers its store's ETag, which differs from store to store.
func skillDirDigest(ctx context.Context, dir string) (string, error) {
	if fi, err := os.Stat(dir); err != nil {
		return "", cli.Usagef("%s: %s", dir, errText(err))
	} else if !fi.IsDir() {
		return "", cli.Usagef("%s is not a directory: give the skill directory, the one that holds %s", dir, skill.FileName)
	}
	d, err := store.NewDir(dir)
	if err != nil {
		return "", cli.Usagef("%v", err)
	}
	st := skillDirStore{d}
	objs, err := st.List(ctx, "")
	if err != nil {
		return "", cli.Usagef("%s: %v", dir, err)
	}
	// The digest leaves SKILL.sig out.
	kept := objs[:0]
	for _, o := range objs {
		if o.Key != signDirPrefix+publisher.FileName {
			kept = append(kept, o)
		}
	}
	shown := func(msg string) string {
		return strings.ReplaceAll(msg, signDirPrefix, filepath.ToSlash(filepath.Clean(dir))+"/")
	}
	skillKey := signDirPrefix + skill.FileName
	if !slices.ContainsFunc(kept, func(o store.Object) bool { return o.Key == skillKey }) {
		return "", cli.Usagef("%s: no %s in it: give the skill directory, the one that holds %s", dir, skill.FileName, skill.FileName)
	}
	skills, diags := catalog.Classify(kept)
	if len(skills) != 1 || skills[0].Key != skillKey {
		for _, dg := range diags {
			if dg.Location == skillKey {
				return "", cli.Usagef("%s", shown(dg.Message))
			}
		}
		return "", cli.Usagef("%s: %s is not loaded as a skill", dir, skill.FileName)
	}
	loaded, diags, err := catalog.NewLoader(st).Load(ctx, skills)
	if err != nil {
		return "", cli.Usagef("%s: %s", dir, shown(err.Error()))
	}
	if len(loaded) != 1 {
		for _, dg := range diags {
			return "", cli.Usagef("%s", shown(dg.Message))
		}
		return "", cli.Usagef("%s: %s not loaded", dir, skill.FileName)
	}
	in := loaded[0].Input
	for _, f := range in.Files {
		if f.Err != "" {
			return "", cli.Usagef("%s: not signed: the gateway would not read this file (%s) and would hold the skill whatever its signature",
				filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(f.Path, "/"))), f.Err)
		}
	}
	return governance.Digest(&in), nil
}

// writeFileAtomic writes data to path through a temporary file in the
// same directory and a rename, so that a reader (a gateway on this
// directory) never sees half a signature, and a symbolic link at path is
// replaced rather than followed.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package cluster

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"strconv"
	"time"
)

// Records and heartbeats are signed: a value of the bucket is one line
//
//	sg2 <unix ms> <mac>
//
// then the JSON, where mac is the unpadded base64url HMAC-SHA256, keyed
// with the cluster secret, of
//
//	"skillgate cluster record v2\n" bucket "\n" key "\n" <unix ms> "\n" JSON
//
// The key (the node id, or replica/<incarnation>) and the bucket are in
// it, so that a value cannot be moved to another key or bucket; the time
// of writing is in it, and must agree with the time NATS stored the value
// (within a TTL ahead, two TTLs behind), so that a value copied from the
// bucket and written back later is refused. "sg1" was the format before
// issue 23 (records renewed every TTL/3, without an incarnation): a
// replica refuses it, and any other "sg<n>", as a format it does not
// read (RefusedFormat).

// Secret is the cluster secret. It prints, logs and encodes as
// "[redacted]".
type Secret []byte

const redacted = "[redacted]"

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// GoString returns "[redacted]".
func (Secret) GoString() string { return redacted }

// Format writes "[redacted]" whatever the verb.
func (Secret) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// LogValue is "[redacted]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns "[redacted]".
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

const (
	sealVersion = "sg2 "
	sealDomain  = "skillgate cluster record v2\n"
	// sealOverhead bounds the signature line: the version, a time of up
	// to 20 digits, a space, 43 characters of MAC and the newline.
	sealOverhead = len(sealVersion) + 20 + 1 + 43 + 1
)

// sealer signs and checks the records of one bucket.
type sealer struct {
	secret []byte
	bucket string
}

// newHash returns an HMAC of the secret; one per goroutine.
func (s *sealer) newHash() hash.Hash { return hmac.New(sha256.New, s.secret) }

// mac is the signature of body under key, written at ms (decimal digits).
func (s *sealer) mac(h hash.Hash, key string, ms, body []byte) []byte {
	h.Reset()
	io.WriteString(h, sealDomain)
	io.WriteString(h, s.bucket)
	h.Write([]byte{'\n'})
	io.WriteString(h, key)
	h.Write([]byte{'\n'})
	h.Write(ms)
	h.Write([]byte{'\n'})
	h.Write(body)
	return h.Sum(nil)
}

// seal returns the value to write under key: the signature line of body
// written at, then body.
func (s *sealer) seal(h hash.Hash, key string, body []byte, at time.Time) []byte {
	var line [sealOverhead]byte
	b := append(line[:0], sealVersion...)
	msStart := len(b)
	b = strconv.AppendInt(b, at.UnixMilli(), 10)
	ms := b[msStart:]
	mac := s.mac(h, key, ms, body)
	b = append(b, ' ')
	b = base64.RawURLEncoding.AppendEncode(b, mac)
	b = append(b, '\n')
	out := make([]byte, 0, len(b)+len(body))
	return append(append(out, b...), body...)
}

// unseal checks the signature of value under key and when it was
// written: not later than at + skew, not earlier than at - 2 × skew,
// where at is when NATS stored it (the entry's time; clocks may differ by
// up to skew, the TTL, and a write takes moments). It returns the JSON,
// or the reason (Refused*) and why.
func (s *sealer) unseal(h hash.Hash, key string, value []byte, at time.Time, skew time.Duration) ([]byte, string, error) {
	if !bytes.HasPrefix(value, []byte(sealVersion)) {
		if f := sealFormat(value); f != "" {
			return nil, RefusedFormat, formatError(f)
		}
		return nil, RefusedUnsigned, errors.New("not signed: no \"sg2\" signature line (not written by a replica of this cluster)")
	}
	nl := bytes.IndexByte(value, '\n')
	if nl < 0 || nl > sealOverhead {
		return nil, RefusedSignature, errors.New("malformed signature line")
	}
	line, body := value[len(sealVersion):nl], value[nl+1:]
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return nil, RefusedSignature, errors.New("malformed signature line")
	}
	ms, sig := line[:sp], line[sp+1:]
	if len(sig) != base64.RawURLEncoding.EncodedLen(sha256.Size) {
		return nil, RefusedSignature, errors.New("malformed signature line")
	}
	msec, err := strconv.ParseInt(string(ms), 10, 64)
	var got [sha256.Size]byte
	if n, derr := base64.RawURLEncoding.Decode(got[:], sig); err != nil || derr != nil || n != sha256.Size || msec < 0 {
		return nil, RefusedSignature, errors.New("malformed signature line")
	}
	if !hmac.Equal(got[:], s.mac(h, key, ms, body)) {
		return nil, RefusedSignature, errors.New("bad signature: not signed with this cluster's secret under this key (forged, changed, or another cluster's)")
	}
	signed := time.UnixMilli(msec)
	switch {
	case signed.After(at.Add(skew)):
		return nil, RefusedTime, fmt.Errorf("signed %v after it was stored, more than the ttl %v", signed.Sub(at).Round(time.Millisecond), skew)
	case signed.Before(at.Add(-2 * skew)):
		return nil, RefusedTime, fmt.Errorf("signed %v before it was stored, more than twice the ttl %v (written again from an old copy?)", at.Sub(signed).Round(time.Millisecond), skew)
	}
	return body, "", nil
}

// signedAt returns the time of a signature line unseal accepted.
func signedAt(value []byte) time.Time {
	line := value[len(sealVersion):bytes.IndexByte(value, '\n')]
	ms, _ := strconv.ParseInt(string(line[:bytes.IndexByte(line, ' ')]), 10, 64)
	return time.UnixMilli(ms)
}

// sealFormat returns the format of a value signed as some version of
// skillgate signs ("sg" and digits, then a space), "" for anything else.
func sealFormat(value []byte) string {
	if !bytes.HasPrefix(value, []byte("sg")) {
		return ""
	}
	i := 2
	for i < len(value) && i < 12 && value[i] >= '0' && value[i] <= '9' {
		i++
	}
	if i == 2 || i >= len(value) || value[i] != ' ' {
		return ""
	}
	return string(value[:i])
}

// formatError says why a value of format f is refused.
func formatError(f string) error {
	if f == "sg1" {
		return errors.New("format sg1: written by a replica of an earlier version (records renewed every TTL/3), which this replica does not read; run one version on every replica")
	}
	return fmt.Errorf("format %s: not a format this replica reads (sg2 only): a replica of a later version? run one version on every replica", f)
}

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

// Records are signed: a value of the bucket is one line
//
//	sg1 <unix ms> <mac>
//
// then the record's JSON, where mac is the unpadded base64url HMAC-SHA256,
// keyed with the cluster secret, of
//
//	"skillgate cluster record v1\n" bucket "\n" key "\n" <unix ms> "\n" JSON
//
// The key (the node id) and the bucket are in it, so that a record cannot
// be moved to another key or bucket; the time of writing is in it, so that
// a record copied from the bucket and written back later is refused once
// it is older than twice the TTL. Every write of a record (renewals
// included) is signed again with its own time: a renewal changes only the
// signature line, and the watch tells a renewal from a change by the JSON.

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
	sealVersion = "sg1 "
	sealDomain  = "skillgate cluster record v1\n"
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

// unseal checks the signature of value under key and when it was written:
// not later than now + skew, not earlier than now - 2 × skew (skew is the
// TTL: a record is rewritten every TTL/3, and clocks may differ by up to
// it). It returns the record's JSON, or the reason (Refused*) and why.
func (s *sealer) unseal(h hash.Hash, key string, value []byte, now time.Time, skew time.Duration) ([]byte, string, error) {
	if !bytes.HasPrefix(value, []byte(sealVersion)) {
		return nil, RefusedUnsigned, errors.New("not signed: no \"sg1\" signature line (not written by a replica of this cluster)")
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
	at := time.UnixMilli(msec)
	switch {
	case at.After(now.Add(skew)):
		return nil, RefusedTime, fmt.Errorf("signed %v ahead of this replica's clock, more than the ttl %v", at.Sub(now).Round(time.Millisecond), skew)
	case at.Before(now.Add(-2 * skew)):
		return nil, RefusedTime, fmt.Errorf("signed %v ago, more than twice the ttl %v (written again from an old copy?)", now.Sub(at).Round(time.Millisecond), skew)
	}
	return body, "", nil
}

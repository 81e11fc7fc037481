// Package cluster shares the nodes each gateway replica holds with the
// other replicas, through a NATS JetStream key-value bucket: a replica
// publishes a record per node it holds (key: the node id, value: the
// node's host facts, connectedAt, factsAt, the replica and the incarnation
// of it that wrote the record) when the node connects, when its facts
// change and when it leaves (a delete), never while nothing changes; it
// keeps one heartbeat (key replica/<incarnation>) renewed every TTL/3, and
// watches the bucket for the records and heartbeats of the others. A
// replica whose heartbeat lapses for a TTL has its nodes dropped by every
// other replica at once, unless another incarnation of the same name (a
// restart) lives to take them back. NATS lives only in this package; the
// gateway sees Member and Handler.
//
// The bucket is not trusted: every record and heartbeat is signed with
// the cluster secret (seal.go), and a value that is not, or that no
// replica would write, is refused and counted (Member.Refused). The
// bucket's settings are checked, and it is looked at every TTL/4, so that
// a bucket deleted, made again or refusing writes shows in State.
//
// Every replica computes interest and skills from the same bucket and
// config, so they agree without coordinating: the bucket is the only
// shared state, and the newest connection of a node id wins everywhere
// (Newer).
package cluster

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/skillgate/skillgate/protocol"
)

// Defaults of the cluster settings (gateway.cluster.*).
const (
	DefaultBucket = "skillgate_nodes"
	DefaultTTL    = 10 * time.Second

	// MinTTL is the shortest gateway.cluster.ttl accepted: heartbeats are
	// renewed every TTL/3, and lapses are looked for every TTL/20.
	MinTTL = time.Second

	// MaxTTL is the longest TTL a heartbeat may declare.
	MaxTTL = 24 * time.Hour

	// DefaultMaxRemote is gateway.cluster.maxRemoteNodes's default: the
	// other replicas' records a replica holds at most; past it new ones
	// are refused (counted, logged once). MaxRemoteLimit is the highest
	// value accepted.
	DefaultMaxRemote = 100_000
	MaxRemoteLimit   = 1_000_000
)

// Limits of records and of the bucket.
const (
	// MaxRecordBytes bounds one record as written and as read (signature
	// line included): a record over it is refused (counted, logged),
	// never decoded, and the bucket a replica creates refuses larger
	// values. A replica's record lists only names of the interest, so it
	// is bounded by the interest's own limits (eligibility.MaxInterestBytes
	// of env names and of binary names, eligibility.MaxInterestNames each:
	// 2 × 256 KiB, 8 bytes of JSON a name more at most) and the node's
	// identity; the gateway's tests check the sum stays under it.
	MaxRecordBytes = 560 << 10

	// BucketMaxBytes is the size a replica gives the bucket it creates:
	// about 300,000 records of a typical 800 bytes. Past it NATS refuses
	// writes (the replicas say so in /readyz) instead of growing its
	// memory without end.
	BucketMaxBytes = 256 << 20

	// MinSecretBytes is the shortest cluster secret accepted.
	MinSecretBytes = 32
)

// Reasons a record of the bucket is refused: the label values of the
// gateway's skillgate_cluster_records_refused_total.
const (
	RefusedUnsigned  = "unsigned"  // no signature line: not written by a replica of this version
	RefusedSignature = "signature" // not signed with this cluster's secret, or changed since, or under another key
	RefusedTime      = "time"      // signed too far ahead of this replica's clock or too long ago, or a time no replica writes
	RefusedInvalid   = "invalid"   // not a record, facts a node's connect would be refused for, or under another id's key
	RefusedSize      = "size"      // over MaxRecordBytes
	RefusedFull      = "full"      // a new node past gateway.cluster.maxRemoteNodes
	RefusedFormat    = "format"    // signed in a format this replica does not read (sg1: a replica of an earlier version)
)

// Record is one node as the replica holding it publishes it: the host
// facts as reported (the names of the holding replica's interest), when
// the connection began, when the facts were last reported (nil before the
// first facts.update: such a node is listed but counts for no skill), and
// the replica.
type Record struct {
	protocol.HostFacts
	// BinsAsked names the list of binaries the node was asked, by a digest
	// of it (the gateway's): HostBinStatus lists the ones present, every
	// other name of that list is absent, and a name outside it was not
	// asked yet: not known. Empty before the first facts.update.
	BinsAsked   string     `json:"binsAsked,omitempty"`
	Replica     string     `json:"replica"`
	ConnectedAt time.Time  `json:"connectedAt"`
	FactsAt     *time.Time `json:"factsAt"`
}

// maxBinsAsked bounds Record.BinsAsked.
const maxBinsAsked = 64

// wireRecord is a Record as the bucket holds it: with the incarnation of
// the replica that wrote it (Member's, random at each Join), which tells
// a record of a replica's current run from one of its run before, or of
// another process started under the same name.
type wireRecord struct {
	Record
	Incarnation string `json:"incarnation,omitempty"`
}

// HeartbeatPrefix starts the key of a replica's heartbeat:
// "replica/<incarnation>". No node id has such a key (Key never makes a
// "/").
const HeartbeatPrefix = "replica/"

// heartbeat is the value of a replica's heartbeat key, rewritten every
// TTL/3 while it runs (signed like a record).
type heartbeat struct {
	Replica     string `json:"replica"`
	Incarnation string `json:"incarnation"`
	// TTLMs is the replica's gateway.cluster.ttl, in ms: the others drop
	// its nodes when no heartbeat of it came for that long.
	TTLMs int64 `json:"ttlMs"`
	// Since is when its run of heartbeats without a gap of more than TTL/2
	// began (unix ms). A replica that had such a gap writes every record
	// again after it: the others may have dropped its nodes meanwhile.
	Since int64 `json:"since"`
}

// validate checks a heartbeat read under key, signed at signed.
func (hb *heartbeat) validate(key string, signed time.Time, skew time.Duration) error {
	if err := ValidateReplica(hb.Replica); err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	if err := validateIncarnation(hb.Incarnation); err != nil || hb.Incarnation == "" {
		return fmt.Errorf("incarnation: %q is not an incarnation", clip(hb.Incarnation))
	}
	if key != HeartbeatPrefix+hb.Incarnation {
		return fmt.Errorf("the heartbeat of incarnation %q belongs under key %q", clip(hb.Incarnation), HeartbeatPrefix+clip(hb.Incarnation))
	}
	if ttl := time.Duration(hb.TTLMs) * time.Millisecond; ttl < MinTTL || ttl > MaxTTL {
		return fmt.Errorf("ttlMs: %d is not from %d to %d", hb.TTLMs, MinTTL.Milliseconds(), MaxTTL.Milliseconds())
	}
	if since := time.UnixMilli(hb.Since); hb.Since <= 0 || since.After(signed.Add(skew)) {
		return fmt.Errorf("%w: since %d is not a time before it was signed", errTime, hb.Since)
	}
	return nil
}

// validateIncarnation checks an incarnation as written in a record (""
// allowed: then the record's replica name alone names its writer).
func validateIncarnation(inc string) error {
	if len(inc) > 64 {
		return fmt.Errorf("is %d bytes, more than 64", len(inc))
	}
	for i := 0; i < len(inc); i++ {
		if c := inc[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%q: only letters, digits, - and _ are allowed", clip(inc))
		}
	}
	return nil
}

// minRecordTime is the earliest connectedAt or factsAt a record may hold.
var minRecordTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// Validate checks a record read from the bucket as a node's connect and
// facts are checked: the facts, the replica name, and its times: set,
// not before 1970, and not later than now + skew (the slack allowed
// between replicas' clocks; a replica writes times of its own clock, in
// the past). A time out of years 0–9999 in UTC, which no JSON encoder
// writes back, is thus refused too.
func (r *Record) Validate(now time.Time, skew time.Duration) error {
	if err := r.HostFacts.Validate(); err != nil {
		return err
	}
	// Roles are kept as the node sent them: bound them as capabilities
	// are.
	if len(r.Roles) > len(protocol.Roles)*4 {
		return fmt.Errorf("roles: %d entries, more than %d", len(r.Roles), len(protocol.Roles)*4)
	}
	if err := ValidateReplica(r.Replica); err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	if len(r.BinsAsked) > maxBinsAsked {
		return fmt.Errorf("binsAsked: %d bytes, more than %d", len(r.BinsAsked), maxBinsAsked)
	}
	if r.ConnectedAt.IsZero() {
		return errors.New("connectedAt: is missing")
	}
	if err := checkTime(r.ConnectedAt, now, skew); err != nil {
		return fmt.Errorf("connectedAt: %w", err)
	}
	if r.FactsAt != nil {
		if err := checkTime(*r.FactsAt, now, skew); err != nil {
			return fmt.Errorf("factsAt: %w", err)
		}
	}
	return nil
}

// errTime marks a record refused for one of its times.
var errTime = errors.New("time out of range")

func checkTime(t, now time.Time, skew time.Duration) error {
	switch {
	case t.Before(minRecordTime):
		return fmt.Errorf("%w: %s is before 1970", errTime, clip(t.UTC().String()))
	case t.After(now.Add(skew)):
		return fmt.Errorf("%w: %s is more than %v ahead of this replica's clock", errTime, clip(t.UTC().String()), skew)
	}
	return nil
}

// Newer reports whether a is a newer connection than b of the same node
// id: the later connectedAt, and on a tie the greater replica name, so
// that every replica decides the same way.
func Newer(a, b *Record) bool {
	if c := a.ConnectedAt.Compare(b.ConnectedAt); c != 0 {
		return c > 0
	}
	return a.Replica > b.Replica
}

// ValidateReplica checks a replica name: it is shown in /v1/nodes and
// logs, and names the NATS connection.
func ValidateReplica(name string) error {
	switch {
	case name == "":
		return errors.New("is empty")
	case len(name) > 128:
		return fmt.Errorf("is %d bytes, more than 128", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)) {
			return fmt.Errorf("%q: only letters, digits and - _ . : are allowed", name)
		}
	}
	return nil
}

// Key is the bucket key of a node id. Ids made only of the characters a
// key allows (letters, digits, - and _, dot-separated parts) are their own
// key; any other id (non-ASCII, spaces, "=") is "=" followed by its
// unpadded base64url form, which no id of the first kind starts with.
func Key(id string) string {
	if plainKey(id) {
		return id
	}
	return "=" + base64.RawURLEncoding.EncodeToString([]byte(id))
}

func plainKey(id string) bool {
	if id == "" || id[0] == '.' || id[len(id)-1] == '.' || strings.Contains(id, "..") {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Config is how a replica joins the cluster.
type Config struct {
	// URL is one or more NATS server URLs, comma-separated (nats://,
	// tls://; user:password@ in a URL works as in every NATS client).
	URL     string
	Replica string        // this replica's name (ValidateReplica)
	Bucket  string        // DefaultBucket if empty
	TTL     time.Duration // DefaultTTL if zero

	// Secret signs this replica's records and authenticates the others':
	// every replica of a cluster has the same, at least MinSecretBytes
	// long. Required: a record not signed with it is refused. It never
	// appears in an error, a log line or State.
	Secret Secret

	// MaxRemote bounds the other replicas' records held
	// (gateway.cluster.maxRemoteNodes); DefaultMaxRemote if zero.
	MaxRemote int

	// Credentials, the usual NATS ways: a creds file (JWT and seed), an
	// nkey seed file, user and password, or a token. TLS: a CA file, and a
	// client certificate and key for servers that ask for one.
	CredsFile, NKeyFile       string
	User, Password, Token     string
	CAFile, CertFile, KeyFile string

	Logger *slog.Logger
}

// Handler receives the other replicas' nodes (and records of this
// replica's name written by another incarnation of it: a run before, or
// another process of the same name; they are treated alike until their
// node connects here, or they are deleted a TTL after that incarnation's
// heartbeat lapsed). Its methods are called from one goroutine, in bucket
// order, and must not call back into the Member.
type Handler interface {
	// Put delivers a record that is new or changed; a record read again
	// unchanged (a new watch of the bucket) is not delivered.
	Put(rec *Record)
	// Delete says the record of id is gone: withdrawn by its replica,
	// replaced by a record this replica holds, or its replica's heartbeat
	// lapsed for a TTL (also while NATS is unreachable: a replica never
	// keeps facts it can no longer confirm).
	Delete(id string)
	// DeleteMany is Delete of many records at once: those of a replica
	// whose heartbeat lapsed, or those a new watch of the bucket did not
	// read again.
	DeleteMany(ids []string)
}

// State is a member's connection to NATS, for /readyz.
type State struct {
	Connected bool
	Reason    string // why not connected (or not yet in sync); "" when Connected
	Remote    int    // records of other replicas held
	Local     int    // records of this replica published
	Replicas  int    // other replicas (incarnations) whose heartbeat is live
}

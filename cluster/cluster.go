// Package cluster shares the nodes each gateway replica holds with the
// other replicas, through a NATS JetStream key-value bucket: a replica
// publishes a record per node it holds (key: the node id, value: the
// node's host facts, connectedAt, factsAt and the replica), renews it well
// within the bucket's TTL, withdraws it when the node leaves, and watches
// the bucket for the records of the others. NATS lives only in this
// package; the gateway sees Member and Handler.
//
// The bucket is not trusted: every record is signed with the cluster
// secret (seal.go), and a record that is not, or that no replica would
// write, is refused and counted (Member.Refused). The bucket's settings
// are checked, and it is looked at every TTL/4, so that a bucket deleted,
// made again or refusing writes shows in State.
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

	// MinTTL is the shortest gateway.cluster.ttl accepted: records are
	// renewed every TTL/3, and the expiry sweep runs every TTL/20.
	MinTTL = time.Second

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
// replica's name that it does not hold: left over from a previous run of
// it, they are treated alike until they expire or their node connects
// again). Its methods are called from one goroutine, in bucket order, and
// must not call back into the Member.
type Handler interface {
	// Put delivers a record that is new or changed; renewals of an
	// unchanged record are not delivered.
	Put(rec *Record)
	// Delete says the record of id is gone: withdrawn by its replica,
	// replaced by a record this replica holds, or not renewed within the
	// TTL (also while NATS is unreachable: a replica never keeps facts it
	// can no longer confirm).
	Delete(id string)
}

// State is a member's connection to NATS, for /readyz.
type State struct {
	Connected bool
	Reason    string // why not connected (or not yet in sync); "" when Connected
	Remote    int    // records of other replicas held
	Local     int    // records of this replica published
}

// Package cluster shares the nodes each gateway replica holds with the
// other replicas, through a NATS JetStream key-value bucket: a replica
// publishes a record per node it holds (key: the node id, value: the
// node's host facts, connectedAt, factsAt and the replica), renews it well
// within the bucket's TTL, withdraws it when the node leaves, and watches
// the bucket for the records of the others. NATS lives only in this
// package; the gateway sees Member and Handler.
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

	// MaxRecordBytes bounds one record as written and as read: a record
	// over it is refused (logged), never decoded.
	MaxRecordBytes = 1 << 20

	// MaxRemote bounds the other replicas' records a replica holds; past
	// it new records are refused and logged once.
	MaxRemote = 1_000_000
)

// Record is one node as the replica holding it publishes it: the host
// facts as reported (the names of the holding replica's interest), when
// the connection began, when the facts were last reported (nil before the
// first facts.update: such a node is listed but counts for no skill), and
// the replica.
type Record struct {
	protocol.HostFacts
	Replica     string     `json:"replica"`
	ConnectedAt time.Time  `json:"connectedAt"`
	FactsAt     *time.Time `json:"factsAt"`
}

// Validate checks a record read from the bucket as a node's connect and
// facts are checked: the facts, the replica name and connectedAt.
func (r *Record) Validate() error {
	if err := r.HostFacts.Validate(); err != nil {
		return err
	}
	if err := ValidateReplica(r.Replica); err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	if r.ConnectedAt.IsZero() {
		return errors.New("connectedAt: is missing")
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

// Package api declares the JSON bodies of the gateway's HTTP API that more
// than one package writes or reads: the gateway writes them; skillgate
// status and eval, and the node (an upgrade's refusal), read them. Each
// shape is declared here once. DESIGN.md's shapes are the contract: the
// names and the order of the fields here are what the gateway writes.
//
// It imports only protocol (the host facts a node is listed with) and the
// standard library, and does no I/O, so that a client imports the shapes
// without the gateway: the node, which links no server code, reads Error.
package api

import (
	"time"

	"github.com/skillgate/skillgate/protocol"
)

// Error is the body of every error answer of the gateway's HTTP API
// (4xx and 5xx, the /v1/nodes/connect upgrade's refusal included):
// {"error": "what is wrong"}.
type Error struct {
	Error string `json:"error"`
}

// Node is one node of GET /v1/nodes: its host facts as reported, when its
// connection began and when it last reported facts (RFC 3339, to the
// second; FactsAt is null until its first facts.update: such a node is
// listed but counts for no skill), and the gateway replica holding it
// (the process's replica name without a cluster). ?fields= selects among
// these fields by their JSON names; the gateway writes them in this
// order, none omitted.
type Node struct {
	protocol.HostFacts
	ConnectedAt time.Time  `json:"connectedAt"`
	FactsAt     *time.Time `json:"factsAt"`
	Replica     string     `json:"replica"`
}

// NodesPage is the answer of GET /v1/nodes: a page of nodes sorted by id,
// and the cursor of the next page (absent on the last one).
type NodesPage struct {
	Nodes []Node `json:"nodes"`
	Next  string `json:"next,omitempty"`
}

// Ready is the answer of GET /readyz (200 when Ready, else 503). The probe
// is open: Error says what is wrong and Hint what to check, both without
// an endpoint, a path or OS error text.
type Ready struct {
	Ready bool   `json:"ready"`
	Store string `json:"store"` // s3://BUCKET or "directory"
	// Loaded: a snapshot of the store is in service (else the agent
	// endpoints answer 503). The gateway always writes it; nil when read
	// from a gateway that predates it.
	Loaded         *bool   `json:"loaded,omitempty"`
	SnapshotAgeSec float64 `json:"snapshotAgeSeconds"`
	Error          string  `json:"error,omitempty"`
	Hint           string  `json:"hint,omitempty"`
	Nodes          int     `json:"nodes"` // connected to the answering process
	// With a cluster: "ok", or why this replica does not see the other
	// replicas' nodes (then not ready); and how many it holds of theirs.
	Cluster     string `json:"cluster,omitempty"`
	RemoteNodes *int   `json:"remoteNodes,omitempty"`
}

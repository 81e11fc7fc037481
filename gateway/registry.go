package gateway

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/bitset"
	"github.com/skillgate/skillgate/protocol"
)

// registry is the gateway's set of connected nodes: which connection holds
// each node id, since when, and the host facts each node reported. It owns
// the rules of membership:
//
//   - at most max nodes are connected (gateway.maxNodes); lowering max
//     refuses new nodes but disconnects none;
//   - a connection with the id of a connected node replaces it at once,
//     even on a full gateway, and a replaced connection never removes its
//     successor;
//   - a node has a host (counts for prompt builds) from its first
//     facts.update on, and keeps only the names the gateway asked for.
//
// It is part of the fleet (fleet.go), guarded by Server.mu with the live
// eligibility counts, since one node event changes both. Its methods must be
// called with Server.mu held for writing; its fields may be read under the
// read lock. The Server methods below take the lock and apply each event
// to the counts as well.
type registry struct {
	nodes  map[string]*nodeConn
	remote map[string]*remoteNode   // other replicas' nodes (cluster.go); never an id of nodes
	gen    uint64                   // bumped on every change; keys the GET /v1/nodes cache
	max    int                      // gateway.maxNodes in force
	gauge  prometheus.Gauge         // skillgate_nodes_connected
	hosts  *eligibility.HostBuilder // builds every node's host, local or remote; equal lists shared
}

// nodeRecord is what the registry holds of one connected node, kept in
// its nodeConn. Guarded by Server.mu. The reported binaries are two
// bitsets over the (shared, sorted) interest list they answered: a map per
// node over hundreds of asked names would dominate the gateway's memory.
type nodeRecord struct {
	info        protocol.NodeInfo
	roles, caps []string          // info's, sorted without repeats
	env         []string          // asked env names set on the node: strings of the interest, sorted
	binIn       *interestIndex    // the interest whose Bins the bitsets index
	binReported bitset.Set        // the names the node answered (asked of it): present or absent
	binTrue     bitset.Set        // the names it has
	host        *eligibility.Host // nil until the first facts.update
	connectedAt time.Time
	factsAt     time.Time
	warned      bool // an unasked name was already logged
	// carried: the answers are the replaced connection's (carry), not yet
	// this one's own.
	carried bool
	// ver is the registry's gen when the record last changed (connect,
	// facts), so that GET /v1/nodes re-encodes only changed nodes.
	ver uint64
}

// errGatewayFull refuses a connect past maxNodes.
var errGatewayFull = errors.New("gateway full: it holds gateway.maxNodes nodes; retry later or connect to another gateway")

// errTokenRevoked refuses a connect whose token a reload revoked since it
// was checked.
var errTokenRevoked = errors.New("token revoked")

// add registers c as the node info describes and returns the connection it
// replaces (nil if none), or errGatewayFull.
func (r *registry) add(c *nodeConn, info protocol.NodeInfo, now time.Time) (replaced *nodeConn, err error) {
	replaced = r.nodes[c.id]
	if replaced == nil && len(r.nodes) >= r.max {
		return nil, errGatewayFull
	}
	c.setInfo(info, now)
	r.nodes[c.id] = c
	r.changed()
	c.ver = r.gen
	return replaced, nil
}

// remove unregisters c unless a newer connection replaced it, and reports
// whether it did.
func (r *registry) remove(c *nodeConn) bool {
	if r.nodes[c.id] != c {
		return false
	}
	delete(r.nodes, c.id)
	r.changed()
	return true
}

// report applies a facts.update of c, keeping only the names of interest
// (the interest in force, which the update answers). The update is read
// as scanned, name by name into bit positions of the interest lists, and
// the host is built from those: no map and no copy of a name. It returns
// c's host before and after: the same pointer when nothing changed, so
// that the caches stay. ok is false when c is not registered (replaced, or
// gone).
func (r *registry) report(c *nodeConn, u *protocol.FactsScan, in *interestIndex, now time.Time) (old, cur *eligibility.Host, ok bool) {
	if r.nodes[c.id] != c {
		return nil, nil, false
	}
	var unasked []string
	// Sized once for the interest: grown a word at a time, each set was
	// allocated up to four times.
	envSet := make(bitset.Set, 0, words(len(in.Env)))
	reported := make(bitset.Set, 0, words(len(in.Bins)))
	present := make(bitset.Set, 0, words(len(in.Bins)))
	for _, e := range u.Env {
		if i, ok := in.env[string(e)]; ok {
			envSet.Add(i)
		} else {
			unasked = append(unasked, string(e))
		}
	}
	next := 0 // where the name after the last one found would be
	for k, b := range u.Bins {
		// Nodes answer in the interest's (sorted) order, as encoding/json
		// writes a map: the next name is checked before the map.
		i, asked := next, next < len(in.Bins) && in.Bins[next] == string(b)
		if !asked {
			i, asked = in.bins[string(b)]
		}
		next = i + 1
		if !asked {
			unasked = append(unasked, string(b))
			continue
		}
		reported.Add(i)
		if u.Present[k] {
			present.Add(i)
		} else {
			present.Remove(i) // a repeated name: the last counts
		}
	}
	if len(unasked) > 0 && !c.warned {
		c.warned = true
		slices.Sort(unasked)
		unasked = slices.Compact(unasked)
		if len(unasked) > 20 {
			unasked = unasked[:20]
		}
		c.log.Warn("protocol: node reported names the gateway did not ask for; ignored", "names", unasked)
	}
	c.factsAt = now.UTC()
	c.carried = false
	r.gen++
	c.ver = r.gen
	old, cur = c.apply(r.hosts, in, envSet, reported, present)
	return old, cur, true
}

// carryFor bounds how long a newer connection of a node counts with the
// answers of the connection it replaced, without a facts.update of its
// own (a node agent sends its first one at once).
const carryFor = 10 * time.Second

// carry gives n, a newer connection of a node, the answers prev (the
// connection it replaces on another replica; prev.host is not nil)
// reported, until n's own first facts.update: a node that moves to
// another replica keeps its skills offered through the move, instead of
// counting for none for a moment on every replica. The identity
// (OS, roles, capabilities) is n's. It returns n's host: prev's when the
// identity is the same (its index entry and the caches stay).
func (n *nodeRecord) carry(hosts *eligibility.HostBuilder, prev *nodeRecord) *eligibility.Host {
	n.env, n.binIn, n.binReported, n.binTrue, n.factsAt = prev.env, prev.binIn, prev.binReported, prev.binTrue, prev.factsAt
	n.carried = true
	h := prev.host
	if h.OS != n.info.OS || !slices.Equal(h.Roles, n.roles) || !slices.Equal(h.Capabilities, n.caps) {
		h = hosts.Build(n.info.ID, &eligibility.Facts{OS: n.info.OS, Roles: n.roles, Capabilities: n.caps, Env: prev.host.Env, Bins: prev.host.Bins})
		n.env, n.roles, n.caps = h.Env, h.Roles, h.Capabilities
	}
	n.host = h
	return h
}

// endCarry drops the carried answers of c, carryFor after its connect,
// unless c reported facts of its own meanwhile (or left): it then counts
// for no skill, as a connection that never reported. A timer, not a
// goroutine: a restarted replica's whole fleet moves back at once.
func (s *Server) endCarry(c *nodeConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reg.nodes[c.id] != c || !c.carried || c.host == nil {
		return
	}
	c.log.Warn("node sent no facts.update after connecting; the answers of its previous connection no longer count", "after", carryFor.String())
	old := c.host
	c.host, c.env, c.binIn, c.binReported, c.binTrue, c.factsAt, c.carried = nil, nil, nil, nil, nil, time.Time{}, false
	s.reg.gen++
	c.ver = s.reg.gen
	s.hostChangedLocked(c.id, old, nil)
	s.publishLocked(c)
}

// words is the number of 64-bit words of a bitset over n positions.
func words(n int) int { return (n + 63) / 64 }

// setInfo sets the node's identity, as connect (or another replica's
// record) gave it, and when its connection began.
func (n *nodeRecord) setInfo(info protocol.NodeInfo, connectedAt time.Time) {
	info.OS = protocol.NormalizeOS(info.OS) // validated in this form
	n.info = info
	// In the form eligibility.Host keeps, once per connection: every Host
	// of the node shares them.
	n.roles = eligibility.SortedSet(info.Roles)
	n.caps = eligibility.SortedSet(info.Capabilities)
	n.connectedAt = connectedAt.UTC()
}

// apply sets the node's reported names, as positions in the interest in
// force, and returns its host before and after: the same pointer when
// nothing it holds changed (a change of the interest, or of which names
// were asked, alone keeps the host, and so the caches).
func (n *nodeRecord) apply(hosts *eligibility.HostBuilder, in *interestIndex, envSet, reported, present bitset.Set) (old, cur *eligibility.Host) {
	names := in.Bins
	env := make([]string, 0, envSet.Len())
	envSet.Each(func(i int) { env = append(env, in.Env[i]) }) // sorted, as the interest is
	old = n.host
	if old != nil && slices.Equal(n.env, env) && n.binIn == in &&
		n.binReported.Equal(reported) && n.binTrue.Equal(present) {
		return old, old
	}
	bins := make([]string, 0, present.Len())
	present.Each(func(i int) { bins = append(bins, names[i]) })
	if reported.Len() == len(names) {
		reported = in.all // one set for every node that answered all of in: a node's sets are replaced, never changed
	}
	n.binIn, n.binReported, n.binTrue = in, reported, present
	if old != nil && slices.Equal(old.Env, env) && slices.Equal(old.Bins, bins) {
		n.env = old.Env
		return old, old
	}
	h := hosts.Build(n.info.ID, &eligibility.Facts{OS: n.info.OS, Roles: n.roles, Capabilities: n.caps, Env: env, Bins: bins})
	n.host = h
	// The record holds the host's lists, which look-alike nodes share,
	// instead of its own copies of equal names.
	n.env, n.roles, n.caps = h.Env, h.Roles, h.Capabilities
	if slices.Equal(n.info.Roles, h.Roles) {
		n.info.Roles = h.Roles
	}
	if slices.Equal(n.info.Capabilities, h.Capabilities) {
		n.info.Capabilities = h.Capabilities
	}
	return old, h
}

// askedDigest is binsDigest of the binaries the node answered: what its
// record says it was asked (cluster.Record.BinsAsked).
func (n *nodeRecord) askedDigest() string {
	if n.binIn == nil {
		return binsDigest(nil)
	}
	if n.binReported.Len() == len(n.binIn.Bins) {
		return n.binIn.asked // it answered the whole interest: the usual case
	}
	names := make([]string, 0, n.binReported.Len())
	n.binReported.Each(func(i int) { names = append(names, n.binIn.Bins[i]) })
	return binsDigest(names)
}

// binsDigest names a sorted list of binary names in a record: the first
// 96 bits of the SHA-256 of the names, each followed by a newline, in
// unpadded base64url (16 characters). Every replica computes the same
// interest from the same store and config, so a replica finds the list a
// record's digest names among the interests it had lately.
func binsDigest(names []string) string {
	h := sha256.New()
	for _, n := range names {
		io.WriteString(h, n)
		h.Write([]byte{'\n'})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// interestIndex is the interest in force with the position of each name,
// so that a reported name is found with one map lookup that copies
// nothing. Rebuilt when the interest changes.
type interestIndex struct {
	protocol.Interest
	env, bins map[string]int
	asked     string // binsDigest(Bins)
	// all has every position of Bins: the reported set of each node that
	// answered the whole interest (the usual case), shared, never changed.
	all bitset.Set
}

func newInterestIndex(in protocol.Interest) *interestIndex {
	x := &interestIndex{Interest: in, env: make(map[string]int, len(in.Env)), bins: make(map[string]int, len(in.Bins)), asked: binsDigest(in.Bins)}
	for i, n := range in.Env {
		x.env[n] = i
	}
	for i, n := range in.Bins {
		x.bins[n] = i
		x.all.Add(i)
	}
	return x
}

// changed records a change of membership: the cached GET /v1/nodes answer
// is stale and the gauge moves.
func (r *registry) changed() {
	r.gen++
	r.gauge.Set(float64(len(r.nodes)))
}

// factsLocked returns the node's host facts as reported. Server.mu must be
// held.
func (n *nodeRecord) factsLocked() protocol.HostFacts {
	f := n.info.HostFacts()
	if n.env != nil {
		f.Env = n.env
	}
	n.binReported.Each(func(i int) { f.HostBinStatus[n.binIn.Bins[i]] = n.binTrue.Has(i) })
	return f
}

// register adds a node, replacing a connection with the same id at once,
// and returns the answer to its connect (request id reqID): the current
// interest.
func (s *Server) register(c *nodeConn, info protocol.NodeInfo, reqID string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tokenOKLocked(c.id, c.token) {
		return nil, errTokenRevoked // revoked by a reload since the check
	}
	old, err := s.reg.add(c, info, time.Now())
	if err != nil {
		return nil, err
	}
	// A connection that begins now is newer than any other replica's of
	// the same id: that one is closed there when our record reaches it.
	// Until c reports, the node counts with that connection's answers
	// (carry): a node moving between replicas keeps the old connection
	// open until the new one reported, so it never counts for nothing.
	if r := s.removeRemoteLocked(c.id); r != nil {
		if r.host != nil {
			if cur := c.carry(s.reg.hosts, &r.nodeRecord); cur != r.host {
				s.hostChangedLocked(c.id, r.host, cur)
			}
			time.AfterFunc(carryFor, func() { s.endCarry(c) })
		}
	}
	s.publishLocked(c)
	if old != nil {
		old.log.Info("node replaced by a new connection with the same id")
		// Not waited on: the new connect is answered at once. When Close
		// has begun it closes old itself. Its answers are not carried: it
		// is closed now, and the new connection counts from its first
		// facts.update on.
		s.life.goFunc(func() { old.close(protocol.ClosePolicyViolation, protocol.CloseReasonReplaced) })
		if old.host != nil {
			s.hostChangedLocked(old.id, old.host, nil)
		}
	}
	if reqID == connectReqID {
		return s.connectAnswer, nil
	}
	return protocol.NewResRaw(reqID, s.connectPayload), nil
}

// connectReqID is the request id of every node agent's (and simulated
// node's) connect: its answer is encoded once per interest (connectAnswer),
// not once per connect (a few KiB at a few hundred binaries).
const connectReqID = "1"

// unregister removes a node unless a newer connection replaced it.
func (s *Server) unregister(c *nodeConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unregisterLocked(c)
}

// unregisterLocked removes a node now: it stops counting before any close
// handshake. s.mu must be held for writing.
func (s *Server) unregisterLocked(c *nodeConn) {
	if !s.reg.remove(c) {
		return
	}
	if s.member != nil {
		s.member.Withdraw(c.id, c.connectedAt)
	}
	if c.host != nil {
		s.hostChangedLocked(c.id, c.host, nil)
	}
}

// updateFacts applies a facts.update, keeping only the names the gateway
// asked for.
func (s *Server) updateFacts(c *nodeConn, u *protocol.FactsScan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, cur, ok := s.reg.report(c, u, s.interestAt, time.Now())
	if !ok {
		return
	}
	s.publishLocked(c) // factsAt moved, at least
	if cur != old {
		s.hostChangedLocked(c.id, old, cur)
	}
}

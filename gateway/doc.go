// Package gateway is the skillgate server: the WebSocket endpoint for
// nodes, the HTTP API for agents and operators, the MCP endpoint (/mcp:
// package mcp's handler, answered from this state in mcp.go), and the
// state behind them.
//
// It owns the system's mutable shared state and its goroutines: the fleet
// (fleet.go: the node registry of registry.go and cluster.go, the interest,
// the host index and the live eligibility counts of live.go), the storage
// snapshot (snapshot.go), the config in force (config.go), the prompt and
// /skills caches (cache.go) and the caps on sockets that have not yet
// connected (pending.go). With a certificate it serves HTTPS and WSS,
// re-reading its TLS files when they change (tls.go). One lock, Server.mu, guards the fleet, the
// snapshot and the config, since a node event or a reload changes them
// together. Everything the server starts, Server.Close ends
// and waits for (lifecycle.go). Handlers stay thin: they translate HTTP
// requests and node frames into calls on the Server.
//
// It decides nothing itself: skills come parsed through catalog, verdicts
// from eligibility, prompt text from promptbuild, frames and close codes
// from protocol. It must never import node or a cmd package (nodes are
// peers on the wire, not a library), nor a storage SDK or a messaging
// client directly: storage is a store.Store (internal/archtest checks
// it).
package gateway

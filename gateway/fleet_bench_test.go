package gateway

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/protocol"
)

// BenchmarkRemoteNodeMemory is the gateway's live heap per remote node
// (what clusterHandler.Put keeps: the registry's record, the host, the
// index's share), over 10,000 records decoded from JSON as the cluster
// package hands them over. "lookalike" nodes have one of three sets of
// facts (one per profile of the fleet tool's built-in mix: every node of
// a profile has the same binaries and env names, as hosts of one image
// do); "mix" nodes draw up to 30 of 300 binaries and 3 of 40 env names
// each, as the built-in mix does. The cluster's own copy
// of each record is not counted.
func BenchmarkRemoteNodeMemory(b *testing.B) {
	const n = 10000
	profiles := []struct {
		os, role  string
		caps      []string
		bins, env int
	}{
		{"linux", "execution", []string{"filesystem.list", "filesystem.read", "filesystem.write", "filesystem.edit", "text.search", "shell.exec"}, 30, 3},
		{"darwin", "execution", []string{"filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"}, 30, 3},
		{"windows", "specialized", []string{"filesystem.list", "filesystem.read", "text.search"}, 10, 1},
	}
	for _, fleet := range []string{"lookalike", "mix"} {
		b.Run(fleet, func(b *testing.B) {
			s := benchServer(b, 1000, 0)
			h := clusterHandler{s}
			asked := s.interestAt.asked
			recs := make([][]byte, n)
			for i := range n {
				r := rand.New(rand.NewPCG(7, uint64(i)))
				if fleet == "lookalike" {
					r = rand.New(rand.NewPCG(7, uint64(i%3)))
				}
				p := profiles[i%3]
				now := time.Unix(1700000000, 0)
				rec := cluster.Record{HostFacts: protocol.HostFacts{ID: fmt.Sprintf("node-%05d", i), OS: p.os, Roles: []string{p.role},
					Capabilities: p.caps, Env: []string{}, HostBinStatus: map[string]bool{}},
					Replica: "b", ConnectedAt: now, FactsAt: &now, BinsAsked: asked}
				for range p.bins {
					rec.HostBinStatus[fmt.Sprintf("bin%03d", r.IntN(300))] = true
				}
				for range p.env {
					rec.Env = append(rec.Env, fmt.Sprintf("ENV_%02d", r.IntN(40)))
				}
				recs[i], _ = json.Marshal(&rec)
			}
			first := true
			for b.Loop() {
				if !first {
					// The previous round's nodes leave; the last round's
					// stay, for -memprofile.
					b.StopTimer()
					s.mu.Lock()
					ids := make([]string, 0, n)
					for id := range s.reg.remote {
						ids = append(ids, id)
					}
					s.mu.Unlock()
					h.DeleteMany(ids)
					b.StartTimer()
				}
				first = false
				before := heapInUse()
				for _, raw := range recs {
					var rec cluster.Record
					if err := json.Unmarshal(raw, &rec); err != nil {
						b.Fatal(err)
					}
					h.Put(&rec)
				}
				after := heapInUse()
				b.ReportMetric(float64(int64(after)-int64(before))/n, "B/node")
			}
		})
	}
}

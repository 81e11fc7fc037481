//go:build unix

package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
)

// benchNodes is how many nodes each of two replicas holds in the loaded
// benchmarks: 10,000 nodes over three replicas.
const benchNodes = 3333

// BenchmarkPublishToPut measures a change published on one member until
// the other's Handler has it, with no other load.
func BenchmarkPublishToPut(b *testing.B) {
	srv := natstest.Start(b)
	pub, _, _ := join(b, srv, "a", 10*time.Second)
	sub, hs, _ := join(b, srv, "b", 10*time.Second)
	waitConnected(b, pub, sub)
	measureChanges(b, pub, hs, 1)
}

// BenchmarkPublishToPutLoaded measures the same while both members hold
// benchNodes nodes each, renewed every TTL/3 or sooner.
func BenchmarkPublishToPutLoaded(b *testing.B) {
	srv := natstest.Start(b)
	pub, _, _ := join(b, srv, "a", 10*time.Second)
	sub, hs, _ := join(b, srv, "b", 10*time.Second)
	waitConnected(b, pub, sub)
	t0 := time.Now()
	for i := range benchNodes {
		pub.Publish(testRecord(fmt.Sprintf("a-%04d", i), t0))
		sub.Publish(testRecord(fmt.Sprintf("b-%04d", i), t0))
	}
	testkit.Until(b, 30*time.Second, "b sees a's nodes", func() bool { return hs.len() == benchNodes })
	measureChanges(b, pub, hs, benchNodes)
}

// measureChanges publishes changed facts of a random one of n nodes on pub
// and waits for them on the other side, reporting latency quantiles.
func measureChanges(b *testing.B, pub *Member, hs *recorder, n int) {
	t0 := time.Now()
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("a-%04d", rand.N(n))
		env := fmt.Sprint("change-", i)
		start := time.Now()
		pub.Publish(testRecord(id, t0, env))
		for {
			if r := hs.get(id); r != nil && r.Env[0] == env {
				break
			}
			time.Sleep(20 * time.Microsecond)
		}
		lat = append(lat, time.Since(start))
	}
	reportQuantiles(b, lat)
}

// BenchmarkBurst measures a replica publishing benchNodes new nodes at
// once (its nodes reconnecting after a restart): the time until the other
// member has all of them, and each node's Publish-to-Put latency.
func BenchmarkBurst(b *testing.B) {
	srv := natstest.Start(b)
	pub, _, _ := join(b, srv, "a", 10*time.Second)
	sub, hs, _ := join(b, srv, "b", 10*time.Second)
	waitConnected(b, pub, sub)
	var all, lat []time.Duration
	for round := 0; b.Loop(); round++ {
		t0 := time.Now()
		seen := make(map[string]time.Duration, benchNodes)
		for i := range benchNodes {
			pub.Publish(testRecord(fmt.Sprintf("a-%04d", i), t0.Add(time.Duration(round))))
		}
		for len(seen) < benchNodes {
			for i := range benchNodes {
				id := fmt.Sprintf("a-%04d", i)
				if _, ok := seen[id]; ok {
					continue
				}
				if r := hs.get(id); r != nil && r.ConnectedAt.Equal(t0.Add(time.Duration(round)).UTC().Round(0)) {
					seen[id] = time.Since(t0)
				}
			}
			if time.Since(t0) > 30*time.Second {
				b.Fatalf("only %d of %d seen after 30s", len(seen), benchNodes)
			}
		}
		all = append(all, time.Since(t0))
		for _, d := range seen {
			lat = append(lat, d)
		}
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Milliseconds()), "all-ms")
	reportQuantiles(b, lat)
}

// BenchmarkRenewals measures the CPU time this process (both members,
// not the NATS server) spends renewing benchNodes nodes for one TTL.
func BenchmarkRenewals(b *testing.B) {
	srv := natstest.Start(b)
	const ttl = 2 * time.Second
	pub, _, _ := join(b, srv, "a", ttl)
	sub, hs, _ := join(b, srv, "b", ttl)
	waitConnected(b, pub, sub)
	t0 := time.Now()
	for i := range benchNodes {
		pub.Publish(testRecord(fmt.Sprintf("a-%04d", i), t0))
	}
	testkit.Until(b, 30*time.Second, "b sees a's nodes", func() bool { return hs.len() == benchNodes })
	time.Sleep(ttl) // past the first, bursty renewals
	for b.Loop() {
		before := cpuTime()
		time.Sleep(ttl)
		b.ReportMetric(float64((cpuTime()-before).Milliseconds())/float64(benchNodes)*1000, "cpu-µs/node/ttl")
	}
	if puts, deletes := hs.counts(); puts != benchNodes || deletes != 0 {
		b.Errorf("b's Handler: %d puts, %d deletes; want %d, 0", puts, deletes, benchNodes)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportQuantiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}

package gateway

import (
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/scanners"
)

// External scanners (gateway.governance.scanners) run in the background,
// in a pool of the server's life: at every poll each current content is
// scheduled for each scanner that has no answer for it (a failure is
// retried), and the pool keeps only the current contents' answers. The
// governance stage reads the answers through the config's ScanResult
// (Pool.Lookup, which never waits); a skill whose fail-closed scanner has
// not answered yet is held ("scanner <name> pending"). An answer wakes the
// poller, which re-evaluates: the prompt path never waits on a scan.

// newScanPool makes the pool; an answer wakes the poller.
func (s *Server) newScanPool(concurrency int) *scanners.Pool {
	return scanners.NewPool(scanners.PoolOptions{Concurrency: concurrency, OnResult: func(string, scanners.Result) {
		select {
		case s.scanned <- struct{}{}:
		default: // a rebuild is due already
		}
	}})
}

// scheduleScans queues every current content for every external scanner
// without an answer, and drops what is no longer current. Only the poller
// calls it.
func (s *Server) scheduleScans() {
	s.mu.RLock()
	snap, cfg := s.snap, s.pol.cfg
	s.mu.RUnlock()
	list := cfg.Scanners
	if cfg.Governance.Mode == governance.Off {
		list = nil
	}
	digests := make(map[string]bool, len(snap.all))
	for _, sk := range snap.all {
		r := snap.reports[sk]
		if r == nil {
			continue
		}
		digests[r.Digest] = true
		var files map[string][]byte // made once, for the first scanner that needs it
		for i := range list {
			if _, ok := s.scanPool.Cache().Get(r.Digest, &list[i]); ok || s.scanPool.Pending(r.Digest, &list[i]) {
				continue // answered, or queued or running; a failure is retried
			}
			if files == nil {
				files = scanners.FilesOf(snap.inputs[sk])
			}
			s.scanPool.Schedule(r.Digest, list[i], files)
		}
	}
	prints := make(map[string]bool, len(list))
	for i := range list {
		prints[list[i].Fingerprint()] = true
	}
	s.scanPool.Retain(func(digest, fingerprint string) bool { return digests[digest] && prints[fingerprint] })
}

// onScanned re-evaluates every skill with the scanners' answers so far.
func (s *Server) onScanned() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuildLocked()
}

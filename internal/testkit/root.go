// Package testkit is the one kit the tests share to run real things and
// wait for them, in the spirit of nats-server's test/test.go and
// net/http/httptest: nothing here is a mock. Reach for it before writing
// a helper; a helper two packages' tests need goes here.
//
// What it offers, and when to use which:
//
//   - A gateway: package gatewaytest (below this one). gatewaytest.Start
//     runs one in the test's process on a 127.0.0.1 listener, over a
//     fresh directory (Options.Files), an existing one (Dir), a MinIO
//     bucket (MinIO), a store shared by replicas (Shared, NewStore) or any
//     store (Config.Store); with TLS (Config.TLSCert and CA), a cluster
//     (Config.Cluster, Replica), a config file the test rewrites
//     (ConfigFile, WriteConfig). gatewaytest.StartProcess runs `skillgate
//     serve` as operators do, for tests of flags, signals and replicas as
//     processes. The gateway's own in-package tests cannot import
//     gatewaytest (it imports the gateway): they serve their Server with
//     Serve.
//   - Any server of the tests' own in this process: Serve (and
//     ServeAfter, for clients started before their server).
//   - A skillgate-node process: StartNode; the binaries it finds: BinDir
//     and AddBin. A hand-driven node speaking the protocol frame by
//     frame: DialNode (RawNode), for what a real node never sends.
//   - Any other program a test runs: StartProc (a Proc: its output,
//     Kill, Wait for its exit code; killed and its output logged when the
//     test ends). The programs of this module, built once per source for
//     every package that runs them: Binaries and Binary.
//   - A server the kits run for a whole test binary (miniotest,
//     natstest): Daemon (start, stop, restart on the same ports, one
//     output) and its Launch, the start-retry on free ports every such
//     server shares; FindProgram and SkipOrFatal for a program that is not
//     installed.
//   - Waiting: Eventually, polling a function that says what it saw (most
//     waits, usually on HTTP), or Until, polling a cheap condition in
//     memory more often. Never time.Sleep to wait for something.
//   - Files: WriteFiles, WriteFile, WriteFileAtomic (for a file a server
//     polls), ReadFile, SkillMD, Golden; ports: FreePort, WithFreePorts.
//   - The module's root and the external skill sets: ModuleRoot,
//     ExternalCorpus.
//
// It imports of the project only leaf packages (corpus, gobin, syncbuf,
// protocol), so that any package's tests can use it, in-package ones
// included, and miniotest and natstest build on it without a cycle.
package testkit

import (
	"os"
	"testing"

	"github.com/skillgate/skillgate/internal/corpus"
)

// ModuleRoot returns the directory of the go.mod above the working
// directory (a test's package directory).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := corpus.ModuleRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// ExternalCorpus returns the directory of the public skill sets
// (corpus.External); a missing corpus fails the test, never skips it.
func ExternalCorpus(t testing.TB) string {
	t.Helper()
	d, err := corpus.External(ModuleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

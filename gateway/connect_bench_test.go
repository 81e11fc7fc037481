package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/store"
)

// writeFleetSkills writes n SKILL.md files into dir, with the mix of
// requirements `skillgate-fleet skills` writes (one binary, two, any of
// three, an env name and a binary, an OS and a binary, windows and
// specialized, roles and capabilities, a binary no node has, none).
func writeFleetSkills(tb testing.TB, dir string, n int) {
	r := rand.New(rand.NewPCG(1, 1))
	bin := func() string { return fmt.Sprintf("%q", fmt.Sprintf("bin%03d", r.IntN(300))) }
	for i := range n {
		var req string
		switch x := r.Float64(); {
		case x < 0.15:
		case x < 0.50:
			req = `"bins": [` + bin() + `]`
		case x < 0.65:
			req = `"bins": [` + bin() + `, ` + bin() + `]`
		case x < 0.75:
			req = `"anyBins": [` + bin() + `, ` + bin() + `, ` + bin() + `]`
		case x < 0.85:
			req = fmt.Sprintf(`"env": ["ENV_%02d"], "bins": [%s]`, r.IntN(40), bin())
		case x < 0.92:
			req = fmt.Sprintf(`"os": [%q], "bins": [%s]`, []string{"darwin", "linux"}[r.IntN(2)], bin())
		case x < 0.95:
			req = `"os": ["windows"], "roles": ["specialized"]`
		case x < 0.97:
			req = `"roles": ["execution"], "capabilities": ["filesystem.edit", "text.search"]`
		default:
			req = fmt.Sprintf(`"bins": ["absent%03d"]`, r.IntN(1000))
		}
		name := fmt.Sprintf("s%04d", i)
		md := "---\nname: " + name + "\ndescription: A synthetic skill of the connect benchmark.\n" +
			"metadata: '{\"openclaw\": {\"requires\": {" + req + "}}}'\n---\nBody.\n"
		p := filepath.Join(dir, "skills", name, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(md), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkNodeConnect is one node's connect over loopback, as the fleet
// tool's nodes make it: the upgrade, connect and its answer, a first
// facts.update with 30 of the interest's 300 binaries and its answer. The
// connections stay open (a fleet coming up; past 4,000 the oldest half is
// closed off the clock). Client and gateway share the process: profile it
// with -cpuprofile and look at the gateway's side.
func BenchmarkNodeConnect(b *testing.B) {
	dir := b.TempDir()
	writeFleetSkills(b, dir, 1000)
	st, err := store.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, url, stop := serveBench(b, st)
	b.Cleanup(stop)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(2, 2))
	var conns []*websocket.Conn
	b.Cleanup(func() {
		for _, c := range conns {
			c.CloseNow()
		}
	})
	const maxOpen = 4000
	i := 0
	for b.Loop() {
		var bins []string
		for range 30 {
			bins = append(bins, fmt.Sprintf(`"bin%03d": true`, r.IntN(300)))
		}
		connect := fmt.Sprintf(`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"client":"bench",`+
			`"node":{"id":"bench-%d","os":"linux","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}}`, i)
		facts := `{"type":"req","id":"2","method":"facts.update","params":{"env":["ENV_01"],"hostBinStatus":{` + strings.Join(bins, ",") + `}}}`
		i++
		if len(conns) == maxOpen {
			// Both ends of each connection take a descriptor: past this
			// many, the oldest are closed, off the clock.
			b.StopTimer()
			for _, c := range conns[:maxOpen/2] {
				c.CloseNow()
			}
			conns = append(conns[:0], conns[maxOpen/2:]...)
			b.StartTimer()
		}
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		for _, frame := range []string{connect, facts} {
			if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
				b.Fatal(err)
			}
			_, answer, err := c.Read(ctx)
			if err != nil || !strings.Contains(string(answer), `"ok":true`) {
				b.Fatalf("answer %s, %v", answer, err)
			}
		}
	}
	b.StopTimer()
	if _, ok := protocol.ParseInterest(s.interestJSON); ok != nil || len(s.interest.Bins) < 250 {
		b.Fatalf("the interest has %d binaries, want most of the 300", len(s.interest.Bins))
	}
}

// BenchmarkNodeStack is the goroutine stack a quiet connected node costs
// the gateway (stack-B/node): 2,000 nodes connect and report as in
// BenchmarkNodeConnect, then the stacks in use are compared with before.
// The clients share the process but hold no goroutine of their own.
func BenchmarkNodeStack(b *testing.B) {
	const nodes = 2000
	dir := b.TempDir()
	writeFleetSkills(b, dir, 100)
	st, err := store.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	// One op is a gateway with its 2,000 nodes (ns/op is that, not a
	// connect: BenchmarkNodeConnect times those). The timer runs, so that
	// -benchtime 1s means about one op.
	var perNode float64
	for b.Loop() {
		perNode = nodeStack(b, st, nodes)
	}
	b.ReportMetric(perNode, "stack-B/node")
}

// nodeStack connects n nodes to a new gateway on st and returns the
// stack bytes in use per node.
func nodeStack(b *testing.B, st store.Store, n int) float64 {
	_, url, stop := serveBench(b, st)
	defer stop()
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conns := make([]*websocket.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.CloseNow()
		}
	}()
	for i := range n {
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		connect := fmt.Sprintf(`{"type":"req","id":"1","method":"connect","params":{"protocol":1,"client":"bench","node":{"id":"stack-%d","os":"linux","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}}`, i)
		facts := `{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{"bin001":true}}}`
		for _, frame := range []string{connect, facts} {
			if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
				b.Fatal(err)
			}
			if _, answer, err := c.Read(ctx); err != nil || !strings.Contains(string(answer), `"ok":true`) {
				b.Fatalf("answer %s, %v", answer, err)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return float64(after.StackInuse-before.StackInuse) / float64(n)
}

// serveBench serves a new gateway on st over loopback, quiet (no poll, no
// log), and returns it, its node endpoint and what stops it.
func serveBench(b *testing.B, st store.Store) (s *Server, url string, stop func()) {
	s, err := New(Config{Store: st, Poll: 1 << 40, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	return s, "ws://" + ln.Addr().String() + "/v1/nodes/connect", func() { cancel(); <-served }
}

package gateway_test

// What the gateway's end-to-end tests share beyond the test kit
// (internal/testkit): a real gateway on a real MinIO (gatewaytest; one
// server per package, a bucket per test) with the reads these tests make,
// and the expected blocks. Nodes are real skillgate-node processes
// (testkit.StartNode) or raw protocol nodes (testkit.RawNode). Nothing here
// is a mock.

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/protocol"
)

// waitFor bounds every wait of these tests.
const waitFor = 10 * time.Second

var sharedMinio miniotest.Once

func TestMain(m *testing.M) { os.Exit(sharedMinio.Run(m)) }

// ---------------------------------------------------------------------------
// Gateway

// gw is a real gateway serving on a real 127.0.0.1 listener
// (gatewaytest), with the reads these tests share.
type gw struct{ *gatewaytest.Gateway }

type gwOptions struct {
	minio          *miniotest.Server // nil: the package's shared server
	files          map[string]string // initial bucket content
	config         string            // config file content; "" → "{}"
	nodeToken      string
	agentToken     string
	poll           time.Duration // default 200ms
	connectTimeout time.Duration
	pingInterval   time.Duration
	maxNodes       int
	firstByte      time.Duration // the listener's first-byte timeout; 0: the default
	silentPerAddr  int           // silent connections per address; 0: the default
	// Replicas: a store shared with other gateways (nil: a fresh bucket
	// with files), this one's replica name, and its cluster membership.
	store   *gatewaytest.Store
	replica string
	cluster *cluster.Config
}

// startGateway starts a gateway on MinIO for t; it stops when t ends.
func startGateway(t *testing.T, o gwOptions) *gw {
	t.Helper()
	m := o.minio
	if m == nil {
		m = sharedMinio.Get(t)
	}
	if o.config == "" {
		o.config = "{}"
	}
	return &gw{gatewaytest.Start(t, gatewaytest.Options{
		MinIO:      m,
		Shared:     o.store,
		Files:      o.files,
		ConfigFile: o.config,
		Token:      o.agentToken,
		Config: gateway.Config{
			Poll:             o.poll,
			NodeToken:        o.nodeToken,
			MaxNodes:         o.maxNodes,
			AgentToken:       o.agentToken,
			ConnectTimeout:   o.connectTimeout,
			FirstByteTimeout: o.firstByte,
			MaxSilentPerAddr: o.silentPerAddr,
			PingInterval:     o.pingInterval,
			Replica:          o.replica,
			Cluster:          o.cluster,
		},
	})}
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// waitPrompt waits until the agent's prompt block is exactly want.
func (g *gw) waitPrompt(t *testing.T, agent, want string) {
	t.Helper()
	testkit.Eventually(t, waitFor, func() (string, bool) {
		got := g.Prompt(t, agent)
		return fmt.Sprintf("got:\n%s\nwant:\n%s", got, want), got == want
	})
}

// nodeView is one node of GET /v1/nodes.
type nodeView struct {
	protocol.HostFacts
	ConnectedAt string  `json:"connectedAt"`
	FactsAt     *string `json:"factsAt"`
}

// nodes returns GET /v1/nodes, decoded, and its raw body.
func (g *gw) nodes(t *testing.T) ([]nodeView, string) {
	t.Helper()
	var out struct {
		Nodes []nodeView `json:"nodes"`
	}
	body := g.GetJSON(t, "/v1/nodes", &out)
	return out.Nodes, body
}

// nodeIDs lists the ids of GET /v1/nodes that have reported facts.
func (g *gw) reportingNodeIDs(t *testing.T) string {
	ns, _ := g.nodes(t)
	var ids []string
	for _, n := range ns {
		if n.FactsAt != nil {
			ids = append(ids, n.ID)
		}
	}
	return strings.Join(ids, ",")
}

// waitNodes waits until exactly these node ids (comma separated, sorted)
// have reported facts.
func (g *gw) waitNodes(t *testing.T, want string) {
	t.Helper()
	testkit.Eventually(t, waitFor, func() (string, bool) {
		got := g.reportingNodeIDs(t)
		return fmt.Sprintf("reporting nodes %q, want %q", got, want), got == want
	})
}

// metric sums the samples of a metric whose labels include every one of
// labels (e.g. `op="get"`).
func (g *gw) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	code, _, body := g.Get(t, "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, lbl, _ := strings.Cut(series, "{")
		if n != name {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(lbl, l) {
				match = false
			}
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// ---------------------------------------------------------------------------
// Skills and expected blocks

// skillMD returns a SKILL.md (testkit.SkillMD) whose body is "Body of
// NAME.".
func skillMD(name, description, requires string) string {
	return testkit.SkillMD(name, description, requires, "Body of "+name+".")
}

// alwaysMD returns a SKILL.md with always: true.
func alwaysMD(name, description string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\nalways: true\n---\n\n# " + name + "\n"
}

// entry is one expected <skill> of a block.
type entry struct {
	name, desc, location string
	always               bool
}

// global is an entry of the global skill skills/{name}/SKILL.md.
func global(name, desc string) entry {
	return entry{name: name, desc: desc, location: "skills/" + name + "/SKILL.md"}
}

// block renders the exact <available_skills> text DESIGN.md specifies,
// written out independently of promptbuild, within the default budget
// (the entries must fit it whole): entries in priority order, as DESIGN.md
// orders them without skills.entries priorities: always first, then
// agent-local, then by name. Values must need no escaping.
func block(entries ...entry) string {
	if len(entries) == 0 {
		return ""
	}
	entries = slices.Clone(entries)
	slices.SortStableFunc(entries, func(a, b entry) int {
		if a.always != b.always {
			if a.always {
				return -1
			}
			return 1
		}
		if la, lb := strings.HasPrefix(a.location, "agents/"), strings.HasPrefix(b.location, "agents/"); la != lb {
			if la {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	var b strings.Builder
	b.WriteString("<available_skills>\n")
	for _, e := range entries {
		readPath := e.location
		if rest, ok := strings.CutPrefix(e.location, "agents/"); ok {
			readPath = rest[strings.Index(rest, "/skills/")+1:]
		}
		always := ""
		if e.always {
			always = ` always="true"`
		}
		fmt.Fprintf(&b, "  <skill name=\"%s\"%s>\n    <description>%s</description>\n    <location>%s</location>\n    <read_path>%s</read_path>\n  </skill>\n",
			e.name, always, e.desc, e.location, readPath)
	}
	b.WriteString("</available_skills>")
	return b.String()
}

// ---------------------------------------------------------------------------
// skillgate-node processes

// startNode runs skillgate-node (testkit.StartNode) against gatewayBase
// with --id id, --path pathDir, --recheck 200ms, and exactly env as its
// environment (plus HOME). Extra arguments are appended. It is killed
// when t ends.
func startNode(t *testing.T, gatewayBase, id, pathDir string, env []string, extra ...string) *testkit.Proc {
	t.Helper()
	return testkit.StartNode(t, testkit.Node{Gateway: gatewayBase, ID: id, Path: pathDir, Env: env, Args: extra})
}

// ---------------------------------------------------------------------------
// Raw WebSocket client

// dialRaw connects a raw node to g.
func dialRaw(t *testing.T, g *gw) *testkit.RawNode {
	t.Helper()
	return testkit.DialNode(t, g.WSURL)
}

// baseline is the capability set every execution host must have.
var baseline = protocol.BaselineCapabilities

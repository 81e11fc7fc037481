package console_test

// The machinery of the console's browser test: a real gateway (in this
// process, on a directory store and a real 127.0.0.1 listener:
// gatewaytest) and real skillgate-node processes (testkit.StartNode).
// Nothing here is a mock.

import (
	"net/http"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
)

// waitFor bounds every wait of these tests.
const waitFor = 10 * time.Second

// gw is a real gateway serving on a real 127.0.0.1 listener, on a
// directory store.
type gw struct{ *gatewaytest.Gateway }

type gwOptions struct {
	files      map[string]string // initial store content, key → body
	config     string            // config file content; "" → "{}"
	agentToken string            // SKILLGATE_AGENT_TOKEN
	// unloaded removes the store directory before the gateway's first
	// poll (put makes it again), and does not wait for readiness.
	unloaded bool
}

// startGateway starts a gateway for t; it stops when t ends.
func startGateway(t *testing.T, o gwOptions) *gw {
	t.Helper()
	if o.config == "" {
		o.config = "{}"
	}
	g := &gw{gatewaytest.Start(t, gatewaytest.Options{
		Files:      o.files,
		ConfigFile: o.config,
		Unloaded:   o.unloaded,
		Config:     gateway.Config{AgentToken: o.agentToken},
	})}
	g.Client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return g
}

// get does a GET with token as bearer token (none when "") and returns
// the status, headers and body.
func (g *gw) get(t *testing.T, pathAndQuery, token string) (int, http.Header, string) {
	t.Helper()
	var hdr http.Header
	if token != "" {
		hdr = http.Header{"Authorization": {"Bearer " + token}}
	}
	return g.Get(t, pathAndQuery, hdr)
}

// startNode runs skillgate-node against the gateway with --id id, --path
// pathDir, --recheck 200ms and only HOME in its environment. It is killed
// when t ends.
func startNode(t *testing.T, gatewayBase, id, pathDir string) *testkit.Proc {
	t.Helper()
	return testkit.StartNode(t, testkit.Node{Gateway: gatewayBase, ID: id, Path: pathDir})
}

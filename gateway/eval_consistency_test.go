package gateway_test

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/store"
)

// TestGatewayAgreesWithEval: a gateway on the eval fixture bucket, with the
// fixture's hosts connected as real WebSocket nodes, answers exactly the
// skills and prompt block that `skillgate eval` answers offline (the golden
// file of cmd/skillgate). The live counts must equal the pipeline.
func TestGatewayAgreesWithEval(t *testing.T) {
	var want report.Report
	readJSON(t, "../cmd/skillgate/testdata/eval-main.golden.json", &want)
	var hosts []protocol.HostFacts
	readJSON(t, "../testdata/hosts.json", &hosts)

	st, err := store.NewDir("../testdata/bucket")
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, gatewaytest.Options{NoWait: true, Config: gateway.Config{Store: st, ConfigPath: "../testdata/gateway.hujson", Poll: time.Hour}})

	for _, h := range hosts {
		testkit.DialNode(t, g.WSURL).Host(h)
	}

	var got report.Report
	g.GetJSON(t, "/v1/agents/main/skills", &got)
	if !reflect.DeepEqual(got.Skills, want.Skills) {
		gb, _ := json.MarshalIndent(got.Skills, "", "  ")
		t.Errorf("gateway skills differ from eval's:\n%s", gb)
	}
	if got.Prompt != want.Prompt {
		t.Errorf("gateway prompt differs from eval's:\n%s\nwant:\n%s", got.Prompt, want.Prompt)
	}
	_, _, block := g.Get(t, "/v1/agents/main/prompt", nil)
	if block != want.Prompt {
		t.Errorf("GET /prompt differs from eval's block:\n%s", block)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/report"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/r2store"
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

	st, err := r2store.NewDir("../testdata/bucket")
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, gatewaytest.Options{NoWait: true, Config: gateway.Config{Store: st, ConfigPath: "../testdata/gateway.hujson", Poll: time.Hour}})
	base := g.URL

	for _, h := range hosts {
		c, _, err := websocket.Dial(t.Context(), g.WSURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		send := func(v any) {
			b, _ := json.Marshal(v)
			if err := c.Write(t.Context(), websocket.MessageText, b); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Read(t.Context()); err != nil { // the res
				t.Fatal(err)
			}
		}
		send(map[string]any{"type": "req", "id": "1", "method": "connect", "params": map[string]any{
			"protocol": 1, "client": "test", "node": map[string]any{"id": h.ID, "os": h.OS, "roles": h.Roles, "capabilities": h.Capabilities}}})
		send(map[string]any{"type": "req", "id": "2", "method": "facts.update", "params": map[string]any{"env": h.Env, "hostBinStatus": h.HostBinStatus}})
	}

	resp, err := http.Get(base + "/v1/agents/main/skills")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got report.Report
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Skills, want.Skills) {
		gb, _ := json.MarshalIndent(got.Skills, "", "  ")
		t.Errorf("gateway skills differ from eval's:\n%s", gb)
	}
	if got.Prompt != want.Prompt {
		t.Errorf("gateway prompt differs from eval's:\n%s\nwant:\n%s", got.Prompt, want.Prompt)
	}
	presp, err := http.Get(base + "/v1/agents/main/prompt")
	if err != nil {
		t.Fatal(err)
	}
	defer presp.Body.Close()
	block, err := io.ReadAll(presp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(block) != want.Prompt {
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

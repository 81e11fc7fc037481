package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/testkit"
)

// skillLogs returns the gateway's log records about one skill.
func skillLogs(t *testing.T, g *gw, skill string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(g.Logs.String(), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["skill"] == skill {
			out = append(out, rec)
		}
	}
	return out
}

// TestVerdictLogsOncePerChange: a skill's verdict is logged in the style
// operators alert on (skill=… missing_bins=[…] missing_env=[…]) once per
// change, not once per prompt build.
func TestVerdictLogsOncePerChange(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/weather/SKILL.md": skillMD("weather", "Weather.", `{"env": ["WEATHER_API_KEY"], "bins": ["curl"]}`),
	}})
	r := dialRaw(t, g)
	r.Connect("n1", "")
	r.Facts("f1", nil, map[string]bool{"curl": true})
	testkit.Eventually(t, waitFor, func() (string, bool) {
		got := g.reportingNodeIDs(t)
		return got, got == "n1"
	})
	for range 20 {
		g.Prompt(t, "main")
		g.Prompt(t, "other-agent")
	}
	recs := skillLogs(t, g, "weather")
	if len(recs) != 1 {
		t.Fatalf("%d log records about weather after 40 prompt builds, want 1:\n%v", len(recs), recs)
	}
	rec := recs[0]
	// Info: routine at every start for most skills of a bucket, not a fault.
	if rec["level"] != "INFO" || rec["msg"] != "skill disabled: requires env: WEATHER_API_KEY; requires bins: curl" ||
		!reflect.DeepEqual(rec["missing_env"], []any{"WEATHER_API_KEY"}) || !reflect.DeepEqual(rec["missing_bins"], []any{}) ||
		rec["stage"] != "runtime" || rec["location"] != "skills/weather/SKILL.md" {
		t.Errorf("log record %v", rec)
	}

	r.Facts("f2", []string{"WEATHER_API_KEY"}, map[string]bool{"curl": true})
	g.waitPrompt(t, "main", block(global("weather", "Weather.")))
	for range 20 {
		g.Prompt(t, "main")
	}
	recs = skillLogs(t, g, "weather")
	if len(recs) != 2 || recs[1]["level"] != "INFO" || recs[1]["msg"] != "skill enabled" {
		t.Errorf("after the env var appeared: %v, want one more record, skill enabled", recs)
	}
}

// TestStorageFindingLevels: a finding about one file of the bucket comes
// back at every start; it is logged at info, unless it keeps a skill out
// (an error, such as a SKILL.md over the size limit: warn).
func TestStorageFindingLevels(t *testing.T) {
	g := startGateway(t, gwOptions{files: map[string]string{
		"skills/plain/SKILL.md":            skillMD("plain", "No requirements.", ""),
		"skills/plain/examples/x/SKILL.md": skillMD("x", "An example inside a skill.", ""),
		"skills/huge/SKILL.md":             skillMD("huge", strings.Repeat("long ", 60<<10), ""),
	}})
	g.waitPrompt(t, "main", block(ePlain))
	levels := map[string]string{}
	for line := range strings.SplitSeq(g.Logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(fmt.Sprint(rec["msg"]), "storage: ") {
			levels[fmt.Sprint(rec["location"])] = fmt.Sprint(rec["level"], " ", rec["severity"])
		}
	}
	want := map[string]string{"skills/plain/examples/x/SKILL.md": "INFO warn", "skills/huge/SKILL.md": "WARN error"}
	if !reflect.DeepEqual(levels, want) {
		t.Errorf("storage findings logged at %v, want %v", levels, want)
	}
}

// TestNodeLogLines: a node's lines are written as the server's logger
// with node=ID would write them: its connect (written by the handshake
// itself) and its disconnect (through the node's own logger), byte for
// byte but the time.
func TestNodeLogLines(t *testing.T) {
	g := startGateway(t, gwOptions{})
	r := dialRaw(t, g)
	r.Connect("log-node", "")
	r.Conn.Close(websocket.StatusNormalClosure, "bye")
	testkit.Eventually(t, waitFor, func() (string, bool) {
		return g.Logs.String(), strings.Contains(g.Logs.String(), `"msg":"node disconnected"`)
	})
	var want bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", "log-node")
	l.Info("node connected", "os", "linux", "roles", []string{"execution"}, "client", "e2e-raw/1")
	var got []string
	for line := range strings.SplitSeq(g.Logs.String(), "\n") {
		if strings.Contains(line, `"node":"log-node"`) {
			got = append(got, line)
		}
	}
	untimed := func(line string) string {
		_, rest, _ := strings.Cut(line, `"level"`)
		return rest
	}
	if len(got) == 0 || untimed(got[0]) != untimed(strings.TrimSpace(want.String())) {
		t.Errorf("connect line\n got %q\nwant %q", got, want.String())
	}
	var last string
	for _, line := range got {
		if strings.Contains(line, `"msg":"node disconnected"`) {
			last = line
		}
	}
	want.Reset()
	l.Info("node disconnected", "reason", "failed to get reader: received close frame: status = StatusNormalClosure and reason = \"bye\"")
	if untimed(last) != untimed(strings.TrimSpace(want.String())) {
		t.Errorf("disconnect line\n got %q\nwant %q", last, want.String())
	}
}

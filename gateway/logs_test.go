package gateway_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// skillLogs returns the gateway's log records about one skill.
func skillLogs(t *testing.T, g *gw, skill string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(g.logs.String(), "\n") {
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
	r.connect("n1", "")
	r.facts("f1", nil, map[string]bool{"curl": true})
	eventually(t, waitFor, func() (string, bool) {
		got := g.reportingNodeIDs(t)
		return got, got == "n1"
	})
	for range 20 {
		g.prompt(t, "main")
		g.prompt(t, "other-agent")
	}
	recs := skillLogs(t, g, "weather")
	if len(recs) != 1 {
		t.Fatalf("%d log records about weather after 40 prompt builds, want 1:\n%v", len(recs), recs)
	}
	rec := recs[0]
	if rec["level"] != "WARN" || rec["msg"] != "skill disabled: requires env: WEATHER_API_KEY; requires bins: curl" ||
		!reflect.DeepEqual(rec["missing_env"], []any{"WEATHER_API_KEY"}) || !reflect.DeepEqual(rec["missing_bins"], []any{}) ||
		rec["stage"] != "runtime" || rec["location"] != "skills/weather/SKILL.md" {
		t.Errorf("log record %v", rec)
	}

	r.facts("f2", []string{"WEATHER_API_KEY"}, map[string]bool{"curl": true})
	g.waitPrompt(t, "main", block(global("weather", "Weather.")))
	for range 20 {
		g.prompt(t, "main")
	}
	recs = skillLogs(t, g, "weather")
	if len(recs) != 2 || recs[1]["level"] != "INFO" || recs[1]["msg"] != "skill enabled" {
		t.Errorf("after the env var appeared: %v, want one more record, skill enabled", recs)
	}
}

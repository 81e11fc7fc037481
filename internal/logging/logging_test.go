package logging

import (
	"bytes"
	"encoding/json"
	"log"
	"log/slog"
	"testing"
)

// TestSetDefault: while a JSON logger is the default, a library's
// log.Printf is a JSON line of it; the restore puts the old output back.
func TestSetDefault(t *testing.T) {
	var jsonOut, plain bytes.Buffer
	orig := log.Writer()
	log.SetOutput(&plain)
	defer log.SetOutput(orig)
	restore := SetDefault(New(&jsonOut, slog.LevelInfo))
	log.Printf("from a library: %d", 42)
	slog.Warn("through slog's default")
	restore()
	log.Printf("after")

	var recs []map[string]any
	for line := range bytes.Lines(jsonOut.Bytes()) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		recs = append(recs, rec)
	}
	if len(recs) != 2 || recs[0]["msg"] != "from a library: 42" || recs[0]["level"] != "INFO" || recs[1]["level"] != "WARN" {
		t.Errorf("JSON log: %v", recs)
	}
	if got := plain.String(); !bytes.HasSuffix([]byte(got), []byte("after\n")) || bytes.Contains([]byte(got), []byte("library")) {
		t.Errorf("after the restore, log wrote %q to its old output", got)
	}
}

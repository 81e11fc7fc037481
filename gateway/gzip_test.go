package gateway_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// TestPromptGzip: a large block is served gzip-compressed to clients that
// accept it, byte-identical once decompressed, and plain to the others.
func TestPromptGzip(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		name := fmt.Sprintf("s%02d", i)
		files["skills/"+name+"/SKILL.md"] = skillMD(name, "A skill with a description long enough to make the block worth compressing.", "")
	}
	g := startGateway(t, gwOptions{files: files})
	_, _, plain := g.Get(t, "/v1/agents/main/prompt", http.Header{"Accept-Encoding": {"identity"}})
	if len(plain) < 4<<10 {
		t.Fatalf("block is %d bytes; the test needs one over 4 KiB", len(plain))
	}
	tests := []struct {
		ae       string
		wantGzip bool
	}{
		{"gzip", true},
		{"br, GZIP;q=0.8", true},
		{"gzip;q=0", false},
		{"deflate", false},
	}
	for _, tt := range tests {
		code, hdr, body := g.Get(t, "/v1/agents/main/prompt", http.Header{"Accept-Encoding": {tt.ae}})
		if code != http.StatusOK || hdr.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("Accept-Encoding %q: status %d, Vary %q", tt.ae, code, hdr.Get("Vary"))
		}
		if got := hdr.Get("Content-Encoding") == "gzip"; got != tt.wantGzip {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want gzip %v", tt.ae, hdr.Get("Content-Encoding"), tt.wantGzip)
			continue
		}
		if !tt.wantGzip {
			if body != plain {
				t.Errorf("Accept-Encoding %q: body differs from the plain block", tt.ae)
			}
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil || string(b) != plain {
			t.Errorf("Accept-Encoding %q: decompressed body differs from the plain block (err %v)", tt.ae, err)
		}
	}
}

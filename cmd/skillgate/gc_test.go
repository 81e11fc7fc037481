package main

import (
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
)

// TestServeGCTarget: serve collects at a target of 50 unless GOGC is set
// in its environment, as its /metrics (the Go collector's
// go_gc_gogc_percent) says.
func TestServeGCTarget(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "50"},
		{[]string{"GOGC=80"}, "80"},
		{[]string{"GOGC=100"}, "100"},
	} {
		p := gatewaytest.StartProcess(t, gatewaytest.ProcessOptions{Store: t.TempDir(), Env: tc.env})
		resp, err := http.Get(p.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`(?m)^go_gc_gogc_percent (\S+)$`).FindSubmatch(body)
		if m == nil || string(m[1]) != tc.want {
			t.Errorf("env %v: go_gc_gogc_percent %q, want %s", tc.env, m, tc.want)
		}
		p.Kill(t)
	}
}

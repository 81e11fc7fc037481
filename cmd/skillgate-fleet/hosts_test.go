package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/protocol"
)

// TestHostsFile: `hosts` writes the facts the simulated nodes would report
// for the whole synthetic vocabulary, valid for eval, the same for the
// same seed.
func TestHostsFile(t *testing.T) {
	const n = 300
	dir := t.TempDir()
	out := filepath.Join(dir, "hosts.json")
	code, stdout, errOut := runCmd(context.Background(), "hosts", "--out", out, "-n", strconv.Itoa(n))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "wrote 300 hosts to " + out + " (seed 1); evaluate them with: skillgate eval --hosts " + out + " --store DIR --agent main\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var hosts []protocol.HostFacts
	if err := json.Unmarshal(data, &hosts); err != nil {
		t.Fatal(err)
	}
	if len(hosts) != n {
		t.Fatalf("%d hosts, want %d", len(hosts), n)
	}
	m, _ := loadMix("", 1)
	profiles := map[string]int{}
	for i, h := range hosts {
		if err := h.Validate(); err != nil {
			t.Fatalf("host %d: %v", i, err)
		}
		if h.ID != "sim-"+strconv.Itoa(i) {
			t.Fatalf("host %d has id %q", i, h.ID)
		}
		f := m.node(i)
		profiles[f.prof.Name]++
		if h.OS != f.prof.OS || !slices.Equal(h.Roles, f.prof.Roles) || !slices.Equal(h.Capabilities, f.prof.Capabilities) {
			t.Fatalf("host %d: identity %+v differs from its profile %s", i, h, f.prof.Name)
		}
		for j := range binPool {
			if b := binName(j); h.HostBinStatus[b] != f.hasBin(b) {
				t.Fatalf("host %d: %s is %v, the simulated node says %v", i, b, h.HostBinStatus[b], f.hasBin(b))
			}
		}
		for b, ok := range h.HostBinStatus {
			if !ok {
				t.Fatalf("host %d lists %s as absent: only present binaries are written", i, b)
			}
		}
		for j := range envPool {
			if e := envName(j); slices.Contains(h.Env, e) != f.hasEnv(e) {
				t.Fatalf("host %d: env %s listed %v, the simulated node says %v", i, e, slices.Contains(h.Env, e), f.hasEnv(e))
			}
		}
	}
	if len(profiles) != 3 {
		t.Errorf("profiles drawn: %v", profiles)
	}

	// The same seed writes the same file; --force is needed to rewrite.
	if code, _, errOut := runCmd(context.Background(), "hosts", "--out", out, "-n", strconv.Itoa(n)); code != 2 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("rewriting without --force: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCmd(context.Background(), "hosts", "--out", out, "-n", strconv.Itoa(n), "--force"); code != 0 {
		t.Fatalf("rewriting with --force: exit %d: %s", code, errOut)
	}
	again, _ := os.ReadFile(out)
	if !bytes.Equal(again, data) {
		t.Error("the same seed wrote a different file")
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"hosts"}, "--out is required"},
		{[]string{"hosts", "--out", filepath.Join(dir, "x"), "-n", "-1"}, "-n: -1 is out of range"},
		{[]string{"hosts", "--out", filepath.Join(dir, "x"), "--id-prefix", "a/"}, "--id-prefix: host ids would be invalid"},
		{[]string{"hosts", "--out", filepath.Join(dir, "no", "such", "dir")}, "--out: open"},
	} {
		code, _, errOut := runCmd(context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

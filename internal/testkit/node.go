package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Node says how StartNode runs skillgate-node.
type Node struct {
	Gateway string        // --gateway: a base URL, or a comma-separated list
	ID      string        // --id
	Path    string        // --path: the directory its binaries are looked up in
	Recheck time.Duration // --recheck; 0: 200ms
	// Env is the process's whole environment besides HOME (a fresh
	// directory): a node must not see the developer's.
	Env []string
	// Args are appended to the command line.
	Args []string
}

// StartNode runs a skillgate-node process (built by Binaries) for t; it is
// killed when t ends. Its Name is "skillgate-node ID".
func StartNode(t testing.TB, n Node) *Proc {
	t.Helper()
	if n.Recheck == 0 {
		n.Recheck = 200 * time.Millisecond
	}
	args := append([]string{"--gateway", n.Gateway, "--id", n.ID, "--path", n.Path, "--recheck", n.Recheck.String()}, n.Args...)
	cmd := exec.Command(Binary(t, "cmd/skillgate-node"), args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir()}, n.Env...)
	return StartProc(t, "skillgate-node "+n.ID, cmd)
}

// BinDir makes a directory holding an executable shell script of each
// name, which prints its name: the binaries a node finds on its --path.
func BinDir(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		AddBin(t, dir, n)
	}
	return dir
}

// AddBin puts an executable script name into dir, atomically (a node
// rechecking dir sees it whole or not at all).
func AddBin(t testing.TB, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, name)
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte("#!/bin/sh\necho "+name+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

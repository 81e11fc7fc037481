package testkit

import (
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/syncbuf"
)

// TestWithFreePorts: start gets distinct ports, is tried again with other
// ones after a failure, and at most three times; its last error is
// returned.
func TestWithFreePorts(t *testing.T) {
	var calls [][]int
	errBusy := errors.New("address in use")
	err := WithFreePorts(2, func(ports []int) error {
		calls = append(calls, ports)
		if len(calls) < 2 {
			return errBusy
		}
		return nil
	})
	if err != nil || len(calls) != 2 {
		t.Fatalf("err %v after %d calls; want success at the second", err, len(calls))
	}
	for _, ps := range calls {
		if len(ps) != 2 || ps[0] == ps[1] || ps[0] == 0 {
			t.Errorf("ports %v; want two distinct ports", ps)
		}
	}
	n := 0
	if err := WithFreePorts(1, func([]int) error { n++; return errBusy }); !errors.Is(err, errBusy) || n != startAttempts {
		t.Errorf("always failing: %v after %d calls; want the error after %d", err, n, startAttempts)
	}
}

// TestDaemon: a program that never gets ready is reported with its
// output, and a stopped one can be started again.
func TestDaemon(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	d := &Daemon{Out: &syncbuf.Buffer{}, Dir: t.TempDir()}
	err := d.Start(exec.Command("sh", "-c", "echo starting; exit 3"), "the server", 5*time.Second, 10*time.Millisecond,
		func() error { return errors.New("not yet") })
	if err == nil || err.Error() != "the server exited before it was ready" {
		t.Errorf("Start of a program that exits = %v", err)
	}
	ready := false
	if err := d.Start(exec.Command("sleep", "60"), "the server", 5*time.Second, 10*time.Millisecond,
		func() error { ready = true; return nil }); err != nil || !ready {
		t.Fatalf("Start = %v, ready %v", err, ready)
	}
	start := time.Now()
	d.Stop(syscall.SIGTERM, 5*time.Second)
	if time.Since(start) > 4*time.Second {
		t.Errorf("Stop took %v", time.Since(start))
	}
	d.Stop(syscall.SIGTERM, time.Second) // stopping a stopped server does nothing
	if out := d.Output(); !strings.Contains(out, "--- ") || !strings.Contains(out, "starting") {
		t.Errorf("output %q; want a line per run and what the program printed", out)
	}
}

// TestProcExitCode: Wait returns the program's own exit status.
func TestProcExitCode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	p := StartProc(t, "sh", exec.Command("sh", "-c", "echo out; exit 7"))
	if code := p.Wait(t, 10*time.Second); code != 7 {
		t.Errorf("exit code %d, want 7", code)
	}
	if p.Output() != "out\n" {
		t.Errorf("output %q", p.Output())
	}
}

func TestTail(t *testing.T) {
	if got := Tail("abcdef", 3); got != "…def" {
		t.Errorf("Tail = %q", got)
	}
	if got := Tail("abc", 3); got != "abc" {
		t.Errorf("Tail of a short string = %q", got)
	}
}

// TestFreePortBelowEphemeral: FreePort's ports are below the kernel's
// ephemeral range, bindable, and never handed out twice in a process.
func TestFreePortBelowEphemeral(t *testing.T) {
	low, high := portRange()
	seen := map[int]bool{}
	for range 50 {
		p := FreePort(t)
		if p < low || p >= high || seen[p] {
			t.Fatalf("port %d: want one in %d–%d not given before (given: %v)", p, low, high-1, seen)
		}
		seen[p] = true
	}
	if high > 65535 || low < 1024 {
		t.Errorf("range %d–%d", low, high)
	}
}

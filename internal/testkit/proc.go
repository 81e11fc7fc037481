package testkit

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/syncbuf"
)

// procWait bounds how long a killed process may take to exit.
const procWait = 10 * time.Second

// Proc is a program a test runs (StartProc): a Process bound to the test,
// with a name for its messages.
type Proc struct {
	*Process
	Name string
	out  *syncbuf.Buffer
}

// StartProc starts cmd for t (see StartProcess) and kills it when t ends,
// logging the last 12 KiB of its output if t failed. name says which
// process it is in messages ("replica a", "skillgate-node n1").
func StartProc(t testing.TB, name string, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{Name: name, out: &syncbuf.Buffer{}}
	var err error
	if p.Process, err = StartProcess(cmd, p.out); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Signal(syscall.SIGCONT) // a stopped process cannot die
		p.Kill(t)
		if t.Failed() {
			t.Logf("%s output:\n%s", p.Name, Tail(p.Output(), 12<<10))
		}
	})
	return p
}

// Output returns what the program printed so far.
func (p *Proc) Output() string { return p.out.String() }

// Kill kills the program (SIGKILL, as a crash would) and waits for it; it
// fails t when the program has not exited 10 s later.
func (p *Proc) Kill(t testing.TB) {
	t.Helper()
	if p.Done() {
		return
	}
	signalGroup(p.cmd.Process, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(procWait):
		t.Errorf("%s did not exit within %v of SIGKILL", p.Name, procWait)
	}
}

// Wait waits for the program to exit on its own and returns its exit
// code; it fails t when the program still runs after timeout.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		t.Fatalf("%s still running after %v; output:\n%s", p.Name, timeout, p.Output())
	}
	code, err := p.ExitCode()
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	return code
}

// CheckAlive fails t at once if one of ps has exited, with last (what a
// wait last observed): for an Eventually whose answer comes from them.
func CheckAlive(t testing.TB, last string, ps ...*Proc) {
	t.Helper()
	for _, p := range ps {
		if p.Done() {
			t.Fatalf("%s exited; last: %s", p.Name, last)
		}
	}
}

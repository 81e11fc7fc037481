package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/gobin"
	"github.com/skillgate/skillgate/internal/syncbuf"
)

// Process is a program started by StartProcess: its output is kept, its
// end is known, and Stop reaches whatever it started. It is the one
// launcher of the tests' processes: the servers of miniotest and natstest,
// and, through Proc, the skillgate, skillgate-node and skillgate-fleet
// processes of the end-to-end tests.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // Wait's result, set before exited closes
}

// StartProcess starts cmd with its stdout and stderr written to out.
// Where there are process groups, the program gets its own, which Stop
// signals; on Linux the kernel kills it when the test binary dies without
// cleaning up (a timeout, a panic), so that no process is orphaned.
func StartProcess(cmd *exec.Cmd, out *syncbuf.Buffer) (*Process, error) {
	cmd.Stdout, cmd.Stderr = out, out
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// Exited is closed when the program has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Done reports whether the program has exited.
func (p *Process) Done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// ExitCode is the program's exit status once it has exited (-1 when a
// signal ended it), and an error when it could not be waited for.
func (p *Process) ExitCode() (int, error) {
	<-p.exited
	if ee, ok := errors.AsType[*exec.ExitError](p.err); ok {
		return ee.ExitCode(), nil
	}
	return 0, p.err
}

// Signal sends sig to the program alone (not its group): SIGTERM as an
// operator's stop, SIGSTOP and SIGCONT for a test that freezes it.
func (p *Process) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends sig to the program's group and waits for it to exit; after
// grace it kills the group. It returns at once if the program has exited.
func (p *Process) Stop(sig syscall.Signal, grace time.Duration) {
	if p.Done() {
		return
	}
	signalGroup(p.cmd.Process, sig)
	select {
	case <-p.exited:
	case <-time.After(grace):
		signalGroup(p.cmd.Process, syscall.SIGKILL)
		<-p.exited
	}
}

// WaitReady calls ready every interval until it returns nil, and returns
// an error naming what (e.g. "minio") when timeout passes first (with
// ready's last error) or when the program exits before it is ready.
func (p *Process) WaitReady(what string, timeout, interval time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v (last: %v)", what, timeout, err)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready", what)
		case <-time.After(interval):
		}
	}
}

// Daemon is a server program a test kit starts, stops and restarts on the
// same ports (MinIO, NATS): the process that runs now, if any, the output
// of every run, and a throwaway directory for its data.
type Daemon struct {
	Out *syncbuf.Buffer // the output of every run (the last outputLimit bytes)
	Dir string          // the data directory, removed by Close

	mu   sync.Mutex // guards proc
	proc *Process
}

// NewDaemon makes a Daemon with a fresh directory named after prefix
// ("miniotest-"), keeping the last outputLimit bytes of output.
func NewDaemon(prefix string, outputLimit int) (*Daemon, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	return &Daemon{Out: &syncbuf.Buffer{Limit: outputLimit}, Dir: dir}, nil
}

// Start starts cmd (StartProcess) after writing a line "--- TIME COMMAND
// LINE" to Out (so that the output says where each run began), and waits
// until ready returns nil (WaitReady, polled every interval, what naming
// it in errors); a program that is not ready in time is killed.
func (d *Daemon) Start(cmd *exec.Cmd, what string, timeout, interval time.Duration, ready func() error) error {
	fmt.Fprintf(d.Out, "--- %s %s\n", time.Now().Format(time.RFC3339), strings.Join(cmd.Args, " "))
	p, err := StartProcess(cmd, d.Out)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.proc = p
	d.mu.Unlock()
	if err := p.WaitReady(what, timeout, interval, ready); err != nil {
		d.Stop(syscall.SIGKILL, 0)
		return err
	}
	return nil
}

// Stop stops the running program (Process.Stop) and waits for it; it does
// nothing when none runs.
func (d *Daemon) Stop(sig syscall.Signal, grace time.Duration) {
	d.mu.Lock()
	p := d.proc
	d.proc = nil
	d.mu.Unlock()
	if p != nil {
		p.Stop(sig, grace)
	}
}

// Output returns what the runs printed so far.
func (d *Daemon) Output() string { return d.Out.String() }

// Launch calls start with n free loopback ports until it returns nil
// (WithFreePorts): a port found free may be taken before the server binds
// it. When start never succeeds, it removes Dir and returns start's last
// error followed by the output of every run (what names the program).
func (d *Daemon) Launch(what string, n int, start func(ports []int) error) error {
	if err := WithFreePorts(n, start); err != nil {
		os.RemoveAll(d.Dir)
		return fmt.Errorf("%w\n%s output:\n%s", err, what, d.Output())
	}
	return nil
}

// Close stops the running program (Stop) and removes Dir.
func (d *Daemon) Close(sig syscall.Signal, grace time.Duration) {
	d.Stop(sig, grace)
	os.RemoveAll(d.Dir)
}

// SkipOrFatal ends t for err, an error starting a server: a skip when err
// is notInstalled (the program is missing; the tests that need it do not
// run), unless CI=true, where every test must run; a failure otherwise.
func SkipOrFatal(t testing.TB, err, notInstalled error) {
	t.Helper()
	if errors.Is(err, notInstalled) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	t.Fatal(err)
}

// FindProgram finds the installed program name (gobin.Find: on PATH or
// in a GOPATH's bin directory), or returns notInstalled.
func FindProgram(name string, notInstalled error) (string, error) {
	if p, ok := gobin.Find(name); ok {
		return p, nil
	}
	return "", notInstalled
}

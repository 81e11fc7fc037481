//go:build unix

package testkit

import (
	"os"
	"syscall"
)

// signalGroup sends sig to the process group of p (see setProcAttr), or to
// p alone when that fails.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		p.Signal(sig)
	}
}

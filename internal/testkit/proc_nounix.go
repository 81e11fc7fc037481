//go:build !unix

package testkit

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr does nothing without process groups.
func setProcAttr(cmd *exec.Cmd) {}

// signalGroup kills p: there are no process groups or SIGTERM here.
func signalGroup(p *os.Process, _ syscall.Signal) { p.Kill() }

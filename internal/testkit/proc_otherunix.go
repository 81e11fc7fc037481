//go:build unix && !linux

package testkit

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the program in its own process group. Outside Linux
// there is no parent-death signal: a program outlives a test binary that
// dies without cleaning up.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

//go:build unix && !linux

package natstest

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts nats-server in its own process group. Outside Linux
// there is no parent-death signal: a server outlives a test binary that
// dies without cleaning up.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

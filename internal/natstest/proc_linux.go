package natstest

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts nats-server in its own process group, so that Stop and
// Kill reach anything it starts, and makes the kernel kill it when the
// test binary dies without cleaning up (a test timeout, a panic), so no
// server is orphaned.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

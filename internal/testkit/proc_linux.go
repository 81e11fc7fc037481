package testkit

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the program in its own process group, so that Stop
// reaches anything it starts, and makes the kernel kill it when the test
// binary dies without cleaning up.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

//go:build linux

package scanners

import (
	"os/exec"
	"syscall"
)

const supported = true

// setProcAttr puts the scanner in a process group of its own (killed as
// one) and has the kernel kill it if the gateway dies first.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills every process of the group pgid.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

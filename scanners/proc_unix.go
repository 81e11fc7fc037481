//go:build unix && !linux

package scanners

import (
	"os/exec"
	"syscall"
)

const supported = true

// setProcAttr puts the scanner in a process group of its own (killed as
// one).
func setProcAttr(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills every process of the group pgid.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

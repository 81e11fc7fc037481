package miniotest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel kill minio when the test binary dies
// without cleaning up (a test timeout, a panic), so no server is orphaned.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

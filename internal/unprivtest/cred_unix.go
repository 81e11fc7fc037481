//go:build unix

package unprivtest

import (
	"os/exec"
	"syscall"
)

func setCredential(cmd *exec.Cmd, id uint32) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: id, Gid: id}}
}

//go:build !unix

package unprivtest

import "os/exec"

// setCredential: only Unix has a root whom file modes do not bind.
func setCredential(*exec.Cmd, uint32) {}

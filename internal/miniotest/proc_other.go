//go:build !linux

package miniotest

import "os/exec"

// setDeathSignal does nothing outside Linux: a server outlives a test binary
// that dies without cleaning up.
func setDeathSignal(cmd *exec.Cmd) {}

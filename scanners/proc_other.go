//go:build !unix

package scanners

import "os/exec"

// supported is false: without process groups a timeout could not end
// what a scanner started, so Run fails at once.
const supported = false

func setProcAttr(*exec.Cmd) {}

func killGroup(int) {}

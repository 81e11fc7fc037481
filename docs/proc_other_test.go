//go:build !unix

package docs_test

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

package weaviatetest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel kill the server when the test process
// dies (a timeout, a crash), so no server outlives its test.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

//go:build !linux

package weaviatetest

import "os/exec"

func setDeathSignal(*exec.Cmd) {}

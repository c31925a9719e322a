//go:build !linux

package main

import (
	"context"
	"runtime"
	"time"

	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// runCommand needs Linux: the guarantees the task makes (the child dies with the plugin, the
// whole process group dies on timeout, nothing is left running) rest on Pdeathsig and waitid.
func runCommand(context.Context, Input, time.Duration) (execcore.Output, error) {
	return notRun, execcore.Fatalf("the shell plugin runs commands on Linux only, not on %s", runtime.GOOS)
}

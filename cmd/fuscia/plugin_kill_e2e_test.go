package main

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/plugin/plugintest"
)

// TestPluginDiesWithSIGKILLedFuscia: a plugin must not outlive Fuscia, even when Fuscia is
// killed with SIGKILL and runs none of its cleanup (docs/reference/plugin-protocol.md: "No zombies").
func TestPluginDiesWithSIGKILLedFuscia(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := plugintest.Build(t, "examples/plugins/greeter", "greeter")
	path := plugintest.Install(t, bin, filepath.Join(h.dir, "plugins"), "fuscia-plugin-greeter_v0.1.0")
	t.Cleanup(func() { plugintest.NoneLeft(t, path) })
	h.write("hang.fsc.hcl", `workflow "hang" {
  timeout = "1h"
}
plugin "greeter" {
  source = "greeter"
}
task "h" {
  uses   = plugin.greeter.hang
  inputs = { seconds = 3600 }
}
`)
	cmd := exec.Command(fusciaBin, "apply", "hang.fsc.hcl")
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(plugintest.Running(path)) == 0 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal("the plugin never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// NoneLeft (in Cleanup) gives the kernel a moment to deliver the parent-death signal.
}

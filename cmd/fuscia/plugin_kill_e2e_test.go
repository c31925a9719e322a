package main

import (
	"fmt"
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

// TestShellCommandsDieWithSIGKILLedFuscia: what a shell task's command started does not outlive
// a SIGKILLed Fuscia either. The plugin's parent-death signal kills the plugin and the
// command's own one its direct child; the grandchild here (`sleep` in the background of `sh`)
// dies only because the plugin, told by SIGTERM instead, kills the command's process group
// before it exits.
func TestShellCommandsDieWithSIGKILLedFuscia(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installShell(t, filepath.Join(h.dir, "plugins"), "fuscia-plugin-shell")
	pidFile := filepath.Join(h.dir, "grandchild.pid")
	h.write("bg.fsc.hcl", fmt.Sprintf(`workflow "bg" {
  timeout = "1h"
}
plugin "shell" {
  source = "shell"
}
task "bg" {
  uses   = plugin.shell.exec
  inputs = { command = "/bin/sh", args = ["-c", "/bin/sleep 3600 & echo $! > %[1]s.new && mv %[1]s.new %[1]s; wait"] }
}
`, pidFile))
	cmd := exec.Command(fusciaBin, "apply", "bg.fsc.hcl")
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, err := waitPIDFile(pidFile, time.Minute)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the command's background process: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	mustStop(t, pid, 30*time.Second, "the shell command's background process, Fuscia SIGKILLed,")
}

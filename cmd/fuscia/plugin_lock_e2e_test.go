package main

import (
	"path/filepath"
	"testing"

	"github.com/fuscia/fuscia/plugin/plugintest"
)

// TestPluginApplyChecksLockFile: `apply PATH` refuses a plugin binary whose digest differs from
// the one the lock file beside the workflow records, until `plan` locks the new one.
func TestPluginApplyChecksLockFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := installEchoPlugin(t, filepath.Join(h.dir, "plugins"))
	t.Cleanup(func() { plugintest.NoneLeft(t, bin) })
	h.write("w.fsc.hcl", `workflow "w" {}
plugin "echo" {
  source = "echo"
}
task "a" {
  uses   = plugin.echo.run
  inputs = { x = 1 }
}
`)
	wantCode(t, h.run("apply", "w.fsc.hcl"), 0) // no lock file yet: nothing to check
	wantCode(t, h.run("plan", "w.fsc.hcl"), 0)
	rebuildPlugin(t, bin, "# changed\n")
	r := h.run("apply", "w.fsc.hcl")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Plugin does not match the lock file", "w.fsc.hcl line 2", "fuscia plan")
	wantCode(t, h.run("plan", "w.fsc.hcl"), 0)
	wantCode(t, h.run("apply", "w.fsc.hcl"), 0)
}

package plugintest

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ShellChain is a workflow of n tasks of the first-party shell plugin (source "shell") running
// /bin/true, each after the one before, with the given durability: a sequential chain, so that
// a node's cost (the spawn, the plugin round trip, the journal) is not hidden by overlap. The
// engine's and the CLI's benchmarks of issue 20's item 2 run it.
func ShellChain(n int, durability string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow \"shellchain\" { durability = %q }\nplugin \"shell\" { source = \"shell\" }\n", durability)
	for i := range n {
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses = plugin.shell.exec\n  inputs = { command = \"/bin/true\", args = [] }\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "  after = [task.t%d]\n", i-1)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// SpawnTrueSeq spawns /bin/true n times from Go, one after another, with nothing else, and
// returns the time per spawn: the floor a ShellChain node is measured against ("a bare Go loop
// spawning /bin/true", issue 20's item 2).
func SpawnTrueSeq(tb testing.TB, n int) time.Duration {
	tb.Helper()
	start := time.Now()
	for range n {
		if err := exec.Command("/bin/true").Run(); err != nil {
			tb.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

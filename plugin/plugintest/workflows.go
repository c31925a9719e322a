package plugintest

import (
	"fmt"
	"strings"
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

package main

import (
	"context"
	"fmt"

	"github.com/fuscia/fuscia/internal/version"
)

func runVersion(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "version", "version [-json]")
	asJSON := fs.Bool("json", false, "print the versions as JSON")
	if _, code, ok := fs.parse(args); !ok {
		return code
	}
	if *asJSON {
		_ = writeJSON(c.stdout, map[string]any{
			"fuscia":          version.Fuscia,
			"wasmtime":        version.Wasmtime,
			"abi":             version.ABI,
			"plugin_protocol": version.PluginProtocol,
			"component_world": version.World,
		})
		return exitOK
	}
	fmt.Fprintf(c.stdout, "Fuscia v%s\nwasmtime %s\nHost ABI %d\nComponent world %s\nPlugin protocol %d\n",
		version.Fuscia, version.Wasmtime, version.ABI, version.World, version.PluginProtocol)
	return exitOK
}

// operationFailed reports an operation that failed for a reason outside the user's input
// (exit 1), with a sentence around the error.
func (c *cli) operationFailed(summary string, err error) int {
	fmt.Fprintf(c.stderr, "Error: %s\n\n%s\n", summary, sentenceOf(err))
	return exitFailed
}

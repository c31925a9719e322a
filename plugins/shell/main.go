// Command fuscia-plugin-shell is Fuscia's first-party shell plugin. Its task exec runs a program
// given by absolute path with explicit arguments and environment, without a shell, and captures
// its output; see README.md. The logic is in plain functions (run, checkInput); this file only
// wires them to plugin/sdk.
package main

import (
	"context"
	"time"

	"github.com/fuscia/fuscia/plugin/sdk"
	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// version is reported through GetSchema; it must match a versioned binary name.
const version = "0.3.0"

func main() {
	// A call waits on its child; the plugin's own work is small (docs/performance.md, issue 20).
	sdk.OneThread()
	sdk.Serve(sdk.Plugin{
		Name:    "shell",
		Version: version,
		Tasks: []sdk.TaskDef{sdk.Task("exec", execTask,
			sdk.Description("Runs a program by absolute path with explicit arguments and environment, without a shell."),
			sdk.Validate(validateExec))},
	})
}

func execTask(ctx context.Context, call *sdk.Call, in Input) (execcore.Output, error) {
	start := time.Now()
	out, err := run(ctx, in)
	// Arguments and environment are not logged: they may carry secrets.
	call.Debug("exec %s: exit code %d after %s", in.Command, out.ExitCode, time.Since(start).Round(time.Millisecond))
	return out, execcore.SDKError(err, out)
}

func validateExec(_ context.Context, in Input, unknown sdk.Unknowns) []sdk.Diagnostic {
	return execcore.Diagnostics(checkInput(in, func(p string) bool { return !unknown.Within(p) }))
}

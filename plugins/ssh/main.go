// Command fuscia-plugin-ssh is Fuscia's first-party SSH plugin. Its task exec runs a command on
// a remote host over SSH, with key-based auth, host keys checked against a known_hosts file and
// connections pooled per host for the life of the run; see README.md. The logic is in plain
// functions and types (Runner, checkInput); this file only wires them to plugin/sdk.
package main

import (
	"context"
	"encoding/json"

	"github.com/fuscia/fuscia/plugin/sdk"
	"github.com/fuscia/fuscia/plugins/internal/execcore"
)

// version is reported through GetSchema; it must match a versioned binary name.
const version = "0.3.0"

func main() {
	// One Runner for the process: its connection pools are shared by every call of the run.
	r := NewRunner()
	sdk.Serve(sdk.Plugin{
		Name:         "ssh",
		Version:      version,
		ConfigSchema: json.RawMessage(configSchema),
		Configure:    configure,
		Tasks: []sdk.TaskDef{sdk.Task("exec",
			func(ctx context.Context, call *sdk.Call, in Input) (execcore.Output, error) {
				var cfg Config
				if err := call.Config.Decode(&cfg); err != nil {
					return execcore.Output{ExitCode: -1}, sdk.Validation("plugin block config: %v", err)
				}
				out, err := r.Run(ctx, in, cfg)
				return out, execcore.SDKError(err, out)
			},
			sdk.Description("Runs a program with its arguments on a remote host over SSH, each argument quoted for the remote shell, or with shell = true a command line (key auth, known_hosts checked, pooled connections)."),
			sdk.Validate(func(_ context.Context, in Input, unknown sdk.Unknowns) []sdk.Diagnostic {
				return execcore.Diagnostics(checkInput(in, func(p string) bool { return !unknown.Within(p) }))
			}))},
	})
}

// configure checks the plugin block's config strictly: an unknown key is a typo.
func configure(_ context.Context, cfg sdk.Config, _ sdk.Unknowns) []sdk.Diagnostic {
	var c Config
	if err := cfg.Decode(&c); err != nil {
		return []sdk.Diagnostic{{Summary: "invalid ssh plugin config", Detail: err.Error()}}
	}
	return nil
}

// Command echoplugin is the "echo" plugin of the CLI's end-to-end tests: version 0.3.0, one
// task `run` that answers its input as its output.
package main

import (
	"context"
	"encoding/json"

	"github.com/fuscia/fuscia/plugin/sdk"
)

func main() {
	sdk.Serve(sdk.Plugin{Name: "echo", Version: "0.3.0", Tasks: []sdk.TaskDef{
		sdk.Task("run", func(_ context.Context, _ *sdk.Call, in json.RawMessage) (json.RawMessage, error) { return in, nil }),
	}})
}

// Command echoplugin is the "echo" plugin of the CLI's end-to-end tests: version 0.3.0, a task
// `run` that answers its input as its output, and a task `shaped` that does the same but
// declares an output_schema ({"count": integer}) that the input may break.
package main

import (
	"context"
	"encoding/json"

	"github.com/fuscia/fuscia/plugin/sdk"
)

const shapedOutput = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`

func main() {
	echo := func(_ context.Context, _ *sdk.Call, in json.RawMessage) (json.RawMessage, error) { return in, nil }
	sdk.Serve(sdk.Plugin{Name: "echo", Version: "0.3.0", Tasks: []sdk.TaskDef{
		sdk.Task("run", echo),
		sdk.Task("shaped", echo, sdk.OutputSchema(json.RawMessage(shapedOutput))),
	}})
}

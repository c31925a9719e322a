// Command echoplugin is the "echo" plugin of the CLI's end-to-end tests: version 0.3.0, a task
// `run` that answers its input as its output, a task `shaped` that does the same but declares
// an output_schema ({"count": integer}) that the input may break, and a task `sparse` whose
// typed output leaves its slice, map and pointer fields nil (the schema the SDK derives for
// it must accept what encoding/json writes for them: null).
package main

import (
	"context"
	"encoding/json"

	"github.com/fuscia/fuscia/plugin/sdk"
)

const shapedOutput = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`

type sparseIn struct {
	Name string `json:"name"`
}

// sparseOut has no omitempty: every field is written, the nil ones as null.
type sparseOut struct {
	Name   string            `json:"name"`
	Tags   []string          `json:"tags"`
	Labels map[string]string `json:"labels"`
	Parent *sparseIn         `json:"parent"`
}

func main() {
	echo := func(_ context.Context, _ *sdk.Call, in json.RawMessage) (json.RawMessage, error) { return in, nil }
	sparse := func(_ context.Context, _ *sdk.Call, in sparseIn) (sparseOut, error) {
		return sparseOut{Name: in.Name}, nil
	}
	sdk.Serve(sdk.Plugin{Name: "echo", Version: "0.3.0", Tasks: []sdk.TaskDef{
		sdk.Task("run", echo),
		sdk.Task("shaped", echo, sdk.OutputSchema(json.RawMessage(shapedOutput))),
		sdk.Task("sparse", sparse),
	}})
}

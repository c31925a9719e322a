// Command badstdout is a plugin that prints to stdout before it serves, which breaks
// go-plugin's handshake: Fuscia must say so, naming the plugin.
package main

import (
	"context"
	"fmt"

	"github.com/fuscia/fuscia/plugin/sdk"
)

type empty struct{}

func main() {
	fmt.Println("hello from a chatty plugin")
	sdk.Serve(sdk.Plugin{Name: "badstdout", Version: "0.1.0", Tasks: []sdk.TaskDef{
		sdk.Task("noop", func(context.Context, *sdk.Call, empty) (empty, error) { return empty{}, nil }),
	}})
}

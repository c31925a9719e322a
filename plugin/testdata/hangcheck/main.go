// Command hangcheck is a Fuscia plugin that never answers a plan-time call and ignores its
// deadline, as a plugin whose Configure waits on a remote service forever might: installed as
// fuscia-plugin-hangschema it blocks in GetSchema; under any other name it answers its schema
// and blocks in Configure and ValidateInput. Fuscia must give up at its check timeout.
package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/fuscia/fuscia/plugin/sdk"
	"github.com/fuscia/fuscia/plugin/testdata/rawserve"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

type provider struct {
	pluginv1.UnimplementedProviderServer
}

func (provider) GetSchema(context.Context, *pluginv1.GetSchemaRequest) (*pluginv1.GetSchemaResponse, error) {
	name := strings.TrimPrefix(filepath.Base(os.Args[0]), "fuscia-plugin-")
	if name == "hangschema" {
		select {}
	}
	return &pluginv1.GetSchemaResponse{
		Name: name, Version: "0.1.0", ProtocolVersion: sdk.ProtocolVersion,
		Tasks: map[string]*pluginv1.TaskSchema{"t": {}},
	}, nil
}

func (provider) Configure(context.Context, *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	select {}
}

func (provider) ValidateInput(context.Context, *pluginv1.ValidateInputRequest) (*pluginv1.ValidateInputResponse, error) {
	select {}
}

func main() { rawserve.Serve(provider{}) }

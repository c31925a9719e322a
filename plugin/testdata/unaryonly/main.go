// Command unaryonly is a Fuscia plugin that serves the Provider service without
// ExecuteStream, as a plugin built from an older copy of the protocol or by another toolchain
// may: Fuscia must make its calls with the unary Execute. Its one task, "echo", answers its
// input as its output.
package main

import (
	"context"

	"github.com/fuscia/fuscia/plugin/sdk"
	"github.com/fuscia/fuscia/plugin/testdata/rawserve"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

type provider struct {
	pluginv1.UnimplementedProviderServer // no execute_stream: Fuscia calls Execute
}

func (provider) GetSchema(context.Context, *pluginv1.GetSchemaRequest) (*pluginv1.GetSchemaResponse, error) {
	return &pluginv1.GetSchemaResponse{
		Name: "unaryonly", Version: "0.1.0", ProtocolVersion: sdk.ProtocolVersion,
		Tasks: map[string]*pluginv1.TaskSchema{"echo": {}},
	}, nil
}

func (provider) Execute(_ context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	return &pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_SUCCESS, Output: req.Input}, nil
}

func main() { rawserve.Serve(provider{}) }

// Command stdoutflood is a Fuscia plugin whose task writes a short line, then 1 MiB without a
// newline, to its stdout (file descriptor 1, as a non-Go plugin printing would, not Go's
// redirected os.Stdout), then succeeds. The host must keep reading that pipe: a line over 64 KiB stopped go-plugin's reader,
// and the writes after it blocked the task until its timeout.
package main

import (
	"bytes"
	"context"
	"syscall"

	"github.com/fuscia/fuscia/plugin/sdk"
	"github.com/fuscia/fuscia/plugin/testdata/rawserve"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

type provider struct {
	pluginv1.UnimplementedProviderServer
}

func (provider) GetSchema(context.Context, *pluginv1.GetSchemaRequest) (*pluginv1.GetSchemaResponse, error) {
	return &pluginv1.GetSchemaResponse{
		Name: "stdoutflood", Version: "0.1.0", ProtocolVersion: sdk.ProtocolVersion,
		Tasks: map[string]*pluginv1.TaskSchema{"flood": {}},
	}, nil
}

func (provider) Execute(_ context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	if _, err := syscall.Write(1, []byte("hello from fd 1\n")); err != nil {
		return nil, err
	}
	chunk := bytes.Repeat([]byte("x"), 100<<10)
	for range 10 {
		for b := chunk; len(b) > 0; {
			n, err := syscall.Write(1, b)
			if err != nil {
				return nil, err
			}
			b = b[n:]
		}
	}
	return &pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_SUCCESS, Output: []byte(`{"flooded":true}`)}, nil
}

func main() { rawserve.Serve(provider{}) }

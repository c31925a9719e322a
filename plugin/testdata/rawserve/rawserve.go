// Package rawserve serves a Provider written on the raw protocol (not the SDK) as a Fuscia
// plugin, for the test plugins beside it that behave as the SDK never does.
package rawserve

import (
	"context"
	"errors"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fuscia/fuscia/plugin/sdk"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	provider pluginv1.ProviderServer
}

func (g grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterProviderServer(s, g.provider)
	return nil
}

func (grpcPlugin) GRPCClient(context.Context, *goplugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("plugin side only")
}

// Serve serves p with Fuscia's handshake until the host stops the process.
func Serve(p pluginv1.ProviderServer) {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: sdk.Handshake,
		Plugins:         goplugin.PluginSet{sdk.PluginKey: grpcPlugin{provider: p}},
		GRPCServer:      goplugin.DefaultGRPCServer,
	})
}

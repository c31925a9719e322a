package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fuscia/fuscia/plugin/internal/transport"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// Serve runs the plugin p and never returns. Call it from main, after building p.
//
// A p that cannot be served (no name, a task listed twice, a Validate option for another input
// type, ...) is reported on standard error and the process exits with status 1. Run by hand
// rather than by Fuscia, the binary says so and exits with status 1 too.
func Serve(p Plugin) {
	if err := p.check(); err != nil {
		fmt.Fprintf(os.Stderr, "fuscia plugin %q cannot be served:\n%v\n", p.Name, err)
		os.Exit(1)
	}
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         goplugin.PluginSet{PluginKey: &grpcPlugin{provider: newProvider(p)}},
		GRPCServer:      newGRPCServer,
	})
	// goplugin.Serve returns when the host closes the connection; the process has nothing
	// left to do.
	os.Exit(0)
}

// newGRPCServer adds the protocol's options (MaxMessageSize, fixed flow-control windows) to
// go-plugin's, as the host does, and stream workers.
func newGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, transport.ServerOptions()...)
	return grpc.NewServer(append(opts, grpc.NumStreamWorkers(streamWorkers))...)
}

// streamWorkers is how many goroutines of the plugin's server take its calls and keep their
// stacks between calls. Without them gRPC starts a goroutine per call, whose stack grows by
// copying, several times, on the way down through the handler to the task: 2.6% of the shell
// plugin's CPU, on the path from a request to the command's start (docs/performance.md, issue
// 20, session 14). A call that finds every worker busy still gets a goroutine of its own, so
// concurrency is not bounded by it. The host's own gRPC server (Host, on the broker) takes
// few calls and keeps gRPC's default.
const streamWorkers = 4

// grpcPlugin is the go-plugin side of the plugin: it registers the Provider service.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	provider *provider
}

var _ goplugin.GRPCPlugin = (*grpcPlugin)(nil)

// GRPCServer registers the provider; the broker is where the host serves Host.
func (g *grpcPlugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	g.provider.hosts.broker = broker
	pluginv1.RegisterProviderServer(s, g.provider)
	return nil
}

// GRPCClient is the host's half, which lives in package plugin.
func (g *grpcPlugin) GRPCClient(context.Context, *goplugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("sdk: the host side is in package plugin")
}

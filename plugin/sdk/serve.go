package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

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
	stderr := &processStderr{file: os.Stderr}
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         goplugin.PluginSet{PluginKey: &grpcPlugin{provider: newProvider(p)}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return newGRPCServer(append(opts, stderr.options()...))
		},
	})
	// goplugin.Serve returns when the host closes the connection; the process has nothing
	// left to do.
	os.Exit(0)
}

// processStderr gives os.Stderr back to the process's own stderr at the first RPC. go-plugin
// points os.Stderr at a pipe it streams to the host over gRPC, once it has printed its
// handshake and before it serves: what a plugin wrote there just before it exited (a line and
// os.Exit, a crash) was lost with the pipe, and the host's crash message and log missed it.
// The process's stderr is read by the host to its end before it reports the plugin's exit.
// The first RPC comes after go-plugin's switch, and every handler runs after the switch back.
type processStderr struct {
	file *os.File
	once sync.Once
}

func (p *processStderr) restore() { p.once.Do(func() { os.Stderr = p.file }) }

// options are the server options that restore os.Stderr before any handler runs.
func (p *processStderr) options() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			p.restore()
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			p.restore()
			return h(srv, ss)
		}),
	}
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

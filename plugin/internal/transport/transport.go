// Package transport holds the gRPC options both ends of the plugin protocol use: the host's
// client and broker server (package plugin) and the plugin's server and broker client
// (package plugin/sdk).
package transport

import "google.golang.org/grpc"

// MaxMessageSize is the largest message either side sends or accepts; sdk.MaxMessageSize
// says why it is this large.
const MaxMessageSize = 256 << 20

// Flow-control windows, fixed. With gRPC's default (a 64 KiB window grown by bandwidth-delay
// estimation) a receiver answers nearly every message of a call-and-answer exchange with a
// BDP ping, so each round trip carried two extra frames each way, with their syscalls and
// wake-ups on both sides; a window set explicitly turns the estimation off. Over a local
// socket the window only has to keep a large message (an artifact) from stalling.
const (
	streamWindow = 4 << 20
	connWindow   = 16 << 20
)

// ServerOptions are the options of a gRPC server of the protocol, appended to go-plugin's.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.InitialWindowSize(streamWindow), grpc.InitialConnWindowSize(connWindow),
	}
}

// DialOptions are the options of a gRPC client connection of the protocol.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)),
		grpc.WithInitialWindowSize(streamWindow), grpc.WithInitialConnWindowSize(connWindow),
	}
}

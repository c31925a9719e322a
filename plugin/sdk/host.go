package sdk

import (
	"errors"
	"fmt"
	"sync"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/fuscia/fuscia/plugin/internal/transport"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// errNoHost is the error of a host request from a Call that Serve did not make (a plugin's own
// unit test, for instance).
var errNoHost = errors.New("sdk: this call has no connection to Fuscia")

// hosts dials the Host service that Fuscia serves on its go-plugin broker. The host serves it
// once per plugin process under one broker id, and the broker hands out one connection per
// Accept, so the plugin dials each id once and shares the connection between calls.
type hosts struct {
	// broker is set once by grpcPlugin.GRPCServer, before the first RPC; read-only afterwards.
	broker *goplugin.GRPCBroker

	mu    sync.Mutex // guards links
	links map[uint32]*hostLink
}

// hostLink is the connection to the Host served under one broker id.
type hostLink struct {
	// mu guards client and is held while dialing, so that the calls that need the host first,
	// together, wait for one dial rather than race several.
	mu     sync.Mutex
	client pluginv1.HostClient // nil until a dial succeeds; a failed dial is tried again
}

// ref returns the way back to the host for the call callID, over broker id brokerID, and
// connects to the host if no call has yet.
//
// It connects as the call starts, not when the handler first needs the host: go-plugin's
// broker forgets the address the host announced for an id when nothing dials it within 5 s,
// and a handler may first log or use its KV minutes into a call. The host announces its id
// just before the process's first call that carries it. A failed dial is tried again, and
// reported, when the handler uses the host. Id 0 is no host (go-plugin's ids start at 1).
func (h *hosts) ref(brokerID uint32, callID string) hostRef {
	if brokerID != 0 {
		_, _ = h.client(brokerID)
	}
	return hostRef{callID: callID, client: func() (pluginv1.HostClient, error) { return h.client(brokerID) }}
}

func (h *hosts) client(brokerID uint32) (pluginv1.HostClient, error) {
	if h.broker == nil {
		return nil, errNoHost
	}
	h.mu.Lock()
	if h.links == nil {
		h.links = map[uint32]*hostLink{}
	}
	l := h.links[brokerID]
	if l == nil {
		l = &hostLink{}
		h.links[brokerID] = l
	}
	h.mu.Unlock()

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client != nil {
		return l.client, nil
	}
	conn, err := h.broker.DialWithOptions(brokerID, transport.DialOptions()...)
	if err != nil {
		return nil, fmt.Errorf("sdk: connect to Fuscia's host service (broker id %d): %w", brokerID, err)
	}
	l.client = pluginv1.NewHostClient(conn)
	return l.client, nil
}

// hostRef is one call's way back to the host. The zero hostRef has no host.
type hostRef struct {
	callID string
	client func() (pluginv1.HostClient, error) // nil: no host
	batch  *logBatch                           // nil: every line goes through Host.Log
}

func (h hostRef) get() (pluginv1.HostClient, error) {
	if h.client == nil {
		return nil, errNoHost
	}
	return h.client()
}

package local

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/fuscia/fuscia/engine/cluster"
)

// The cluster's workers as `fuscia serve -nats` reports them (GET /v1/workers,
// docs/reference/api.md): the answer's shape, the error of a serve that coordinates no
// cluster, and the client `fuscia workers list` uses. The endpoint itself is serve's.

// WorkerList is the answer of GET /v1/workers and what `fuscia workers list -json` prints.
type WorkerList struct {
	// Workers are the live workers (those whose heartbeat has not expired), by id; never nil.
	Workers []cluster.WorkerInfo `json:"workers"`
	// QueueDepth is, for each pool the coordinator knows, the attempts waiting for a worker.
	QueueDepth map[string]int64 `json:"queue_depth"`
}

// CodeNoCluster is the error code of GET /v1/workers on a serve started without -nats.
const CodeNoCluster = "no_cluster"

// ErrNoCluster is returned by ListWorkers when the serve that owns the store coordinates no
// cluster (it was started without -nats): it runs every attempt itself.
var ErrNoCluster = errors.New("this fuscia serve does not coordinate a cluster")

// ListWorkers asks the `fuscia serve` that owns home's store for its cluster's workers. It
// returns ErrNoServer when no process answers on the socket or the one that does is no serve
// (an apply or a resume), and an error wrapping ErrNoCluster when serve runs without -nats.
func ListWorkers(ctx context.Context, home string) (*WorkerList, error) {
	if !answers(ctx, filepath.Join(home, SocketName)) {
		return nil, ErrNoServer
	}
	c := newClient(home, nil)
	defer c.Close()
	var out WorkerList
	err := c.getJSON(ctx, "/v1/workers", &out)
	var ae *apiError
	if errors.As(err, &ae) && ae.noEndpoint {
		return nil, ErrNoServer
	}
	if err != nil {
		return nil, err
	}
	if out.Workers == nil {
		out.Workers = []cluster.WorkerInfo{}
	}
	if out.QueueDepth == nil {
		out.QueueDepth = map[string]int64{}
	}
	return &out, nil
}

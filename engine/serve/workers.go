package serve

import (
	"net/http"

	"github.com/fuscia/fuscia/engine/cluster"
	"github.com/fuscia/fuscia/engine/local"
)

// noClusterText is GET /v1/workers' error on a serve without -nats.
const noClusterText = "this fuscia serve does not coordinate a cluster: it runs every task attempt itself. Start it with -nats URL and -cluster-key-file FILE to run attempts on workers"

// listWorkers answers GET /v1/workers (`fuscia workers list`): the live workers of the
// cluster this serve coordinates and the attempts waiting for one, by pool (Config.Workers).
// A serve without a cluster answers 409 no_cluster: the request is right, the serve is not
// one that has workers.
func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Workers == nil {
		writeJSON(w, http.StatusConflict, map[string]string{"error": noClusterText, "code": local.CodeNoCluster})
		return
	}
	list, err := s.cfg.Workers(r.Context())
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": local.InternalError(s.logger, r, "cannot list the cluster's workers", err), "code": "internal"})
		return
	}
	if list.Workers == nil {
		list.Workers = []cluster.WorkerInfo{}
	}
	if list.QueueDepth == nil {
		list.QueueDepth = map[string]int64{}
	}
	writeJSON(w, http.StatusOK, list)
}

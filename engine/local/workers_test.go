package local

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestListWorkers: ListWorkers says ErrNoServer with no owner and with an owner that is no
// serve (an apply: no GET /v1/workers), ErrNoCluster on serve's no_cluster answer, and decodes
// the list, with empty lists and maps rather than nil.
func TestListWorkers(t *testing.T) {
	ctx := context.Background()
	if _, err := ListWorkers(ctx, shortHome(t)); !errors.Is(err, ErrNoServer) {
		t.Errorf("no owner: %v, want ErrNoServer", err)
	}

	apply := shortHome(t)
	ownWith(t, apply, OwnerConfig{})
	if _, err := ListWorkers(ctx, apply); !errors.Is(err, ErrNoServer) {
		t.Errorf("an owner without the endpoint: %v, want ErrNoServer", err)
	}

	plain := shortHome(t)
	ownWith(t, plain, OwnerConfig{Extend: func(mux *http.ServeMux) {
		mux.HandleFunc("GET /v1/workers", func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, http.StatusConflict, CodeNoCluster, "this fuscia serve does not coordinate a cluster")
		})
	}})
	if _, err := ListWorkers(ctx, plain); !errors.Is(err, ErrNoCluster) {
		t.Errorf("a serve without -nats: %v, want ErrNoCluster", err)
	}

	clustered := shortHome(t)
	ownWith(t, clustered, OwnerConfig{Extend: func(mux *http.ServeMux) {
		mux.HandleFunc("GET /v1/workers", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"workers": [{"id": "w1", "host": "h", "pools": ["gpu"], "concurrency": 3, "running": 1,
				"last_heartbeat": "2026-11-30T10:00:00Z", "version": "1.2.3", "disabled": {"gpu": "plugin_missing"}}],
				"queue_depth": {"gpu": 4}}`))
		})
	}})
	list, err := ListWorkers(ctx, clustered)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Workers) != 1 || list.QueueDepth["gpu"] != 4 {
		t.Fatalf("list = %+v", list)
	}
	w := list.Workers[0]
	beat := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	if w.ID != "w1" || w.Host != "h" || len(w.Pools) != 1 || w.Pools[0] != "gpu" || w.Concurrency != 3 ||
		w.Running != 1 || !w.LastHeartbeat.Equal(beat) || w.Version != "1.2.3" || w.Disabled["gpu"] != "plugin_missing" {
		t.Errorf("worker = %+v", w)
	}

	empty := shortHome(t)
	ownWith(t, empty, OwnerConfig{Extend: func(mux *http.ServeMux) {
		mux.HandleFunc("GET /v1/workers", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{}`))
		})
	}})
	list, err = ListWorkers(ctx, empty)
	if err != nil || list.Workers == nil || list.QueueDepth == nil {
		t.Errorf("an empty answer = %+v, %v; want an empty list and map", list, err)
	}
}

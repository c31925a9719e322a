package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/cluster"
	"github.com/fuscia/fuscia/engine/local"
)

// TestListWorkers: GET /v1/workers answers Config.Workers' list, 409 no_cluster on a serve
// without a cluster, and 500 when the cluster cannot be asked.
func TestListWorkers(t *testing.T) {
	beat := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		workers  func(context.Context) (local.WorkerList, error)
		status   int
		wantBody string
	}{
		{
			name: "no cluster", status: http.StatusConflict,
			wantBody: `{"code": "no_cluster", "error": "` + noClusterText + `"}`,
		},
		{
			name: "workers", status: http.StatusOK,
			workers: func(context.Context) (local.WorkerList, error) {
				return local.WorkerList{
					Workers: []cluster.WorkerInfo{{ID: "w1", Host: "gpu-1", Pools: []string{"gpu"}, Concurrency: 4,
						Running: 1, LastHeartbeat: beat, Version: "1.2.3", Started: beat}},
					QueueDepth: map[string]int64{"default": 0, "gpu": 2},
				}, nil
			},
			wantBody: `{"workers": [{"id": "w1", "host": "gpu-1", "pools": ["gpu"], "concurrency": 4, "running": 1,
				"last_heartbeat": "2026-11-30T10:00:00Z", "version": "1.2.3", "started": "2026-11-30T10:00:00Z"}],
				"queue_depth": {"default": 0, "gpu": 2}}`,
		},
		{
			name: "no worker yet", status: http.StatusOK,
			workers:  func(context.Context) (local.WorkerList, error) { return local.WorkerList{}, nil },
			wantBody: `{"workers": [], "queue_depth": {}}`,
		},
		{
			name: "nats fails", status: http.StatusInternalServerError,
			workers: func(context.Context) (local.WorkerList, error) {
				return local.WorkerList{}, errors.New("nats: timeout")
			},
			wantBody: `{"code": "internal", "error": "cannot list the cluster's workers (an internal error; the server's log has its details under ref=REF)"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Workers: tc.workers})
			mux := http.NewServeMux()
			s.RegisterAPI(mux)
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/workers", nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			var got, want any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("answer is not JSON: %v: %s", err, rec.Body)
			}
			if err := json.Unmarshal([]byte(tc.wantBody), &want); err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(got)
			gb = regexp.MustCompile(`ref=[0-9a-f]{12}`).ReplaceAll(gb, []byte("ref=REF"))
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Errorf("answer\n%s\nwant\n%s", gb, wb)
			}
		})
	}
}

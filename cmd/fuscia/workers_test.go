package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/cluster"
	"github.com/fuscia/fuscia/engine/local"
)

// TestWorkersText pins `fuscia workers list`'s text: the table (serve's own worker marked,
// heartbeats as ages), the pools a worker stopped taking, and the attempts waiting by pool.
func TestWorkersText(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 10, 0, time.UTC)
	for _, tc := range []struct {
		name string
		list local.WorkerList
		want string
	}{
		{
			name: "workers",
			list: local.WorkerList{
				Workers: []cluster.WorkerInfo{
					{ID: "gpu-1-7-aa", Host: "gpu-1", Pools: []string{"gpu", "ml"}, Concurrency: 8, Running: 3,
						LastHeartbeat: now.Add(-4 * time.Second), Version: "1.2.0", Disabled: map[string]string{"ml": "plugin fuscia-plugin-ml is missing"}},
					{ID: "vm-9-bb", Host: "vm", Pools: []string{"default"}, Concurrency: 2,
						LastHeartbeat: now.Add(-1500 * time.Millisecond), Version: "1.2.0", Local: true},
				},
				QueueDepth: map[string]int64{"gpu": 5, "default": 0},
			},
			want: `ID          HOST           POOLS    CONCURRENCY  RUNNING  LAST HEARTBEAT  VERSION
gpu-1-7-aa  gpu-1          gpu,ml   8            3        4s ago          1.2.0
vm-9-bb     vm (in serve)  default  2            0        1s ago          1.2.0

Worker gpu-1-7-aa stopped taking pool ml until it restarts: plugin fuscia-plugin-ml is missing

Attempts waiting for a worker:
  POOL     WAITING
  default  0
  gpu      5
`,
		},
		{
			name: "none",
			list: local.WorkerList{Workers: []cluster.WorkerInfo{}, QueueDepth: map[string]int64{"default": 1}},
			want: `No live workers. Start one with: fuscia worker -nats URL -cluster-key-file FILE [-pool NAME]

Attempts waiting for a worker:
  POOL     WAITING
  default  1
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writeWorkers(&b, &tc.list, now)
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
